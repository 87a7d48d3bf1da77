import Synchronization

/// Values read from the record, held in memory by key, so that reading a held key asks the record nothing. The
/// one mechanism behind the account summaries and the friendships a front holds (`HeldAccounts`,
/// `HeldFriendships`).
///
/// Its invariants:
/// - a key is held until a change names it: this process's own write once the record has committed it, another
///   process's when the change feed brings it (`IndexedStores.follow`), so a copy is at most as old as the feed's
///   lag;
/// - a read holds what it found only if nothing was forgotten while it read, so a read that began before a change
///   never brings the old value back after the change was forgotten;
/// - at most `capacity` keys are held; past that, an arbitrary one makes room. With a capacity of 0 every read
///   goes to the record.
public final class HeldCopies<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct Book {
        var values: [Key: Value] = [:]
        /// Raised at every forgetting.
        var forgettings = 0
    }

    public let capacity: Int
    private let book = Mutex(Book())

    public init(capacity: Int) {
        self.capacity = capacity
    }

    /// How many keys are held.
    public var count: Int { book.withLock { $0.values.count } }

    /// The values of `keys`: those held, and the rest as `read` finds them (keys it leaves out have no value
    /// and are read again next time).
    public func values(of keys: [Key], read: ([Key]) async throws -> [Key: Value]) async throws -> [Key: Value] {
        guard capacity > 0 else { return try await read(keys) }
        var (found, missing, forgettings): ([Key: Value], [Key], Int) = ([:], [], 0)
        book.withLock { book in
            for key in keys {
                if let value = book.values[key] { found[key] = value } else { missing.append(key) }
            }
            forgettings = book.forgettings
        }
        guard !missing.isEmpty else { return found }
        let fresh = try await read(missing)
        book.withLock { book in
            guard book.forgettings == forgettings else { return }
            for (key, value) in fresh {
                if book.values[key] == nil, book.values.count >= capacity, let any = book.values.keys.first {
                    book.values[any] = nil
                }
                book.values[key] = value
            }
        }
        found.merge(fresh) { _, new in new }
        return found
    }

    /// These keys changed: the next read of each reads the record.
    public func forget(_ keys: some Sequence<Key>) {
        book.withLock { book in
            book.forgettings += 1
            for key in keys { book.values[key] = nil }
        }
    }

    /// Forgets everything held: for a follower that fell behind what the feed keeps.
    public func forgetAll() {
        book.withLock { book in
            book = Book(forgettings: book.forgettings + 1)
        }
    }
}
