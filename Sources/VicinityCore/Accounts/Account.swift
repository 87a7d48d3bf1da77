import Foundation

/// What people sign in with: 3 to 32 ASCII letters, digits, `.`, `_` or `-`, starting with a letter or digit.
/// Unique ignoring case, so that `Alice` and `alice` cannot be two people; shown as typed at sign-up.
///
/// ASCII only: case-insensitive comparison of any script (Turkish dotted i, German ß) has no answer every
/// client agrees on, and look-alike letters from other scripts would let one user pass for another.
public struct Username: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public static let lengths = 3...32

    public init(_ text: String) throws(ValidationError) {
        let bytes = Array(text.utf8)
        guard Self.lengths.contains(bytes.count) else {
            throw ValidationError(field: "username", message: "must be \(Self.lengths.lowerBound) to \(Self.lengths.upperBound) characters")
        }
        func isAlphanumeric(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        }
        guard isAlphanumeric(bytes[0]),
            bytes.allSatisfy({ isAlphanumeric($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") })
        else {
            throw ValidationError(
                field: "username", message: "may hold only ASCII letters, digits, '.', '_' and '-', and must start with a letter or digit")
        }
        rawValue = text
    }

    /// The form uniqueness and sign-in compare: lower case.
    public var key: String { rawValue.lowercased() }

    public var description: String { rawValue }
}

/// A first or last name: 1 to 64 characters of any script, without control characters; spaces at the ends are
/// dropped.
public struct PersonName: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public static let maximumLength = 64

    public init(_ text: String, field: String) throws(ValidationError) {
        let trimmed = text.trimmingSpaces
        guard !trimmed.isEmpty else { throw ValidationError(field: field, message: "must not be empty") }
        guard trimmed.unicodeScalars.count <= Self.maximumLength else {
            throw ValidationError(field: field, message: "must be at most \(Self.maximumLength) characters")
        }
        guard !trimmed.unicodeScalars.contains(where: \.isControl) else {
            throw ValidationError(field: field, message: "must not contain control characters")
        }
        rawValue = trimmed
    }

    public var description: String { rawValue }
}

/// An e-mail address, checked for its shape (`local@domain.tld`, at most 254 characters, RFC 5321's limit):
/// whether mail arrives is for a code mailed to it to tell (`MailCode`).
public struct Email: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public static let maximumLength = 254

    public init(_ text: String) throws(ValidationError) {
        let trimmed = text.trimmingSpaces
        let parts = trimmed.split(separator: "@", omittingEmptySubsequences: false)
        guard trimmed.utf8.count <= Self.maximumLength,
            parts.count == 2, !parts[0].isEmpty, parts[0].utf8.count <= 64,
            parts[1].contains("."), !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
            !trimmed.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.isControl })
        else { throw ValidationError(field: "email", message: "must be an e-mail address such as name@example.edu") }
        rawValue = trimmed
    }

    public var description: String { rawValue }

    /// The form uniqueness and sign-in compare: the whole address in lower case. RFC 5321 lets a server tell
    /// `Ana@` from `ana@`, but no campus mail server does, and two accounts told apart only by case would be two
    /// people with one mailbox.
    public var key: String { rawValue.lowercased() }

    /// The address as an initiator may see it beside a ballot: the first character of the local part, the
    /// rest hidden, and the domain whole (`m•••@student.csulb.edu`), enough to tell a student's own address
    /// from a look-alike's without giving either away.
    public var masked: String {
        let parts = rawValue.split(separator: "@", maxSplits: 1)
        guard parts.count == 2, let first = parts[0].first else { return "•••" }
        return String(first) + "•••@" + parts[1]
    }
}

/// A password as typed, before hashing. Never stored, logged or written anywhere: only its bcrypt hash is.
///
/// At least 8 characters (Unicode code points in normal form C, as JSON Schema's `minLength` counts), and at most
/// 72 bytes once encoded: bcrypt reads no further, so a longer password
/// would be cut silently and its tail would protect nothing; it is refused instead. NUL is refused too, because
/// bcrypt reads the password as C text and would stop there. Text is compared in Unicode normal form C, so a
/// password typed on keyboards that compose accents differently is the same password.
public struct Password: Sendable, CustomStringConvertible {
    public let normalized: String

    public static let minimumCharacters = 8
    /// bcrypt's key length limit.
    public static let maximumBytes = 72

    public init(_ text: String, field: String = "password") throws(ValidationError) {
        let normalized = text.precomposedStringWithCanonicalMapping
        guard normalized.unicodeScalars.count >= Self.minimumCharacters else {
            throw ValidationError(field: field, message: "must be at least \(Self.minimumCharacters) characters")
        }
        guard normalized.utf8.count <= Self.maximumBytes else {
            throw ValidationError(
                field: field,
                message: "must be at most \(Self.maximumBytes) bytes in UTF-8 (bcrypt reads no further); this one is \(normalized.utf8.count)")
        }
        guard !normalized.utf8.contains(0) else { throw ValidationError(field: field, message: "must not contain NUL") }
        self.normalized = normalized
    }

