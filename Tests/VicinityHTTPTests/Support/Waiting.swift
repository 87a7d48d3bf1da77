import Synchronization

/// A wait for something the server signals that did not end in time.
struct NotInTime: Error, CustomStringConvertible {
    var what: String
    var limit: Duration

    var description: String { "waited \(limit) for \(what) in vain" }
}

/// Runs `body`, a wait for something the code under test signals, and returns what it returns; once `limit` has
/// passed, cancels it and throws `NotInTime`, so that a signal that never comes fails the test instead of
/// holding the suite. The default is far beyond what a busy machine takes: no test measures how fast anything
/// was.
func waiting<Value: Sendable>(
    for what: String, atMost limit: Duration = .seconds(60), _ body: @escaping @Sendable () async throws -> Value
) async throws -> Value {
    try await withThrowingTaskGroup(of: Value?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            // The deadline's timer, not a wait for the thing itself.
            try await Task.sleep(for: limit)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw NotInTime(what: what, limit: limit) }
        return value
    }
}

/// A value that the code under test changes, and waits for it to reach a state: each change wakes the waits
/// whose condition then holds, so that nothing asks again and again.
final class Watched<Value: Sendable>: Sendable {
    private struct Waiter {
        var condition: @Sendable (Value) -> Bool
        var continuation: CheckedContinuation<Value, any Error>
    }

    private struct State {
        var value: Value
        var waiters: [Int: Waiter] = [:]
        var nextID = 0
    }

    private let state: Mutex<State>

    init(_ value: Value) { state = Mutex(State(value: value)) }

    var value: Value { state.withLock { $0.value } }

    func update(_ change: (inout Value) -> Void) {
        let woken: [(CheckedContinuation<Value, any Error>, Value)] = state.withLock { state in
            change(&state.value)
            let value = state.value
            let ready = state.waiters.filter { $0.value.condition(value) }
            for id in ready.keys { state.waiters[id] = nil }
            return ready.values.map { ($0.continuation, value) }
        }
        for (continuation, value) in woken { continuation.resume(returning: value) }
    }

    /// The value once `condition` holds of it (at once if it does already); throws `CancellationError` when the
    /// task is cancelled first. Bound it with `waiting(for:)`.
    func wait(until condition: @escaping @Sendable (Value) -> Bool) async throws -> Value {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let now: Result<Value, any Error>? = state.withLock { state in
                    if condition(state.value) { return .success(state.value) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiters[id] = Waiter(condition: condition, continuation: continuation)
                    return nil
                }
                if let now { continuation.resume(with: now) }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(throwing: CancellationError())
        }
    }
}
