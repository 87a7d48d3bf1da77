import Synchronization
import VicinityCore

/// Group commit: writes of one kind that arrive while others are being written wait for them and then go
/// together, as one plan (`together`: one transaction, and where it can one statement for all their rows)
/// instead of one transaction each. A write that finds nothing under way goes at once, in a group of its own;
/// the busier the store, the larger the groups, and the fewer round trips, commits and flushes per write.
///
/// What holds, whatever the load:
/// - A write returns only once the commit that holds it has returned: its success means what a transaction
///   of its own would mean, durable included, and its output is what its own plan would have given.
/// - At most `concurrent` groups are written at once, each of at most `largest` writes; writes arriving
///   meanwhile wait for the next group, in the order they came.
/// - A group the store refuses is written again one write at a time (`together` of one), so a write fails
///   only for a reason of its own; all fail at once when the store is unavailable, which each alone would
///   only wait to learn, and so do the writes waiting for the next group: none waits longer than a write alone.
public final class GroupCommit<Item: Sendable, Output: Sendable>: Sendable {
    private struct Waiting {
        let item: Item
        let done: CheckedContinuation<Output, any Error>
    }

    private struct State {
        var waiting: [Waiting] = []
        var writing = 0
    }

    private let state = Mutex(State())
    /// One plan for the writes of a group, in the order they came, giving each one's output in that order.
    private let together: @Sendable ([Item]) -> SQLPlan<[Output]>
    public let largest: Int
    public let concurrent: Int

    public init(largest: Int, concurrent: Int, together: @escaping @Sendable ([Item]) -> SQLPlan<[Output]>) {
        precondition(largest > 0 && concurrent > 0, "a group holds a write and one is written at a time at least")
        self.largest = largest
        self.concurrent = concurrent
        self.together = together
    }

    /// How many writes wait for a group.
    public var waiting: Int { state.withLock { $0.waiting.count } }

    /// Writes `item` with whichever group takes it.
    public func write(_ item: Item, via runner: some SQLPlanRunner) async throws -> Output {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Output, any Error>) in
            let leads = state.withLock { state in
                state.waiting.append(Waiting(item: item, done: done))
                guard state.writing < concurrent else { return false }
                state.writing += 1
                return true
            }
            if leads { Task { await self.writeGroups(via: runner) } }
        }
    }

    /// Writes groups until nobody waits.
    private func writeGroups(via runner: some SQLPlanRunner) async {
        while let group = nextGroup() {
            await write(group, via: runner)
        }
    }

    private func nextGroup() -> [Waiting]? {
        state.withLock { state in
            guard !state.waiting.isEmpty else {
                state.writing -= 1
                return nil
            }
            let group = Array(state.waiting.prefix(largest))
            state.waiting.removeFirst(group.count)
            return group
        }
    }

    private func write(_ group: [Waiting], via runner: some SQLPlanRunner) async {
        do {
            let outputs = try await runner.run(together(group.map(\.item)), access: .write)
            guard outputs.count == group.count else {
                throw StoreError.database("a group commit's plan gave \(outputs.count) outputs for \(group.count) writes")
            }
            for (waiting, output) in zip(group, outputs) { waiting.done.resume(returning: output) }
        } catch StoreError.unavailable(let reason) {
            // The writes waiting for the next group fail with it: each would wait again for a connection the
            // store has just said it lacks, and answer after twice the wait of a write alone.
            let behind = state.withLock { state in
                defer { state.waiting = [] }
                return state.waiting
            }
            for waiting in group + behind { waiting.done.resume(throwing: StoreError.unavailable(reason)) }
        } catch {
            guard group.count > 1 else { return group[0].done.resume(throwing: error) }
            for waiting in group {
                do {
                    let outputs = try await runner.run(together([waiting.item]), access: .write)
                    guard let output = outputs.first else { throw StoreError.database("a group commit's plan gave no output") }
                    waiting.done.resume(returning: output)
                } catch {
                    waiting.done.resume(throwing: error)
                }
            }
        }
    }
}