    /// Text already checked by a rule of its own (a vote password's six digits).
    init(uncheckedNormalized: String) { normalized = uncheckedNormalized }

    /// Never the password itself, so that it cannot reach a log by accident.
    public var description: String { "Password(redacted)" }
}

/// A password's bcrypt hash in modular crypt form (`$2b$10$...`): salt and cost travel with it.
public struct PasswordHash: Hashable, Sendable {
    public let encoded: String

    public init(encoded: String) { self.encoded = encoded }
}

/// A person with an account.
public struct Account: Hashable, Sendable {
    public var id: UserID
    public var username: Username
    public var firstName: PersonName
    public var lastName: PersonName
    /// The verified address: confirmed with a code mailed to it, unique ignoring case, what signing in by
    /// e-mail and sign-in codes use. Nil until one is confirmed.
    public var email: Email?
    /// An address given (at sign-up, or to replace `email`) and not yet confirmed with its code; the verified
    /// one, if any, stays until this one is confirmed.
    public var pendingEmail: Email?
    /// While on, no friend sees where this person is: friends see "hidden".
    public var privacyMode: Bool
    public var createdAt: Timestamp
    /// Set by an operator: the account cannot sign in and has no sessions.
    public var disabled: Bool
    /// How this person shares their position with a new friend; each friendship keeps its own afterwards.
    public var defaultShare: ShareLevel

    public init(
        id: UserID, username: Username, firstName: PersonName, lastName: PersonName, email: Email?,
        pendingEmail: Email? = nil, privacyMode: Bool, createdAt: Timestamp, disabled: Bool = false,
        defaultShare: ShareLevel = .standard
    ) {
        self.id = id
        self.username = username
        self.firstName = firstName
        self.lastName = lastName
        self.email = email
        self.pendingEmail = pendingEmail
        self.privacyMode = privacyMode
        self.createdAt = createdAt
        self.disabled = disabled
        self.defaultShare = defaultShare
    }

    /// Whether the account holds a verified address.
    public var isVerified: Bool { email != nil }

    /// First and last name, as the apps title a person.
    public var displayName: String { "\(firstName.rawValue) \(lastName.rawValue)" }

    public var summary: UserSummary {
        UserSummary(id: id, username: username, firstName: firstName, lastName: lastName)
    }
}

/// An account with its password hash, as the record keeps it.
public struct StoredAccount: Hashable, Sendable {
    public var account: Account
    /// Nil for an account made with an e-mail code that has not set a password yet: it signs in by code.
    public var passwordHash: PasswordHash?

    public init(account: Account, passwordHash: PasswordHash?) {
        self.account = account
        self.passwordHash = passwordHash
    }
}

/// Who someone is, without anything private: what other people see of a user.
public struct UserSummary: Hashable, Sendable {
    public var id: UserID
    public var username: Username
    public var firstName: PersonName
    public var lastName: PersonName

    public init(id: UserID, username: Username, firstName: PersonName, lastName: PersonName) {
        self.id = id
        self.username = username
        self.firstName = firstName
        self.lastName = lastName
    }

    public var displayName: String { "\(firstName.rawValue) \(lastName.rawValue)" }
}

/// What a new account needs.
public struct SignUp: Sendable {
    public var username: Username
    /// Nil for an account that signs in with codes mailed to its address until it sets a password.
    public var password: Password?
    public var firstName: PersonName
    public var lastName: PersonName
    public var email: Email?

    public init(username: Username, password: Password?, firstName: PersonName, lastName: PersonName, email: Email?) {
        self.username = username
        self.password = password
        self.firstName = firstName
        self.lastName = lastName
        self.email = email
    }
}

/// Changes to one's own account; nil leaves a field as it is.
public struct AccountChanges: Sendable {
    public var firstName: PersonName?
    public var lastName: PersonName?
    /// `.some(nil)` removes the address.
    public var email: Email??
    public var privacyMode: Bool?
    public var defaultShare: ShareLevel?
    /// A new password, which needs the current one.
    public var newPassword: Password?
    public var currentPassword: String?

    public init(
        firstName: PersonName? = nil, lastName: PersonName? = nil, email: Email?? = nil, privacyMode: Bool? = nil,
        defaultShare: ShareLevel? = nil, newPassword: Password? = nil, currentPassword: String? = nil
    ) {
        self.firstName = firstName
        self.lastName = lastName
        self.email = email
        self.privacyMode = privacyMode
        self.defaultShare = defaultShare
        self.newPassword = newPassword
        self.currentPassword = currentPassword
    }
}

extension Unicode.Scalar {
    /// C0 and C1 control characters and DEL.
    var isControl: Bool { value < 0x20 || (0x7F...0x9F).contains(value) }
}
