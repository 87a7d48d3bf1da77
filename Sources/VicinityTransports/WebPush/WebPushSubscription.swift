import Crypto
import Foundation
import VicinityCore

/// Where one browser's pushes go, as its `PushSubscription` serializes (W3C Push API): the push service's URL for
/// it and the keys only the browser can decrypt with (RFC 8291 §2). Checked when read, so that a transport never
/// meets a subscription it cannot send to.
public struct WebPushSubscription: Hashable, Sendable {
    /// The push resource (RFC 8030 §2): where the message is posted.
    public let endpoint: URL
    /// The browser's P-256 public key (`p256dh`), uncompressed: what the message key is agreed with.
    public let userAgentPublicKey: [UInt8]
    /// The secret shared with the browser alone (`auth`), mixed into the message key.
    public let authSecret: [UInt8]
    /// The endpoint's origin, `scheme://host[:port]` (RFC 6454 §6.2): the audience of the VAPID token.
    public let origin: String

    /// RFC 8291 §3.2: the auth secret is 16 octets.
    static let authSecretLength = 16
    /// SEC 1 §2.3.3: an uncompressed P-256 point is 0x04 and two 32-octet coordinates, the form RFC 8291 §3.3
    /// derives the message key with.
    static let uncompressedPointLength = 65

    /// Reads the three strings a browser gives. The keys are base64url (RFC 4648 §5), with or without padding.
    ///
    /// - Parameter allowHTTP: whether a plain `http` endpoint is taken (`serve --push-allow-http`, for tests): a
    ///   real push service is always https (RFC 8030 §8).
    public init(endpoint text: String, p256dh: String, auth: String, allowHTTP: Bool = false) throws(WebPushProblem) {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              let url = components.url
        else {
            throw WebPushProblem("the push endpoint is not a URL")
        }
        guard scheme == "https" || (scheme == "http" && allowHTTP) else {
            throw WebPushProblem(allowHTTP ? "a push endpoint is an https or http URL" : "a push endpoint must be an https URL")
        }
        guard let host = components.host, !host.isEmpty else {
            throw WebPushProblem("the push endpoint names no host")
        }
        guard components.user == nil, components.password == nil, components.fragment == nil else {
            throw WebPushProblem("a push endpoint carries no user, password or fragment")
        }
        guard let publicKey = Self.decode(p256dh), publicKey.count == Self.uncompressedPointLength, publicKey.first == 0x04,
              (try? P256.KeyAgreement.PublicKey(x963Representation: publicKey)) != nil
        else {
            throw WebPushProblem("the subscription's p256dh is not an uncompressed P-256 public key in base64url")
        }
        guard let secret = Self.decode(auth), secret.count == Self.authSecretLength else {
            throw WebPushProblem("the subscription's auth is not \(Self.authSecretLength) octets in base64url")
        }
        endpoint = url
        userAgentPublicKey = publicKey
        authSecret = secret
        origin = Self.origin(scheme: scheme, host: host, port: components.port)
    }

    /// Whether the endpoint is https: the only kind a transport sends to unless told otherwise.
    public var isHTTPS: Bool { endpoint.scheme?.lowercased() == "https" }

    /// Base64url with its padding dropped: some libraries write it, and the octets are the same.
    static func decode(_ text: String) -> [UInt8]? {
        var unpadded = Substring(text)
        while unpadded.hasSuffix("=") { unpadded = unpadded.dropLast() }
        return Base64URL.decode(String(unpadded))
    }

    /// RFC 6454 §6.2: lower-case scheme and host, the port only when it is not the scheme's default; an IPv6
    /// address in brackets.
    static func origin(scheme: String, host: String, port: Int?) -> String {
        var host = host.lowercased()
        if host.contains(":"), !host.hasPrefix("[") { host = "[\(host)]" }
        // RFC 9110 §4.2.1 and §4.2.2: the default ports of http and https.
        let defaultPort = scheme == "https" ? 443 : 80
        guard let port, port != defaultPort else { return "\(scheme)://\(host)" }
        return "\(scheme)://\(host):\(port)"
    }
}
