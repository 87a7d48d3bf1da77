/// A six-digit code mailed to an address: typed back, it proves the person reads that mailbox.
public struct MailCode: Sendable, CustomStringConvertible {
    let digits: String

    public static let length = 6

    /// A new code, from the system's secure generator: each of the million is as likely.
    public static func random() -> MailCode {
        var generator = SystemRandomNumberGenerator()
        let number = generator.next(upperBound: UInt64(1_000_000))
        let text = String(number)
        return MailCode(unchecked: String(repeating: "0", count: length - text.count) + text)
    }

    /// A code as typed: six ASCII digits, spaces around them ignored.
    public init(_ text: String, field: String = "code") throws(ValidationError) {
        let trimmed = text.trimmingSpaces
        guard trimmed.utf8.count == Self.length, trimmed.utf8.allSatisfy({ (48...57).contains($0) }) else {
            throw ValidationError(field: field, message: "must be the \(Self.length) digits of the code that was mailed")
        }
        digits = trimmed
    }

    private init(unchecked: String) { digits = unchecked }

    /// The text the hasher takes: six digits are never cut or misread by bcrypt.
    public var hashable: Password { Password(uncheckedNormalized: digits) }

    /// The code as the mail shows it.
    public var text: String { digits }

    /// Never the code itself, so that it cannot reach a log by accident.
    public var description: String { "MailCode(redacted)" }
}

/// What a mailed code is for.
public enum CodePurpose: String, Hashable, Sendable, CaseIterable {
    /// Confirms the address an account gave (at sign-up, or to replace its verified one).
    case verifyEmail = "verify-email"
    /// Signs in without a password: "Sign in with Email verification", and the way back in after a forgotten
    /// password.
    case signIn = "sign-in"
}

/// A code as the record keeps it: a bcrypt hash of it, never the code, for one account and purpose; a new code
/// for the same purpose replaces it.
public struct StoredCode: Hashable, Sendable {
    public var account: UserID
    public var purpose: CodePurpose
    /// The address it was mailed to: confirming it verifies this address, not whatever the account gives later.
    public var email: Email
    public var hash: PasswordHash
    public var createdAt: Timestamp
    public var expiresAt: Timestamp
    /// Wrong or right, each check of a code spends one; none left, the code is spent.
    public var triesLeft: Int

    public init(
        account: UserID, purpose: CodePurpose, email: Email, hash: PasswordHash, createdAt: Timestamp, expiresAt: Timestamp,
        triesLeft: Int
    ) {
        self.account = account
        self.purpose = purpose
        self.email = email
        self.hash = hash
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.triesLeft = triesLeft
    }

    /// Whether a check of the code may still be made at `now`.
    public func isUsable(at now: Timestamp) -> Bool { triesLeft > 0 && now < expiresAt }
}

/// The rules of mailed codes.
public struct CodeRules: Hashable, Sendable {
    /// How long a code works: long enough for mail to arrive and be read, short enough that a code left in a
    /// mailbox is soon worthless. The issue of this feature names 15 minutes.
    public var lifetime: Duration
    /// Checks of one code, right or wrong: five wrong guesses of a million leave one chance in 200,000.
    public var tries: Int
    /// Codes mailed for one account, for one address and from one client address: each send costs a mail and
    /// a bcrypt hash, and a flood of codes is a flood of someone's mailbox.
    public var sendsPerAccount: RateLimit
    public var sendsPerAddress: RateLimit
    public var sendsFromClient: RateLimit
    /// How long after signing in with a code the session may set a new password or delete the account
    /// without the current password: a forgotten password is a code sign-in and a new password, done at once.
    public var recentCodeSignIn: Duration

    /// Five codes an hour per account and per address cover a few resends and a change of mind; a campus NAT
    /// sends for many people, so a client gets three hundred: room for every sign-up it may make in that hour
    /// (`AccountRules.signUpsPerAddress`, 100) with two resends each.
    public static let standard = CodeRules(
        lifetime: .seconds(15 * 60), tries: 5,
        sendsPerAccount: RateLimit(limit: 5, window: .seconds(3600)),
        sendsPerAddress: RateLimit(limit: 5, window: .seconds(3600)),
        sendsFromClient: RateLimit(limit: 300, window: .seconds(3600)),
        recentCodeSignIn: .seconds(10 * 60))

    public init(
        lifetime: Duration, tries: Int, sendsPerAccount: RateLimit, sendsPerAddress: RateLimit, sendsFromClient: RateLimit,
        recentCodeSignIn: Duration
    ) {
        self.lifetime = lifetime
        self.tries = tries
        self.sendsPerAccount = sendsPerAccount
        self.sendsPerAddress = sendsPerAddress
        self.sendsFromClient = sendsFromClient
        self.recentCodeSignIn = recentCodeSignIn
    }
}
