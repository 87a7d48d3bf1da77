import Crypto
import Foundation
import VicinityCore

/// The application server's P-256 key pair (RFC 8292 §3): the private half signs every push's token, the public
/// half is what the page subscribes with (`applicationServerKey`) and what a push service checks the token
/// against. Read from PEM, SEC 1 (`openssl ecparam -name prime256v1 -genkey -noout`) or PKCS #8; no description,
/// debug description or mirror of it shows the private key.
public struct VAPIDKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The private scalar (32 octets): kept as octets, which are `Sendable`, and made a signing key when used.
    private let privateKey: [UInt8]
    /// The public key, uncompressed (SEC 1 §2.3.3, 65 octets).
    public let publicKey: [UInt8]
    /// The private key as PKCS #8 PEM (`-----BEGIN PRIVATE KEY-----`), which OpenSSL and this type both read:
    /// what `vicinity push keygen` writes.
    public let pemRepresentation: String

    /// The labels a private key is written under: RFC 5915's SEC 1 structure as OpenSSL writes it, and PKCS #8
    /// (RFC 7468 §10).
    static let sec1Label = "EC PRIVATE KEY"
    static let pkcs8Label = "PRIVATE KEY"

    private init(_ key: P256.Signing.PrivateKey) {
        privateKey = Array(key.rawRepresentation)
        publicKey = Array(key.publicKey.x963Representation)
        pemRepresentation = key.pemRepresentation
    }

    /// A new key pair, for `vicinity push keygen`.
    public static func generate() -> VAPIDKey {
        VAPIDKey(P256.Signing.PrivateKey())
    }

    /// Reads the private key from PEM text; any other blocks (`EC PARAMETERS`) are passed over.
    public init(pem text: String) throws(WebPushProblem) {
        self.init(try Self.signingKey(pem: text))
    }

    /// Reads the key file at `path`; the problem names the file.
    public init(file path: String) throws(WebPushProblem) {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw WebPushProblem("cannot read the VAPID key file \(path): \(error.localizedDescription)")
        }
        let key: P256.Signing.PrivateKey
        do throws(WebPushProblem) {
            key = try Self.signingKey(pem: text)
        } catch {
            throw WebPushProblem("\(path): \(error.description)")
        }
        self.init(key)
    }

    /// The key of the first private key block, or the problem in words an operator can act on.
    private static func signingKey(pem text: String) throws(WebPushProblem) -> P256.Signing.PrivateKey {
        let blocks = PEMText.blocks(in: text)
        guard let block = blocks.first(where: { [sec1Label, pkcs8Label].contains($0.label) }) else {
            if blocks.contains(where: { $0.label == "ENCRYPTED PRIVATE KEY" }) {
                throw WebPushProblem("the VAPID key is encrypted with a passphrase; write it without one (openssl pkey -in KEY -out PLAIN)")
            }
            if blocks.contains(where: { $0.label.hasSuffix("PUBLIC KEY") }) {
                throw WebPushProblem("the file holds a public key; the VAPID key must be the private one")
            }
            throw WebPushProblem(
                "no private key in PEM (-----BEGIN EC PRIVATE KEY----- or -----BEGIN PRIVATE KEY-----); make one with `vicinity push keygen` or `openssl ecparam -name prime256v1 -genkey -noout`")
        }
        guard !block.hasHeaders else {
            throw WebPushProblem("the VAPID key is encrypted with a passphrase; write it without one (openssl ec -in KEY -out PLAIN)")
        }
        do {
            return try P256.Signing.PrivateKey(pemRepresentation: block.text)
        } catch {
            throw WebPushProblem("the \(block.label) is not a P-256 (prime256v1) private key, or is damaged: \(error)")
        }
    }

    /// The public key as the page's `applicationServerKey` and the `k=` of the `Authorization` header take it:
    /// base64url without padding (RFC 8292 §3.2).
    public var publicKeyBase64URL: String { Base64URL.encode(publicKey) }

    /// ES256 (RFC 7518 §3.4): an ECDSA P-256 SHA-256 signature of `message`, as r and s of 32 octets each.
    func sign(_ message: [UInt8]) throws(WebPushProblem) -> [UInt8] {
        do {
            return Array(try P256.Signing.PrivateKey(rawRepresentation: privateKey).signature(for: message).rawRepresentation)
        } catch {
            throw WebPushProblem("the VAPID token could not be signed: \(error)")
        }
    }

    public var description: String { "VAPID key \(publicKeyBase64URL) (private key withheld)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["publicKey": publicKeyBase64URL, "privateKey": "<withheld>"]) }
}
