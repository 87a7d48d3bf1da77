import Crypto

/// The secret that turns what limits count under (usernames, addresses, client addresses, ids) into digests
/// before any ledger sees it: a ledger kept in a database (`guessing`, `window_limit`) then holds nothing that
/// says who tried what from where, to anyone without the secret. Every process sharing a ledger must hold the
/// same secret, or their counts would not meet.
public struct LimitKeys: Sendable {
    /// Kept as bytes: Crypto's key type is not Sendable here.
    private let secret: [UInt8]

    /// HMAC-SHA256's key is as long as its output (RFC 2104 §3 recommends no less).
    public static let minimumBytes = 32

    /// The secret's bytes; refused when shorter than `minimumBytes`.
    public init(secret: [UInt8]) throws(ValidationError) {
        guard secret.count >= Self.minimumBytes else {
            throw ValidationError(field: "secret", message: "must be at least \(Self.minimumBytes) bytes; it has \(secret.count)")
        }
        self.secret = secret
    }

    /// A secret of this process alone: enough where the ledgers live in its memory.
    public static func random() -> LimitKeys { LimitKeys(unchecked: randomSecret()) }

    /// 256 bits from the system's secure generator: `minimumBytes` exactly.
    public static func randomSecret() -> [UInt8] { SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) } }

    private init(unchecked secret: [UInt8]) { self.secret = secret }

    /// The keyed digest of `text`, in base64url: 43 characters whatever the text, so that long made-up
    /// usernames cannot grow a ledger either.
    public func digest(_ text: String) -> String {
        Base64URL.encode(Array(HMAC<SHA256>.authenticationCode(for: Array(text.utf8), using: SymmetricKey(data: secret))))
    }
}

/// Services are described in debug logs (the service group lists what it starts): the secret never is.
extension LimitKeys: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "LimitKeys(secret: redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

/// A window ledger that keeps each key as its digest (`LimitKeys`): the limits read the same, the ledger
/// learns nothing.
public struct KeyedWindowLedger<Ledger: WindowLedger>: WindowLedger {
    let ledger: Ledger
    let keys: LimitKeys

    public init(_ ledger: Ledger, keys: LimitKeys) {
        self.ledger = ledger
        self.keys = keys
    }

    public func withWindows<Value: Sendable>(
        _ windows: [WindowKey], at now: Timestamp, _ step: @escaping @Sendable (inout [WindowState]) -> Value
    ) async throws -> Value {
        try await ledger.withWindows(windows.map { WindowKey($0.scope, keys.digest($0.key), window: $0.window) }, at: now, step)
    }
}

/// A guessing ledger that keeps keys and client addresses as their digests (`LimitKeys`). Attempts carry the
/// digests from `begin` on, so the other calls pass them through.
public struct KeyedGuessingLedger<Ledger: GuessingLedger>: GuessingLedger {
    let ledger: Ledger
    let keys: LimitKeys

    public init(_ ledger: Ledger, keys: LimitKeys) {
        self.ledger = ledger
        self.keys = keys
    }

    public func begin(
        _ scope: GuessingScope, key: String, address: String, rules: GuessingRules, at now: Timestamp
    ) async throws -> Result<GuessingAttempt, GuessingRefusal> {
        try await ledger.begin(scope, key: keys.digest(key), address: keys.digest(address), rules: rules, at: now)
    }

    public func succeeded(_ attempt: GuessingAttempt, rules: GuessingRules, at now: Timestamp) async throws -> Bool {
        try await ledger.succeeded(attempt, rules: rules, at: now)
    }

    public func failed(_ attempt: GuessingAttempt, rules: GuessingRules, at now: Timestamp) async throws -> CountedFailure {
        try await ledger.failed(attempt, rules: rules, at: now)
    }

    public func abandoned(_ attempt: GuessingAttempt, rules: GuessingRules, at now: Timestamp) async throws {
        try await ledger.abandoned(attempt, rules: rules, at: now)
    }
}

extension Stores {
    /// The ledgers as the services use them: keyed.
    public typealias KeyedLimits = KeyedWindowLedger<Limits>
    public typealias KeyedGuesses = KeyedGuessingLedger<Guesses>
}
