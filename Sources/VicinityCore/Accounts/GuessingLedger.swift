import Synchronization

/// One password check under way, as the ledger that counts it knows it.
public struct GuessingAttempt: Hashable, Sendable {
    public let id: String
    public let scope: GuessingScope
    public let key: String
    public let address: String

    public init(id: String, scope: GuessingScope, key: String, address: String) {
        self.id = id
        self.scope = scope
        self.key = key
        self.address = address
    }
}

/// Which guessing limits a ledger keeps: each has its own keys and addresses.
public enum GuessingScope: String, Hashable, Sendable, Codable {
    case signIn = "sign-in"
    case votePassword = "vote-password"
}

/// Why a ledger refused an attempt, and how long until it would not.
public enum GuessingRefusal: Error, Hashable, Sendable {
    /// The key is locked.
    case key(wait: Duration)
    /// The key is not locked, but the attempts already under way could use up the tries left before the lock:
    /// this one waits for them, a moment.
    case busy(wait: Duration)
    case address(wait: Duration)
}

/// A wrong password as the ledger counted it, told by the same step that counted it: a count read apart from
/// that step could already be another attempt's.
public struct CountedFailure: Hashable, Sendable {
    /// The key's failures in a row, this one included.
    public var failures: Int
    /// Whether the attempt still counted: an answer to one that had stopped counting must not be told, or a
    /// queue of checks longer than `GuessingBook.attemptLifetime` would let guesses past the lock.
    public var counted: Bool
    /// When the key's lock ends, while the key is locked after this failure (by this one or one before).
    public var lockedUntil: Timestamp?

    public init(failures: Int, counted: Bool, lockedUntil: Timestamp? = nil) {
        self.failures = failures
        self.counted = counted
        self.lockedUntil = lockedUntil
    }
}

/// Where failed password checks are counted, per key (an account, or a person at a vote) and per client
/// address, under `GuessingRules`.
///
/// What a conforming ledger guarantees, however many processes share it: every attempt is counted against
/// both limits from `begin` until it ends, so that attempts made at the same moment through different
/// processes can never decide more failures between them than the rules allow; the same sequence of
/// attempts gets the same answers whichever processes it goes through. An attempt whose process dies before
/// it ends stops counting after `GuessingBook.attemptLifetime`.
public protocol GuessingLedger: Sendable {
    /// Starts an attempt, or says which limit refuses it and for how long.
    func begin(
        _ scope: GuessingScope, key: String, address: String, rules: GuessingRules, at now: Timestamp
    ) async throws -> Result<GuessingAttempt, GuessingRefusal>

    /// The password matched: the key's failures are forgotten, and the address is not charged. Returns false
    /// when the attempt had stopped counting (`GuessingBook.attemptLifetime`): its answer must not be told.
    func succeeded(_ attempt: GuessingAttempt, rules: GuessingRules, at now: Timestamp) async throws -> Bool

    /// The password was wrong: the failure is counted, and the count after it returned.
    func failed(_ attempt: GuessingAttempt, rules: GuessingRules, at now: Timestamp) async throws -> CountedFailure

    /// The attempt could not be decided: it no longer counts.
    func abandoned(_ attempt: GuessingAttempt, rules: GuessingRules, at now: Timestamp) async throws
}

/// What a ledger holds for one key.
public struct GuessingKeyState: Codable, Hashable, Sendable {
    public var failures = 0
    /// Milliseconds since 1970, as every time the ledger keeps.
    public var lastFailure: Int64 = 0
    public var lockedUntil: Int64?
    /// Attempts under way: when each stops counting.
    public var pending: [String: Int64] = [:]

    public init() {}
}

/// What a ledger holds for one client address.
public struct GuessingAddressState: Codable, Hashable, Sendable {
    /// When each failure within the window happened, oldest first.
    public var failures: [Int64] = []
    public var pending: [String: Int64] = [:]

    public init() {}
}

