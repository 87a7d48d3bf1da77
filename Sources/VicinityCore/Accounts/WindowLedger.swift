import Synchronization

/// Which sliding-window limits a ledger keeps: each has its own keys.
public enum WindowScope: String, Hashable, Sendable, CaseIterable {
    case signUps = "sign-ups"
    case voteOpenings = "vote-openings"
    case pokes = "pokes"
    case voteLookups = "vote-lookups"
    case voteLookupsFromAddress = "vote-lookups-from-address"
}

/// What a ledger holds for one key of a window limit: the events within the window and the places held for
/// events not decided yet. Times in milliseconds since 1970, as every time the ledger keeps.
public struct WindowState: Codable, Hashable, Sendable {
    /// When each event within the window happened, oldest first.
    public var events: [Int64] = []
    /// Places held (`WindowLedger.reserve`): when each stops counting.
    public var pending: [String: Int64] = [:]

    public init() {}

    /// Drops events older than the window and places whose time ran out.
    public mutating func tidy(at now: Timestamp, window: Duration) {
        let cutoff = now.millisecondsSince1970 - window.wholeMilliseconds
        events.removeAll { $0 <= cutoff }
        pending = pending.filter { $0.value > now.millisecondsSince1970 }
    }

    /// How long until the rule allows another event; nil when it does now.
    func wait(under rule: RateLimit, at now: Timestamp) -> Duration? {
        rule.wait(after: events.map(Timestamp.init(millisecondsSince1970:)), reserved: pending.count, now: now)
    }

    mutating func add(at now: Timestamp) {
        let ms = now.millisecondsSince1970
        // Sorted, for `RateLimit.wait`: processes whose clocks disagree may add out of order.
        events.insert(ms, at: events.firstIndex { $0 > ms } ?? events.endIndex)
    }

    /// When the state holds nothing a step would still read: a ledger may drop it after then.
    public func keptUntil(window: Duration) -> Int64 {
        max(pending.values.max() ?? 0, (events.last ?? 0) + window.wholeMilliseconds)
    }
}

/// A place held for an event whose outcome comes later: it counts against the limit until committed or
/// cancelled, or for `lifetime` when its process dies first.
public struct WindowReservation: Hashable, Sendable {
    public let id: String
    public let scope: WindowScope
    public let key: String

    /// How long a place counts without an end: far longer than what it waits for (a store read), so that
    /// only a process that died meanwhile leaves one to expire.
    public static let lifetime: Duration = .seconds(60)
}

/// Where sliding-window limits count their events (at most `RateLimit.limit` in any `RateLimit.window` per
/// key), so that every process sharing the ledger counts together.
///
/// What a conforming ledger guarantees, however many processes share it: the steps on one key run one at a
/// time, each on the state the one before left, so that events allowed at the same moment through different
/// processes never pass the limit between them.
public protocol WindowLedger: Sendable {
    /// Runs `step` on the state of `key`, tidied for `now`, and keeps what it leaves; no other step on the
    /// same key, in any process, runs between its read and its write.
    func withWindow<Value: Sendable>(
        _ scope: WindowScope, key: String, window: Duration, at now: Timestamp,
        _ step: @escaping @Sendable (inout WindowState) -> Value
    ) async throws -> Value
}

extension WindowLedger {
    /// Counts an event of `key` and returns nil when the rule allows one now; otherwise counts nothing and
    /// returns how long until it would.
    public func acquire(_ scope: WindowScope, key: String, rule: RateLimit, at now: Timestamp) async throws -> Duration? {
        try await withWindow(scope, key: key, window: rule.window, at: now) { state in
            if let wait = state.wait(under: rule, at: now) { return wait }
            state.add(at: now)
            return nil
        }
    }

    /// Holds a place for an event of `key` whose outcome is not known yet, or, when events and places already
    /// fill the limit, holds none and says how long to wait; either way says whether the key held nothing
    /// before, decided in the same step, so that concurrent callers cannot all find it clear.
    public func reserve(
        _ scope: WindowScope, key: String, rule: RateLimit, at now: Timestamp
    ) async throws -> (reservation: Result<WindowReservation, WindowRefusal>, wasClear: Bool) {
        let id = GuessingBook.newAttemptID()
        let expires = (now + WindowReservation.lifetime).millisecondsSince1970
        return try await withWindow(scope, key: key, window: rule.window, at: now) { state in
            let wasClear = state.events.isEmpty && state.pending.isEmpty
            if let wait = state.wait(under: rule, at: now) { return (.failure(WindowRefusal(wait: wait)), wasClear) }
            state.pending[id] = expires
            return (.success(WindowReservation(id: id, scope: scope, key: key)), wasClear)
        }
    }

    /// The reserved event happened: it counts now, in place of its place.
    public func commit(_ reservation: WindowReservation, rule: RateLimit, at now: Timestamp) async throws {
        try await withWindow(reservation.scope, key: reservation.key, window: rule.window, at: now) { state in
            state.pending[reservation.id] = nil
            state.add(at: now)
        }
    }

    /// The reserved event did not happen: its place is free again.
    public func cancel(_ reservation: WindowReservation, rule: RateLimit, at now: Timestamp) async throws {
        try await withWindow(reservation.scope, key: reservation.key, window: rule.window, at: now) { state in
            state.pending[reservation.id] = nil
        }
    }

    /// Counts an event of `key` whatever the count, for an event let through without a place.
    public func record(_ scope: WindowScope, key: String, rule: RateLimit, at now: Timestamp) async throws {
        try await withWindow(scope, key: key, window: rule.window, at: now) { state in state.add(at: now) }
    }
}

/// A limit that refused: how long until it would not.
public struct WindowRefusal: Error, Hashable, Sendable {
    public let wait: Duration

    public init(wait: Duration) { self.wait = wait }
}

/// A window ledger in this process's memory: what SQLite deployments (a single server) and tests use. A
/// restart forgets it, which lets nobody through faster than waiting for the window would. Keys that hold
/// nothing any more are swept every few thousand steps, so memory follows the keys active within a window.
public final class MemoryWindowLedger: WindowLedger {
    private struct Book {
        var states: [WindowScope: [String: (state: WindowState, keptUntil: Int64)]] = [:]
        var sinceSweep = 0
    }

    private let book = Mutex(Book())

    public init() {}

    public func withWindow<Value: Sendable>(
        _ scope: WindowScope, key: String, window: Duration, at now: Timestamp,
        _ step: @escaping @Sendable (inout WindowState) -> Value
    ) async throws -> Value {
        book.withLock { book in
            book.sinceSweep += 1
            if book.sinceSweep >= 4096 {
                book.sinceSweep = 0
                let ms = now.millisecondsSince1970
                for scope in book.states.keys { book.states[scope] = book.states[scope]?.filter { $0.value.keptUntil > ms } }
            }
            var state = book.states[scope]?[key]?.state ?? WindowState()
            state.tidy(at: now, window: window)
            let value = step(&state)
            book.states[scope, default: [:]][key] = (state, state.keptUntil(window: window))
            return value
        }
    }

    /// How many keys the ledger holds: for tests of the sweep.
    public var keyCount: Int { book.withLock { $0.states.values.reduce(0) { $0 + $1.count } } }
}
