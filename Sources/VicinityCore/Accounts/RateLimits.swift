import Synchronization

/// At most `limit` events in any `window`.
public struct RateLimit: Hashable, Sendable {
    public var limit: Int
    public var window: Duration

    public init(limit: Int, window: Duration) {
        precondition(limit > 0 && window > .zero, "a rate limit needs a positive count and window")
        self.limit = limit
        self.window = window
    }

    /// How long after `now` another event is allowed, given the events within the window (oldest first) and
    /// those reserved but not yet decided; nil when one is allowed now. While reservations alone fill the
    /// limit, the wait is a second: about what deciding one takes.
    func wait(after times: [Timestamp], reserved: Int = 0, now: Timestamp) -> Duration? {
        guard times.count + reserved >= limit else { return nil }
        let firstToAge = times.count + reserved - limit
        return firstToAge < times.count ? (times[firstToAge] + window) - now : .seconds(1)
    }
}

/// One sliding-window limit (`rule`) per key, counted in a `WindowLedger`: the store's, so that several
/// servers over one database share one count. Reads time from a `WallClock`.
public struct WindowLimit<Ledger: WindowLedger>: Sendable {
    public let rule: RateLimit
    public let scope: WindowScope
    public let ledger: Ledger
    private let clock: any WallClock

    public init(_ rule: RateLimit, scope: WindowScope, clock: any WallClock, ledger: Ledger) {
        self.rule = rule
        self.scope = scope
        self.clock = clock
        self.ledger = ledger
    }

    /// Counts an event of `key` and returns nil when the limit allows it; otherwise counts nothing and
    /// returns how long until it would be allowed.
    public func acquire(_ key: String) async throws -> Duration? {
        try await ledger.acquire(scope, key: key, rule: rule, at: clock.now)
    }
}

/// The rules against password guessing: at sign-in, per account; at a ballot, per person and vote.
public struct GuessingRules: Hashable, Sendable {
    /// Failures after which further failures are answered more slowly: one `slowdownStep` more per failure,
    /// counted afresh after each lock.
    public var failuresBeforeSlowdown: Int
    public var slowdownStep: Duration
    /// Consecutive failures that lock the account; every further `failuresPerLock` failures lock it again,
    /// for twice as long each time, up to `longestLock`.
    public var failuresPerLock: Int
    public var firstLock: Duration
    public var longestLock: Duration
    /// An account's failures are forgotten after this long without one.
    public var failureMemory: Duration
    /// Failed sign-ins allowed from one client address, over every account. Successful sign-ins do not count,
    /// so a classroom behind one campus NAT signs in at once; checks still under way count until decided, so
    /// past this many at the same instant the rest wait a second.
    public var failuresPerAddress: RateLimit

    /// 2 free failures (typos), then answers slowed by 1 s, 2 s; the 5th failure locks the account for
    /// 15 minutes (the right password is refused too), the 10th for 30, and so on up to a day. 100 failures
    /// per address in 15 minutes: a classroom's worth of typos, far below what guessing needs.
    public static let standard = GuessingRules(
        failuresBeforeSlowdown: 2, slowdownStep: .seconds(1), failuresPerLock: 5, firstLock: .seconds(15 * 60),
        longestLock: .seconds(24 * 3600), failureMemory: .seconds(24 * 3600),
        failuresPerAddress: RateLimit(limit: 100, window: .seconds(15 * 60)))

    public init(
        failuresBeforeSlowdown: Int, slowdownStep: Duration, failuresPerLock: Int, firstLock: Duration,
        longestLock: Duration, failureMemory: Duration, failuresPerAddress: RateLimit
    ) {
        self.failuresBeforeSlowdown = failuresBeforeSlowdown
        self.slowdownStep = slowdownStep
        self.failuresPerLock = failuresPerLock
        self.firstLock = firstLock
        self.longestLock = longestLock
        self.failureMemory = failureMemory
        self.failuresPerAddress = failuresPerAddress
    }

