import VicinityCore

/// The P-256 key that signs the service's APNs provider tokens: the `.p8` file Apple's developer account hands
/// out once (PKCS #8, `-----BEGIN PRIVATE KEY-----`); SEC 1 from openssl is taken too. No description, debug
/// description or mirror of it shows the private key.
public struct APNsSigningKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    let key: ES256Key

    /// What the problems of reading one call it, and where to get one.
    static let naming = ES256Key.Naming(
        name: "the APNs key",
        howToMake: "the APNs key is the AuthKey_<key ID>.p8 file from Apple's developer account (Certificates, Identifiers & Profiles › Keys)")

    private init(_ key: ES256Key) {
        self.key = key
    }

    /// A new key, for tests: APNs takes only the keys Apple issued.
    public static func generate() -> APNsSigningKey {
        APNsSigningKey(ES256Key.generate())
    }

    /// Reads the private key from PEM text; any other blocks are passed over.
    public init(pem text: String) throws(APNsProblem) {
        let key: ES256Key
        do throws(KeyProblem) {
            key = try ES256Key(pem: text, naming: Self.naming)
        } catch {
            throw APNsProblem(error.description)
        }
        self.init(key)
    }

    /// Reads the key file at `path`; the problem names the file.
    public init(file path: String) throws(APNsProblem) {
        let key: ES256Key
        do throws(KeyProblem) {
            key = try ES256Key(file: path, naming: Self.naming)
        } catch {
            throw APNsProblem(error.description)
        }
        self.init(key)
    }

    /// The public key, uncompressed (SEC 1 §2.3.3, 65 octets): what APNs checks the tokens against.
    public var publicKey: [UInt8] { key.publicKey }

    /// The private key as PKCS #8 PEM, the form of Apple's `.p8` files.
    public var pemRepresentation: String { key.pemRepresentation }

    public var description: String { "APNs key \(Base64URL.encode(publicKey)) (private key withheld)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["publicKey": Base64URL.encode(publicKey), "privateKey": "<withheld>"]) }
}
