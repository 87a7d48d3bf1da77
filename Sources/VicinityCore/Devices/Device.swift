import Crypto

/// Which app a device password is for: each speaks its own protocol at its own address.
public enum DeviceKind: String, Hashable, Sendable, CaseIterable {
    /// OwnTracks in HTTP mode (`POST /owntracks`, Basic authentication).
    case owntracks
    /// Traccar Client, speaking the OsmAnd protocol (`/traccar`, the secret as its device identifier).
    case traccar
}

public enum DeviceIDKind {}
/// A device password's identifier: random, shown in the person's list, the `{id}` of its revocation.
public typealias DeviceID = RandomIdentifier<DeviceIDKind>

/// What the person calls a device ("Pixel", "Mai's iPhone"): for telling them apart in the list.
public struct DeviceName: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public static let maximumLength = 64

    public init(_ text: String) throws(ValidationError) {
        let trimmed = text.trimmingSpaces
        guard !trimmed.isEmpty else { throw ValidationError(field: "name", message: "must not be empty") }
        guard trimmed.unicodeScalars.count <= Self.maximumLength else {
            throw ValidationError(field: "name", message: "must be at most \(Self.maximumLength) characters")
        }
        guard !trimmed.unicodeScalars.contains(where: \.isControl) else {
            throw ValidationError(field: "name", message: "must not contain control characters")
        }
        rawValue = trimmed
    }

    public var description: String { rawValue }
}

/// A phone app's own password: it reports its person's position and reads what its person may see of their
/// friends, nothing else, so that the account's password never sits in an app's settings.
public struct Device: Hashable, Sendable {
    public var id: DeviceID
    public var owner: UserID
    public var name: DeviceName
    public var kind: DeviceKind
    public var createdAt: Timestamp
    /// When it last reported a position; nil until it first does.
    public var lastUsedAt: Timestamp?

    public init(id: DeviceID = .random(), owner: UserID, name: DeviceName, kind: DeviceKind, createdAt: Timestamp, lastUsedAt: Timestamp? = nil) {
        self.id = id
        self.owner = owner
        self.name = name
        self.kind = kind
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }
}

/// A device as stored: with its secret's digest, never the secret, and what its app was last sent of the
/// friends' names (`cardsDigest`), so that names go to the app only when they change.
public struct StoredDevice: Hashable, Sendable {
    public var device: Device
    public var secretDigest: TokenDigest
    public var cardsDigest: String?

    public init(device: Device, secretDigest: TokenDigest, cardsDigest: String? = nil) {
        self.device = device
        self.secretDigest = secretDigest
        self.cardsDigest = cardsDigest
    }
}

/// A device's secret: 256 random bits in base64url, shown once when the device is added. It has the shape and
/// strength of a session token, so it is kept the same way: as its SHA-256, which a fast lookup can use and
/// from which nobody can rebuild it (guessing 256 random bits is out of reach, so no slow hash is needed).
public struct DeviceSecret: Sendable, CustomStringConvertible {
    public let text: String

    public static func random() -> DeviceSecret { DeviceSecret(token: SessionToken.random()) }

    /// Nil for text that cannot be a secret made here, which then names no device.
    public init?(_ text: String) {
        guard let token = SessionToken(text) else { return nil }
        self.init(token: token)
    }

    private init(token: SessionToken) { text = token.text }

    public var digest: TokenDigest { TokenDigest(bytes: Array(SHA256.hash(data: Array(text.utf8)))) }

    /// Never the secret itself, so that it cannot reach a log by accident.
    public var description: String { "DeviceSecret(redacted)" }
}
