extension Array {
    /// The elements in order, `size` at a time (the last chunk may be shorter): for lists of keys or rows split
    /// to stay under what one statement of a database takes.
    public func chunks(of size: Int) -> [ArraySlice<Element>] {
        precondition(size > 0, "a chunk holds an element at least")
        return stride(from: 0, to: count, by: size).map { self[$0..<Swift.min(count, $0 + size)] }
    }
}
