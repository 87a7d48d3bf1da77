#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

import Synchronization

/// A value that many threads read at once and one thread at a time changes: a readers–writer lock around it.
///
/// Reads of the hot indexes take tens of microseconds and are by far the most common use, so they share the
/// lock; a `Mutex` would make every read wait for the one before it.
public final class SharedIndex<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = UnsafeMutablePointer<pthread_rwlock_t>.allocate(capacity: 1)

    public init(_ value: Value) {
        self.value = value
        lock.initialize(to: pthread_rwlock_t())
        pthread_rwlock_init(lock, nil)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    public func read<Result>(_ body: (borrowing Value) throws -> Result) rethrows -> Result {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body(value)
    }

    public func write<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body(&value)
    }
}

/// Runs async operations one at a time, in the order they arrive: what keeps an index's changes in the order
/// its store committed them, when each change awaits the store in between.
public final class SerialGate: Sendable {
    private struct State {
        var busy = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    public init() {}

    public func run<Result: Sendable>(_ body: () async throws -> Result) async rethrows -> Result {
        await enter()
        defer { leave() }
        return try await body()
    }

    /// Waits for its turn; `leave()` ends it. For holding several gates at once (`run` holds one).
    public func enter() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state in
                if state.busy {
                    state.waiting.append(continuation)
                    return false
                }
                state.busy = true
                return true
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// Takes the turn when nobody holds it or waits for it, without waiting: true when taken, and `leave()`
    /// ends it.
    public func tryEnter() -> Bool {
        state.withLock { state in
            guard !state.busy else { return false }
            state.busy = true
            return true
        }
    }

    public func leave() {
        let next = state.withLock { state in
            if state.waiting.isEmpty {
                state.busy = false
                return nil as CheckedContinuation<Void, Never>?
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
