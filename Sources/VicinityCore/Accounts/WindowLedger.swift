import Synchronization

/// Which sliding-window limits a ledger keeps: each has its own keys.
public enum WindowScope: String, Hashable, Sendable, CaseIterable {
    case signUps = "sign-ups"
    case voteOpenings = "vote-openings"
    case pokes = "pokes"
    case voteLookups = "vote-lookups"
    case voteLookupsFromAddress = "vote-lookups-from-address"
    case codesForAccount = "codes-for-account"
    case codesToAddress = "codes-to-address"
    case codesFromClient = "codes-from-client"
    case deviceReports = "device-reports"
    case friendRequests = "friend-requests"
    case visibilityNotices = "visibility-notices"
}

/// What a ledger holds for one key of a window limit: the events within the window, in milliseconds since
/// 1970, as every time the ledger keeps.
public struct WindowState: Codable, Hashable, Sendable {
    /// When each event within the window happened, oldest first.
    public var events: [Int64] = []

    public init() {}

    /// No event within the window.
    var isClear: Bool { events.isEmpty }

    /// Drops events older than the window.
    public mutating func tidy(at now: Timestamp, window: Duration) {
        let cutoff = now.millisecondsSince1970 - window.wholeMilliseconds
        events.removeAll { $0 <= cutoff }
    }

    /// How long until the rule allows another event; nil when it does now.
    func wait(under rule: RateLimit, at now: Timestamp) -> Duration? {
        rule.wait(after: events.map(Timestamp.init(millisecondsSince1970:)), now: now)
    }

    mutating func add(at now: Timestamp) {
        events.insertInOrder(now.millisecondsSince1970)
    }

    /// When the state holds nothing a step would still read: a ledger may drop it after then.
    public func keptUntil(window: Duration) -> Int64 {
        (events.last ?? 0) + window.wholeMilliseconds
    }
}

extension Array where Element == Int64 {
    /// Inserts a time keeping the times sorted, as `RateLimit.wait` reads them: processes whose clocks
    /// disagree may add out of order.
    mutating func insertInOrder(_ ms: Int64) {
        insert(ms, at: firstIndex { $0 > ms } ?? endIndex)
    }
}

/// One key of a window limit, with the window its events are kept for.
public struct WindowKey: Hashable, Sendable {
    public let scope: WindowScope
    public let key: String
    public let window: Duration

    public init(_ scope: WindowScope, _ key: String, window: Duration) {
        self.scope = scope
        self.key = key
        self.window = window
    }
}

/// Where sliding-window limits count their events (at most `RateLimit.limit` in any `RateLimit.window` per
/// key), so that every process sharing the ledger counts together.
///
/// What a conforming ledger guarantees, however many processes share it: the steps on one key run one at a
/// time, each on the state the one before left, so that events allowed at the same moment through different
/// processes never pass the limit between them. A step on several keys sees and leaves them all at once.
public protocol WindowLedger: Sendable {
    /// Runs `step` on the states of `keys` (distinct, in their order), each tidied for `now`, and keeps what
    /// it leaves; no other step on any of the keys, in any process, runs between its read and its write.
    func withWindows<Value: Sendable>(
        _ keys: [WindowKey], at now: Timestamp, _ step: @escaping @Sendable (inout [WindowState]) -> Value
    ) async throws -> Value
}

extension WindowLedger {
    /// `withWindows` for one key.
    public func withWindow<Value: Sendable>(
        _ scope: WindowScope, key: String, window: Duration, at now: Timestamp,
        _ step: @escaping @Sendable (inout WindowState) -> Value
    ) async throws -> Value {
        try await withWindows([WindowKey(scope, key, window: window)], at: now) { states in step(&states[0]) }
    }

    /// Counts an event of `key` and returns nil when the rule allows one now; otherwise counts nothing and
    /// returns how long until it would.
    public func acquire(_ scope: WindowScope, key: String, rule: RateLimit, at now: Timestamp) async throws -> Duration? {
        try await withWindow(scope, key: key, window: rule.window, at: now) { state in
            if let wait = state.wait(under: rule, at: now) { return wait }
            state.add(at: now)
            return nil
        }
    }
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

    public func withWindows<Value: Sendable>(
        _ keys: [WindowKey], at now: Timestamp, _ step: @escaping @Sendable (inout [WindowState]) -> Value
    ) async throws -> Value {
        book.withLock { book in
            book.sinceSweep += 1
            if book.sinceSweep >= 4096 {
                book.sinceSweep = 0
                let ms = now.millisecondsSince1970
                for scope in book.states.keys { book.states[scope] = book.states[scope]?.filter { $0.value.keptUntil > ms } }
            }
            var states = keys.map { key in
                var state = book.states[key.scope]?[key.key]?.state ?? WindowState()
                state.tidy(at: now, window: key.window)
                return state
            }
            let value = step(&states)
            for (key, state) in zip(keys, states) {
                book.states[key.scope, default: [:]][key.key] = (state, state.keptUntil(window: key.window))
            }
            return value
        }
    }

    /// How many keys the ledger holds: for tests of the sweep.
    public var keyCount: Int { book.withLock { $0.states.values.reduce(0) { $0 + $1.count } } }
}
