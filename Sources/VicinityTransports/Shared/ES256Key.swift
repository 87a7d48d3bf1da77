import Crypto
import Foundation

/// A P-256 private key that signs ES256 tokens (RFC 7518 §3.4), read from PEM the ways operators make one: SEC 1
/// (`openssl ecparam -name prime256v1 -genkey -noout`) or PKCS #8 (`openssl genpkey`, and Apple's `.p8` files).
/// Both Web Push's VAPID key and the APNs signing key are one; each names itself in the problems it reports.
struct ES256Key: Sendable, Equatable {
    /// The private scalar (32 octets): kept as octets, which are `Sendable`, and made a signing key when used.
    private let privateKey: [UInt8]
    /// The public key, uncompressed (SEC 1 §2.3.3, 65 octets).
    let publicKey: [UInt8]
    /// The private key as PKCS #8 PEM (`-----BEGIN PRIVATE KEY-----`), which OpenSSL and this type both read.
    let pemRepresentation: String

    /// The labels a private key is written under: RFC 5915's SEC 1 structure as OpenSSL writes it, and PKCS #8
    /// (RFC 7468 §10).
    static let sec1Label = "EC PRIVATE KEY"
    static let pkcs8Label = "PRIVATE KEY"

    /// How a key is spoken of in a problem ("the VAPID key") and how an operator makes a good one.
    struct Naming: Sendable {
        var name: String
        var howToMake: String
    }

    init(_ key: P256.Signing.PrivateKey) {
        privateKey = Array(key.rawRepresentation)
        publicKey = Array(key.publicKey.x963Representation)
        pemRepresentation = key.pemRepresentation
    }

    static func generate() -> ES256Key {
        ES256Key(P256.Signing.PrivateKey())
    }

    /// Reads the private key from PEM text; any other blocks (`EC PARAMETERS`) are passed over.
    init(pem text: String, naming: Naming) throws(KeyProblem) {
        self.init(try Self.signingKey(pem: text, naming: naming))
    }

    /// Reads the key file at `path`; the problem names the file.
    init(file path: String, naming: Naming) throws(KeyProblem) {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw KeyProblem("cannot read \(naming.name) file \(path): \(error.localizedDescription)")
        }
        let key: P256.Signing.PrivateKey
        do throws(KeyProblem) {
            key = try Self.signingKey(pem: text, naming: naming)
        } catch {
            throw KeyProblem("\(path): \(error.description)")
        }
        self.init(key)
    }

    /// The key of the first private key block, or the problem in words an operator can act on.
    private static func signingKey(pem text: String, naming: Naming) throws(KeyProblem) -> P256.Signing.PrivateKey {
        let blocks = PEMText.blocks(in: text)
        guard let block = blocks.first(where: { [sec1Label, pkcs8Label].contains($0.label) }) else {
            if blocks.contains(where: { $0.label == "ENCRYPTED PRIVATE KEY" }) {
                throw KeyProblem("\(naming.name) is encrypted with a passphrase; write it without one (openssl pkey -in KEY -out PLAIN)")
            }
            if blocks.contains(where: { $0.label.hasSuffix("PUBLIC KEY") }) {
                throw KeyProblem("the file holds a public key; \(naming.name) must be the private one")
            }
            throw KeyProblem(
                "no private key in PEM (-----BEGIN EC PRIVATE KEY----- or -----BEGIN PRIVATE KEY-----); \(naming.howToMake)")
        }
        guard !block.hasHeaders else {
            throw KeyProblem("\(naming.name) is encrypted with a passphrase; write it without one (openssl ec -in KEY -out PLAIN)")
        }
        do {
            return try P256.Signing.PrivateKey(pemRepresentation: block.text)
        } catch {
            throw KeyProblem("the \(block.label) is not a P-256 (prime256v1) private key, or is damaged: \(error)")
        }
    }

    /// ES256 (RFC 7518 §3.4): an ECDSA P-256 SHA-256 signature of `message`, as r and s of 32 octets each.
    func sign(_ message: [UInt8]) throws(KeyProblem) -> [UInt8] {
        do {
            return Array(try P256.Signing.PrivateKey(rawRepresentation: privateKey).signature(for: message).rawRepresentation)
        } catch {
            throw KeyProblem("could not be signed: \(error)")
        }
    }
}

/// A key that cannot be read or cannot sign, in words; each transport passes it on as its own problem.
struct KeyProblem: Error, Hashable, Sendable, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}
