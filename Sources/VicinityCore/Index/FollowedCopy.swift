/// A copy in memory of what a store of record holds, kept in step with it.
///
/// Changes made through the copy reach memory after the record commits them, one at a time in commit order.
/// Every write to the record raises its revision, also when another process writes (`vicinity import` while
/// the server runs): a revision the copy did not expect makes `refreshIfStale()` load the copy again.
final class FollowedCopy<Value: Sendable>: Sendable {
    private struct Snapshot: Sendable {
        var value: Value
        /// The record's revision this copy reflects; nil when it reflects none for sure and must reload.
        var revision: Int?
    }

    private let held: SharedIndex<Snapshot>
    private let writes = SerialGate()
    private let revision: @Sendable () async throws -> Int
    private let load: @Sendable () async throws -> Value

    /// Loads the copy with `load`; `revision` reads the record's revision.
    init(revision: @escaping @Sendable () async throws -> Int, load: @escaping @Sendable () async throws -> Value) async throws {
        self.revision = revision
        self.load = load
        held = SharedIndex(try await Self.snapshot(revision: revision, load: load))
    }

    private static func snapshot(
        revision: @Sendable () async throws -> Int, load: @Sendable () async throws -> Value
    ) async throws -> Snapshot {
        // The revision is read before the value: a write in between makes the copy look older than it is,
        // which costs a needless reload, never a missed one.
        let current = try await revision()
        return Snapshot(value: try await load(), revision: current)
    }

    func read<Result>(_ body: (Value) -> Result) -> Result {
        held.read { body($0.value) }
    }

    /// Loads the copy again when the record changed in a way it did not see. Returns whether it reloaded.
    func refreshIfStale() async throws -> Bool {
        try await writes.run {
            guard try await revision() != held.read({ $0.revision }) else { return false }
            var fresh = try await Self.snapshot(revision: revision, load: load)
            held.write { swap(&$0, &fresh) }
            // `fresh` holds the old copy now, freed here, after the lock: readers (on the event loops too,
            // `HeldPlaceReads`) wait for the swap only, not for a million places to be let go.
            _ = consume fresh
            return true
        }
    }

    /// Runs `change` against the record and, once it has committed, `apply` to the copy.
    func change<Result: Sendable>(
        _ change: () async throws -> Result, apply: (inout Value) -> Void
    ) async throws -> Result {
        try await writes.run {
            let before = held.read { $0.revision }
            let result = try await change()
            let after = try? await revision()
            held.write { snapshot in
                apply(&snapshot.value)
                // One step from the revision held means this change alone; any other gap is a write this copy
                // has not seen, which `refreshIfStale` will load.
                snapshot.revision = before.flatMap { before in after == before + 1 ? after : nil }
            }
            return result
        }
    }
}
