import Crypto
import Foundation

/// The two push services people's devices listen to.
public enum PushKind: String, Hashable, Sendable, CaseIterable {
    /// A browser's push service (RFC 8030), messages encrypted to the browser (RFC 8291), signed with VAPID.
    case webPush = "webpush"
    /// Apple's push notification service, for the iOS app.
    case apns

    /// The outbox channel its messages wait for: each push service comes back on its own.
    public var channel: OutboxChannel {
        switch self {
        case .webPush: .webPush
        case .apns: .apns
        }
    }
}

public enum PushSubscriptionKind {}
/// A registered device's identifier: random, shown in the person's list, the `{id}` of its removal.
public typealias PushSubscriptionID = RandomIdentifier<PushSubscriptionKind>

/// Where a browser takes its pushes: the `PushSubscription` it serialized, checked.
public struct WebPushAddress: Hashable, Sendable {
    public let endpoint: String
    /// The browser's P-256 public key, uncompressed, in base64url: what messages are encrypted to.
    public let p256dh: String
    /// The browser's 16-byte authentication secret, base64url.
    public let auth: String

    /// Push services' endpoints are a few hundred bytes (FCM's near 200, Mozilla's near 400): 2,048 is the
    /// longest URL browsers have long promised to take, and holds any of them.
    public static let maximumEndpointLength = 2048

    public init(endpoint: String, p256dh: String, auth: String, allowHTTP: Bool) throws(ServiceError) {
        guard endpoint.utf8.count <= Self.maximumEndpointLength, let url = URLComponents(string: endpoint),
            let scheme = url.scheme?.lowercased(), scheme == "https" || (allowHTTP && scheme == "http"),
            let host = url.host, !host.isEmpty
        else {
            throw .invalid("endpoint", allowHTTP ? "must be an http or https URL" : "must be an https URL")
        }
        // What the push transport refuses, refused here too: a device is never accepted and then found unusable.
        guard url.user == nil, url.password == nil, url.fragment == nil else {
            throw .invalid("endpoint", "must carry no user, password or fragment")
        }
        // The server posts to the endpoint: a push service is a public host, never one of the server's own
        // network (`--push-allow-http`, for tests on loopback, allows those too).
        guard allowHTTP || Self.isPublicName(host) else {
            throw .invalid("endpoint", "must name a push service by its public host name, not an address or a local name")
        }
        // RFC 8291 §3.1: an uncompressed P-256 point (65 bytes, 0x04 first); §3.2: a 16-byte secret.
        guard let key = Base64URL.decode(p256dh), key.count == 65, key.first == 0x04,
            (try? P256.KeyAgreement.PublicKey(x963Representation: key)) != nil
        else { throw .invalid("keys.p256dh", "must be the browser's P-256 public key, uncompressed, in base64url") }
        guard let secret = Base64URL.decode(auth), secret.count == 16 else {
            throw .invalid("keys.auth", "must be the browser's 16-byte authentication secret in base64url")
        }
        self.endpoint = endpoint
        self.p256dh = p256dh
        self.auth = auth
    }

    /// A host name with a dot that is not an IP address, nor a name reserved for local networks (RFC 6761 §6.3
    /// `localhost`, RFC 6762 `local`, RFC 8375 `home.arpa`, and the private-use `internal` and `lan`).
    static func isPublicName(_ host: String) -> Bool {
        let name = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "."))
        let labels = name.split(separator: ".")
        guard labels.count >= 2, !name.contains(":"), !name.hasPrefix("[") else { return false }
        // An IPv4 address in any of its spellings ends in a label of decimal digits or 0x-hex, which no top-level
        // domain is.
        guard let last = labels.last, !last.allSatisfy(\.isNumber), !last.hasPrefix("0x") else { return false }
        let local = ["localhost", "local", "internal", "lan", "home.arpa"]
        return !local.contains { name == $0 || name.hasSuffix("." + $0) }
    }

    /// As stored: checked when it was registered.
    public init(stored endpoint: String, p256dh: String, auth: String) {
        self.endpoint = endpoint
        self.p256dh = p256dh
        self.auth = auth
    }

    /// The push service's host, for the person's list: the endpoint itself is a capability, and stays here.
    public var service: String { URL(string: endpoint)?.host ?? "" }
}

/// Where the iOS app takes its pushes: the device token APNs gave it, and the app's bundle id.
public struct APNsAddress: Hashable, Sendable {
    /// Lowercase hexadecimal.
    public let token: String
    public let topic: String

    public init(token: String, topic: String) throws(ServiceError) {
        let token = token.lowercased()
        // Apple's tokens are 32 bytes today and documented as of variable length: up to 100 bytes are taken.
        guard (64...200).contains(token.utf8.count), token.utf8.count % 2 == 0,
            token.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) })
        else { throw .invalid("token", "must be the device token in hexadecimal (64 to 200 digits)") }
        guard (1...255).contains(topic.utf8.count),
            topic.utf8.allSatisfy({ (48...57).contains($0) || (65...90).contains($0) || (97...122).contains($0) || $0 == 46 || $0 == 45 })
        else { throw .invalid("topic", "must be the app's bundle id (letters, digits, dots and hyphens)") }
        self.token = token
        self.topic = topic
    }

    public init(stored token: String, topic: String) {
        self.token = token
        self.topic = topic
    }
}

/// A device's address at its push service.
public enum PushTarget: Hashable, Sendable {
    case webPush(WebPushAddress)
    case apns(APNsAddress)

    public var kind: PushKind {
        switch self {
        case .webPush: .webPush
        case .apns: .apns
        }
    }

    /// What makes two registrations the same device, whoever made them: one row per device, so that a device
    /// signed in as someone else gets only their pushes.
    public var key: String {
        switch self {
        case .webPush(let address): "webpush " + address.endpoint
        case .apns(let address): "apns " + address.topic + " " + address.token
        }
    }

    /// The push service, as the person's list shows it.
    public var service: String {
        switch self {
        case .webPush(let address): address.service
        case .apns: "APNs"
        }
    }
}

/// A device that gets the person's pushes while the session that registered it lasts: signing out (or the
/// session's end) removes it, so that a shared device tells the next person nothing of the last one.
public struct PushSubscription: Hashable, Sendable {
    public var id: PushSubscriptionID
    public var owner: UserID
    public var target: PushTarget
    /// The session that registered it.
    public var session: TokenDigest
    public var createdAt: Timestamp

    public init(id: PushSubscriptionID = .random(), owner: UserID, target: PushTarget, session: TokenDigest, createdAt: Timestamp) {
        self.id = id
        self.owner = owner
        self.target = target
        self.session = session
        self.createdAt = createdAt
    }
}
