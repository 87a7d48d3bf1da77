/// Random identifiers for things the service creates (users, friend requests): unguessable, so that an id
/// seen in one answer says nothing about how many others exist or what their ids are.
///
/// 20 characters of Crockford's base32 alphabet (digits and lower-case letters without i, l, o and u) carry
/// 100 random bits from the system's secure generator: collisions are out of reach at any number of users,
/// and the ids survive URLs, logs and being read aloud.
public enum RandomID {
    public static let alphabet = Array("0123456789abcdefghjkmnpqrstvwxyz".utf8)
    public static let length = 20

    public static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(length)
        for _ in 0..<length { bytes.append(alphabet[Int(generator.next() & 31)]) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// True for text that has the form of an id made here; anything else names nothing.
    public static func isWellFormed(_ text: String) -> Bool {
        text.utf8.count == length && text.utf8.allSatisfy { $0 < 128 && isDigit[Int($0)] }
    }

    /// Which ASCII bytes are digits of the alphabet: ids are checked on every row read, so by table.
    private static let isDigit: [Bool] = (0..<128).map { alphabet.contains(UInt8($0)) }
}

/// An identifier made with `RandomID`, typed by what it names so that a user id cannot be passed where a
/// friend request id is meant.
public struct RandomIdentifier<Kind>: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: String

    /// Nil for text that is not an id this service makes.
    public init?(_ rawValue: String) {
        guard RandomID.isWellFormed(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    public static func random() -> Self { Self(unchecked: RandomID.make()) }

    private init(unchecked: String) { rawValue = unchecked }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { rawValue }
}

public enum UserKind {}
public enum FriendRequestKind {}

/// A user's identifier: random, fixed for life, the `id` of every user on the wire.
public typealias UserID = RandomIdentifier<UserKind>
/// A friend request's identifier.
public typealias FriendRequestID = RandomIdentifier<FriendRequestKind>
