/// A value APNs cannot use, said in words: a key file, a key or team identifier, a device token or a topic.
public struct APNsProblem: Error, Hashable, Sendable, CustomStringConvertible {
    public var description: String

    init(_ description: String) {
        self.description = description
    }
}