/// The rules of `GuessingRules` as steps on the state of one key and one address: every ledger runs these, in
/// memory or on rows it has locked, so that every store counts alike.
public enum GuessingBook {
    /// How long an attempt counts without an end: far longer than a bcrypt check, so that only a process that
    /// died mid-check leaves one to expire.
    public static let attemptLifetime: Duration = .seconds(60)

    /// Starts an attempt on both states, or refuses it without changing them.
    public static func begin(
        id: String, key: inout GuessingKeyState, address: inout GuessingAddressState, rules: GuessingRules, at now: Timestamp
    ) -> GuessingRefusal? {
        let ms = now.millisecondsSince1970
        tidy(&key, at: ms, rules: rules)
        tidy(&address, at: ms, rules: rules)
        let times = address.failures.map(Timestamp.init(millisecondsSince1970:))
        if let wait = rules.failuresPerAddress.wait(after: times, reserved: address.pending.count, now: now) {
            return .address(wait: wait)
        }
        if let until = key.lockedUntil, until > ms { return .key(wait: .milliseconds(until - ms)) }
        let untilLock = rules.failuresPerLock - key.failures % rules.failuresPerLock
        if key.pending.count >= untilLock { return .busy(wait: max(rules.slowdownStep, .seconds(1))) }
        let expires = (now + attemptLifetime).millisecondsSince1970
        key.pending[id] = expires
        address.pending[id] = expires
        return nil
    }

    /// Returns whether the attempt still counted; one that had stopped counting changes nothing.
    public static func succeeded(id: String, key: inout GuessingKeyState, address: inout GuessingAddressState) -> Bool {
        address.pending[id] = nil
        guard key.pending.removeValue(forKey: id) != nil else { return false }
        let pending = key.pending
        key = GuessingKeyState()
        key.pending = pending
        return true
    }

    /// Counts the failure, and returns the count after it. A wrong password is a failure whether or not the
    /// attempt still counted.
    public static func failed(
        id: String, key: inout GuessingKeyState, address: inout GuessingAddressState, rules: GuessingRules, at now: Timestamp
    ) -> CountedFailure {
        let ms = now.millisecondsSince1970
        let counted = key.pending.removeValue(forKey: id) != nil
        address.pending[id] = nil
        address.failures.insertInOrder(ms)
        key.failures += 1
        key.lastFailure = ms
        if let lock = rules.lock(afterFailures: key.failures) { key.lockedUntil = (now + lock).millisecondsSince1970 }
        let lockedUntil = key.lockedUntil.flatMap { $0 > ms ? Timestamp(millisecondsSince1970: $0) : nil }
        return CountedFailure(failures: key.failures, counted: counted, lockedUntil: lockedUntil)
    }

    public static func abandoned(id: String, key: inout GuessingKeyState, address: inout GuessingAddressState) {
        key.pending[id] = nil
        address.pending[id] = nil
    }

    /// Expired attempts go; a key's failures are forgotten after `failureMemory` without one, unless it is
    /// locked or has attempts under way.
    static func tidy(_ key: inout GuessingKeyState, at ms: Int64, rules: GuessingRules) {
        key.pending = key.pending.filter { $0.value > ms }
        if key.failures > 0, key.pending.isEmpty, ms - key.lastFailure > rules.failureMemory.wholeMilliseconds {
            key = GuessingKeyState()
        }
    }

    static func tidy(_ address: inout GuessingAddressState, at ms: Int64, rules: GuessingRules) {
        address.pending = address.pending.filter { $0.value > ms }
        let cutoff = ms - rules.failuresPerAddress.window.wholeMilliseconds
        address.failures.removeAll { $0 <= cutoff }
    }

    /// When the key's state holds nothing that `begin` would still read (milliseconds since 1970): a ledger may
    /// drop it after then.
    public static func keptUntil(_ key: GuessingKeyState, rules: GuessingRules) -> Int64 {
        var until = key.pending.values.max() ?? 0
        if key.failures > 0 { until = max(until, key.lastFailure + rules.failureMemory.wholeMilliseconds) }
        if let locked = key.lockedUntil { until = max(until, locked) }
        return until
    }

