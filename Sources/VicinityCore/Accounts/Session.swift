import Crypto
import Foundation

/// A bearer token as the client holds it: 256 random bits from the system's secure generator, written as
/// base64url without padding (43 characters). The service keeps only its `digest`.
public struct SessionToken: Sendable, CustomStringConvertible {
    public let text: String

    public static let randomBytes = 32

    public static func random() -> SessionToken {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<randomBytes).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return SessionToken(unchecked: Base64URL.encode(bytes))
    }

    /// Nil for text that cannot be a token made here, which then names no session.
    public init?(_ text: String) {
        guard text.utf8.count == 43,
            text.utf8.allSatisfy({ Self.alphabet.contains($0) })
        else { return nil }
        self.text = text
    }

    private init(unchecked text: String) { self.text = text }

    /// SHA-256 of the token text: what the store keeps and looks sessions up by. A token carries 256 random
    /// bits, so a fast hash is enough: nothing in the store lets anyone rebuild a token.
    public var digest: TokenDigest { TokenDigest(bytes: Array(SHA256.hash(data: Array(text.utf8)))) }

    /// Never the token itself, so that it cannot reach a log by accident.
    public var description: String { "SessionToken(redacted)" }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
}

/// The SHA-256 of a session token: 32 bytes.
public struct TokenDigest: Hashable, Sendable {
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) { self.bytes = bytes }
}

/// A signed-in device: which account, since when, until when, and whether a mailed code signed it in.
public struct Session: Hashable, Sendable {
    public var digest: TokenDigest
    public var userID: UserID
    public var createdAt: Timestamp
    public var expiresAt: Timestamp
    /// Signed in with a code mailed to the account's address rather than its password: for a while it may set
    /// a new password or delete the account without the old one (`CodeRules.recentCodeSignIn`).
    public var byCode: Bool

    public init(digest: TokenDigest, userID: UserID, createdAt: Timestamp, expiresAt: Timestamp, byCode: Bool = false) {
        self.digest = digest
        self.userID = userID
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.byCode = byCode
    }

    /// Whether the session still signs in at `now`.
    public func isValid(at now: Timestamp) -> Bool { expiresAt > now }
}

/// Who is calling: the signed-in user and the session the token belongs to.
public struct Identity: Hashable, Sendable {
    public var userID: UserID
    public var session: TokenDigest
    /// When a mailed code signed this session in; nil for a session made with a password.
    public var codeSignIn: Timestamp?

    public init(userID: UserID, session: TokenDigest, codeSignIn: Timestamp? = nil) {
        self.userID = userID
        self.session = session
        self.codeSignIn = codeSignIn
    }
}

/// What signing in gives the client: the token, shown once, and when it stops working.
public struct SignedIn: Sendable {
    public var token: SessionToken
    public var expiresAt: Timestamp
    public var account: Account
}
