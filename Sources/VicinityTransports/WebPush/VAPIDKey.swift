import Foundation
import VicinityCore

/// The application server's P-256 key pair (RFC 8292 §3): the private half signs every push's token, the public
/// half is what the page subscribes with (`applicationServerKey`) and what a push service checks the token
/// against. Read from PEM, SEC 1 (`openssl ecparam -name prime256v1 -genkey -noout`) or PKCS #8; no description,
/// debug description or mirror of it shows the private key.
public struct VAPIDKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    let key: ES256Key

    /// What the problems of reading one call it, and how to make one.
    static let naming = ES256Key.Naming(
        name: "the VAPID key",
        howToMake: "make one with `vicinity push keygen` or `openssl ecparam -name prime256v1 -genkey -noout`")

    private init(_ key: ES256Key) {
        self.key = key
    }

    /// A new key pair, for `vicinity push keygen`.
    public static func generate() -> VAPIDKey {
        VAPIDKey(ES256Key.generate())
    }

    /// Reads the private key from PEM text; any other blocks (`EC PARAMETERS`) are passed over.
    public init(pem text: String) throws(WebPushProblem) {
        let key: ES256Key
        do throws(KeyProblem) {
            key = try ES256Key(pem: text, naming: Self.naming)
        } catch {
            throw WebPushProblem(error.description)
        }
        self.init(key)
    }

    /// Reads the key file at `path`; the problem names the file.
    public init(file path: String) throws(WebPushProblem) {
        let key: ES256Key
        do throws(KeyProblem) {
            key = try ES256Key(file: path, naming: Self.naming)
        } catch {
            throw WebPushProblem(error.description)
        }
        self.init(key)
    }

    /// The public key, uncompressed (SEC 1 §2.3.3, 65 octets).
    public var publicKey: [UInt8] { key.publicKey }

    /// The private key as PKCS #8 PEM (`-----BEGIN PRIVATE KEY-----`), which OpenSSL and this type both read:
    /// what `vicinity push keygen` writes.
    public var pemRepresentation: String { key.pemRepresentation }

    /// The public key as the page's `applicationServerKey` and the `k=` of the `Authorization` header take it:
    /// base64url without padding (RFC 8292 §3.2).
    public var publicKeyBase64URL: String { Base64URL.encode(publicKey) }

    public var description: String { "VAPID key \(publicKeyBase64URL) (private key withheld)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["publicKey": publicKeyBase64URL, "privateKey": "<withheld>"]) }
}