    public static func keptUntil(_ address: GuessingAddressState, rules: GuessingRules) -> Int64 {
        max(address.pending.values.max() ?? 0, (address.failures.last ?? 0) + rules.failuresPerAddress.window.wholeMilliseconds)
    }

    /// A new attempt's id: random, so that ids from different processes never meet.
    public static func newAttemptID() -> String {
        Base64URL.encode((0..<12).map { _ in UInt8.random(in: 0...255) })
    }
}

/// A ledger in this process's memory: the one SQLite deployments (a single server) and tests use. A restart
/// forgets it, which lets nobody through faster than waiting for the limits would. States that hold nothing
/// any more are swept every few thousand attempts, so memory follows the keys and addresses of the last day.
public final class MemoryGuessingLedger: GuessingLedger {
    private struct Book {
        var keys: [GuessingScope: [String: GuessingKeyState]] = [:]
        var addresses: [GuessingScope: [String: GuessingAddressState]] = [:]
        var sinceSweep = 0
    }

    private let book = Mutex(Book())

    public init() {}

    public func begin(
        _ scope: GuessingScope, key: String, address: String, rules: GuessingRules, at now: Timestamp
    ) async throws -> Result<GuessingAttempt, GuessingRefusal> {
        let id = GuessingBook.newAttemptID()
        return book.withLock { book in
            sweepIfDue(&book, rules: rules, at: now)
            var keyState = book.keys[scope]?[key] ?? GuessingKeyState()
            var addressState = book.addresses[scope]?[address] ?? GuessingAddressState()
            if let refusal = GuessingBook.begin(id: id, key: &keyState, address: &addressState, rules: rules, at: now) {
                return .failure(refusal)
            }
            book.keys[scope, default: [:]][key] = keyState
            book.addresses[scope, default: [:]][address] = addressState
            return .success(GuessingAttempt(id: id, scope: scope, key: key, address: address))
        }
    }

    public func succeeded(_ attempt: GuessingAttempt, rules: GuessingRules, at now: Timestamp) async throws -> Bool {
        update(attempt) { key, address in GuessingBook.succeeded(id: attempt.id, key: &key, address: &address) }
    }

    public func failed(_ attempt: GuessingAttempt, rules: GuessingRules, at now: Timestamp) async throws -> CountedFailure {
        update(attempt) { key, address in GuessingBook.failed(id: attempt.id, key: &key, address: &address, rules: rules, at: now) }
    }

    public func abandoned(_ attempt: GuessingAttempt, rules: GuessingRules, at now: Timestamp) async throws {
        update(attempt) { key, address in GuessingBook.abandoned(id: attempt.id, key: &key, address: &address) }
    }

    /// Keys remembered, over both scopes: for tests of the sweep.
    public var rememberedKeys: Int { book.withLock { $0.keys.values.reduce(0) { $0 + $1.count } } }

    private func update<Result>(
        _ attempt: GuessingAttempt, _ step: (inout GuessingKeyState, inout GuessingAddressState) -> Result
    ) -> Result {
        book.withLock { book in
            var key = book.keys[attempt.scope]?[attempt.key] ?? GuessingKeyState()
            var address = book.addresses[attempt.scope]?[attempt.address] ?? GuessingAddressState()
            let result = step(&key, &address)
            book.keys[attempt.scope, default: [:]][attempt.key] = key == GuessingKeyState() ? nil : key
            book.addresses[attempt.scope, default: [:]][attempt.address] = address == GuessingAddressState() ? nil : address
            return result
        }
    }

    private func sweepIfDue(_ book: inout Book, rules: GuessingRules, at now: Timestamp) {
        book.sinceSweep += 1
        guard book.sinceSweep >= 4096 else { return }
        book.sinceSweep = 0
        let ms = now.millisecondsSince1970
        for scope in book.keys.keys {
            book.keys[scope] = book.keys[scope]?.filter { GuessingBook.keptUntil($0.value, rules: rules) > ms }
        }
        for scope in book.addresses.keys {
            book.addresses[scope] = book.addresses[scope]?.filter { GuessingBook.keptUntil($0.value, rules: rules) > ms }
        }
    }
}