    /// How long the lock that the given count of consecutive failures sets lasts; nil when it sets none.
    public func lock(afterFailures failures: Int) -> Duration? {
        guard failures > 0, failures % failuresPerLock == 0 else { return nil }
        let doublings = min(failures / failuresPerLock - 1, 30)
        let milliseconds = firstLock.wholeMilliseconds.multipliedReportingOverflow(by: 1 << doublings)
        return milliseconds.overflow ? longestLock : min(.milliseconds(milliseconds.partialValue), longestLock)
    }

    /// How long the answer to the given failure is held back: counted within each run of `failuresPerLock`,
    /// so that the wait stays short and the locks do the rest.
    public func slowdown(afterFailures failures: Int) -> Duration {
        let inRun = failures % failuresPerLock
        guard inRun > failuresBeforeSlowdown else { return .zero }
        return slowdownStep * (inRun - failuresBeforeSlowdown)
    }
}

/// Keeps count of failed password checks per key and per client address, in a `GuessingLedger`: the store's,
/// so that several servers over one database share one count. For sign-ins the key is the username key,
/// whether or not the account exists, so that the answers do not tell which usernames exist; for ballots it
/// is the person and the vote.
public final class GuessingGuard<Ledger: GuessingLedger>: Sendable {
    /// Which limit a refusal names: the key's own lock, or the client address's failures.
    public struct Limits: Hashable, Sendable {
        public var scope: GuessingScope
        public var perKey: ServiceError.Limit
        public var perAddress: ServiceError.Limit

        public static var signIn: Limits { Limits(scope: .signIn, perKey: .signInAttempts, perAddress: .signInsFromAddress) }
        public static var votePassword: Limits {
            Limits(scope: .votePassword, perKey: .votePasswordAttempts, perAddress: .votePasswordsFromAddress)
        }
    }

    public let rules: GuessingRules
    public let limits: Limits
    private let clock: any WallClock
    public let ledger: Ledger

    public init(rules: GuessingRules, limits: Limits, clock: any WallClock, ledger: Ledger) {
        self.rules = rules
        self.limits = limits
        self.clock = clock
        self.ledger = ledger
    }

    /// Starts an attempt, or refuses it while the account is locked, the address has failed too often, or the
    /// attempts already under way could use up the failures left before either limit. Both limits count the
    /// attempt from here until it ends, so that concurrent guesses are cut at the limit exactly.
    public func begin(account key: String, address: String) async throws -> GuessingAttempt {
        switch try await ledger.begin(limits.scope, key: key, address: address, rules: rules, at: clock.now) {
        case .success(let attempt): return attempt
        case .failure(.key(let wait)): throw ServiceError.rateLimited(retryAfter: wait, limits.perKey)
        case .failure(.address(let wait)): throw ServiceError.rateLimited(retryAfter: wait, limits.perAddress)
        }
    }

    /// The password matched: the account's failures are forgotten, and the address is not charged. An attempt
    /// that waited so long it stopped counting is refused instead, as if it had not begun: telling its answer
    /// would let a flood of slow checks decide more guesses than the rules allow.
    public func succeeded(_ attempt: GuessingAttempt) async throws {
        guard try await ledger.succeeded(attempt, rules: rules, at: clock.now) else { throw stale }
    }

    /// The attempt could not be decided (the store failed): it no longer counts as under way.
    public func abandoned(_ attempt: GuessingAttempt) async throws {
        try await ledger.abandoned(attempt, rules: rules, at: clock.now)
    }

    /// The password was wrong. Returns how long to hold the answer back; refuses, as `succeeded` does, an
    /// attempt that had stopped counting (the failure is counted all the same).
    public func failed(_ attempt: GuessingAttempt) async throws -> Duration {
        let (failures, counted) = try await ledger.failed(attempt, rules: rules, at: clock.now)
        guard counted else { throw stale }
        return rules.slowdown(afterFailures: failures)
    }

    private var stale: ServiceError { .rateLimited(retryAfter: max(rules.slowdownStep, .seconds(1)), limits.perKey) }
}

extension GuessingGuard where Ledger == MemoryGuessingLedger {
    /// A guard counting in this process's memory.
    public convenience init(rules: GuessingRules, limits: Limits, clock: any WallClock) {
        self.init(rules: rules, limits: limits, clock: clock, ledger: MemoryGuessingLedger())
    }
}
