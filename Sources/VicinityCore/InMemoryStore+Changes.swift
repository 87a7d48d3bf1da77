import Synchronization

/// The changes an `InMemoryStore` has made, numbered in the order they were made, which is the order they
/// took effect: every change is made under the store's one lock.
struct ChangeLog {
    struct Entry {
        var number: Int
        var time: Timestamp
        var change: Change
    }

    var entries: [Entry] = []
    var lastNumber = 0
    /// The newest number pruned.
    var prunedThrough = 0

    mutating func note(_ changes: [Change], at time: Timestamp) {
        for change in changes {
            lastNumber += 1
            entries.append(Entry(number: lastNumber, time: time, change: change))
        }
    }
}

extension InMemoryStore: ChangeFeed {
    /// The number of the last change read.
    public func changeCursor() async throws -> Int {
        state.withLock { $0.changes.lastNumber }
    }

    public func changes(after cursor: Int) async throws -> ChangeRead<Int> {
        state.withLock { state in
            guard state.changes.prunedThrough <= cursor else { return .expired }
            let new = state.changes.entries.drop { $0.number <= cursor }
            return .changes(new.map(\.change), next: new.last?.number ?? cursor)
        }
    }

    public func waitForChanges(timeout: Duration) async throws {
        await changeSignal.wait(timeout: timeout)
    }

    public func pruneChanges(olderThan age: Duration) async throws -> Int {
        let time = SystemClock().now - age
        return state.withLock { state in
            let gone = state.changes.entries.prefix { $0.time < time }
            guard let last = gone.last else { return 0 }
            state.changes.prunedThrough = max(state.changes.prunedThrough, last.number)
            state.changes.entries.removeFirst(gone.count)
            return gone.count
        }
    }

    /// Runs `body` under the store's lock, notes the changes it returns, and wakes the feed's readers.
    func changing<Result>(_ body: (inout State) throws -> (Result, [Change])) rethrows -> Result {
        let (result, changed) = try state.withLock { state in
            let (result, changed) = try body(&state)
            state.changes.note(changed, at: SystemClock().now)
            return (result, changed)
        }
        if !changed.isEmpty { changeSignal.notify() }
        return result
    }
}
