/// Ids in the order they joined, oldest first: appending, removing any one and reading the oldest each take
/// constant time, so that a full server finds the connection to close without looking at every other one.
///
/// A doubly linked list threaded through a dictionary. Joining is always "now", so the order of joining is the
/// order of age and nothing needs sorting.
struct AgeQueue: Sendable {
    private struct Link: Sendable {
        var older: Int?
        var newer: Int?
    }

    private var links: [Int: Link] = [:]
    /// The id that joined first of those still here.
    private(set) var oldest: Int?
    private var newest: Int?

    var count: Int { links.count }

    func contains(_ id: Int) -> Bool { links[id] != nil }

    /// Adds `id` as the newest; an id already here is moved to the newest place.
    mutating func append(_ id: Int) {
        remove(id)
        links[id] = Link(older: newest, newer: nil)
        if let newest { links[newest]?.newer = id } else { oldest = id }
        newest = id
    }

    /// Takes `id` out; nothing happens when it is not here.
    mutating func remove(_ id: Int) {
        guard let link = links.removeValue(forKey: id) else { return }
        if let older = link.older { links[older]?.newer = link.newer } else { oldest = link.newer }
        if let newer = link.newer { links[newer]?.older = link.older } else { newest = link.older }
    }
}
