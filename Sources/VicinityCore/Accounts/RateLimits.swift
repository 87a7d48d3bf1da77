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

    /// Failures the key may still have before the next lock, given its failures in a row: 1 to
    /// `failuresPerLock`.
    public func triesLeft(afterFailures failures: Int) -> Int {
        failuresPerLock - failures % failuresPerLock
    }

    /// These rules with every lock they set ending by `end` at the latest: a lock that guards something which
    /// ends (a vote) never outlasts it. A millisecond at least, so that a failure that should lock still does
    /// and says so, should `end` pass while the password is checked.
    public func endingLocks(by end: Timestamp, at now: Timestamp) -> GuessingRules {
        var rules = self
        rules.longestLock = min(longestLock, max(end - now, .milliseconds(1)))
        return rules
    }

    /// How long the answer to the given failure is held back: counted within each run of `failuresPerLock`,
    /// so that the wait stays short and the locks do the rest.
    public func slowdown(afterFailures failures: Int) -> Duration {
        let inRun = failures % failuresPerLock
        guard inRun > failuresBeforeSlowdown else { return .zero }
        return slowdownStep * (inRun - failuresBeforeSlowdown)
    }
}

/// What a wrong password leaves: how long to hold its answer back, and the key's tries before the lock, or
/// the lock itself.
public struct GuessingFailure: Hashable, Sendable {
    /// How long to hold the answer back.
    public var delay: Duration
    /// Wrong passwords the key may still give before it is locked; 0 while it is locked.
    public var triesLeft: Int
    /// While the key is locked (by this failure, or by one before it), the refusal its next attempt would get,
    /// with the wait: the answer to give in place of "wrong", so that the caller learns the wait now.
    public var lock: ServiceError?

    public init(delay: Duration, triesLeft: Int, lock: ServiceError?) {
        self.delay = delay
        self.triesLeft = triesLeft
        self.lock = lock
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
        /// The key's lock when it lasts until the end of what it guards (see `begin(account:address:lockEndingBy:)`):
        /// no try is left before that ends.
        public var perKeyUntilEnd: ServiceError.Limit
        public var perAddress: ServiceError.Limit

        /// A sign-in guards nothing that ends: its locks run their whole length.
        public static var signIn: Limits {
            Limits(scope: .signIn, perKey: .signInAttempts, perKeyUntilEnd: .signInAttempts, perAddress: .signInsFromAddress)
        }
        public static var votePassword: Limits {
            Limits(
                scope: .votePassword, perKey: .votePasswordAttempts, perKeyUntilEnd: .votePasswordAttemptsUntilVoteEnds,
                perAddress: .votePasswordsFromAddress)
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
    ///
    /// `end` is when what the password guards ends (a timed vote's close), if it does: the key's lock, and the
    /// wait a refusal names, end by then at the latest. The address's limit spans every key, so it keeps its
    /// own wait.
    public func begin(account key: String, address: String, lockEndingBy end: Timestamp? = nil) async throws -> GuessingAttempt {
        let now = clock.now
        switch try await ledger.begin(limits.scope, key: key, address: address, rules: rules, at: now) {
        case .success(let attempt): return attempt
        case .failure(.key(let wait)): throw keyRefusal(wait: wait, end: end, at: now)
        case .failure(.busy(let wait)): throw ServiceError.rateLimited(retryAfter: wait, .checksUnderWay)
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

    /// The password was wrong. Returns how long to hold the answer back and the tries left, or the lock;
    /// refuses, as `succeeded` does, an attempt that had stopped counting (the failure is counted all the
    /// same). A lock this failure sets ends by `end` at the latest, as in `begin`. Both the count and the lock
    /// come from the ledger's step that counted this failure, so attempts at the same moment never read each
    /// other's counts.
    public func failed(_ attempt: GuessingAttempt, lockEndingBy end: Timestamp? = nil) async throws -> GuessingFailure {
        let now = clock.now
        let count = try await ledger.failed(attempt, rules: end.map { rules.endingLocks(by: $0, at: now) } ?? rules, at: now)
        guard count.counted else { throw stale }
        let lock = count.lockedUntil.map { keyRefusal(wait: $0 - now, end: end, at: now) }
        return GuessingFailure(
            delay: rules.slowdown(afterFailures: count.failures),
            triesLeft: lock == nil ? rules.triesLeft(afterFailures: count.failures) : 0, lock: lock)
    }

    /// The refusal of a key locked for `wait`, cut at `end`: a wait that reaches it names the limit that lasts
    /// until the end.
    private func keyRefusal(wait: Duration, end: Timestamp?, at now: Timestamp) -> ServiceError {
        guard let end, end - now <= wait else { return .rateLimited(retryAfter: wait, limits.perKey) }
        return .rateLimited(retryAfter: max(end - now, .zero), limits.perKeyUntilEnd)
    }

    /// An attempt whose check outlasted its turn: not a lock, a moment's wait.
    private var stale: ServiceError { .rateLimited(retryAfter: max(rules.slowdownStep, .seconds(1)), .checksUnderWay) }
}

extension GuessingGuard where Ledger == MemoryGuessingLedger {
    /// A guard counting in this process's memory.
    public convenience init(rules: GuessingRules, limits: Limits, clock: any WallClock) {
        self.init(rules: rules, limits: limits, clock: clock, ledger: MemoryGuessingLedger())
    }
}
