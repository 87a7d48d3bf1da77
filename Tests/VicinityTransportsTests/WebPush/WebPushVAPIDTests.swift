import Crypto
import Foundation
import MailTestSupport
import Testing
import VicinityCore
@testable import VicinityTransports

/// The server's VAPID key as operators make it (with openssl, or `vicinity push keygen`), and the token it signs,
/// checked with swift-crypto's verifier and against what openssl says the key is.
@Suite("VAPID keys and tokens (RFC 8292)", .enabled(if: RelayTools.run(["openssl", "version"]), "no openssl"))
final class WebPushVAPIDTests: Sendable {
    /// A folder of its own for each test's key files, removed after it.
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("vicinity-vapid-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: folder)
    }

    /// Runs openssl with `arguments` and `-out` a file of the folder named `out`; that file's path.
    @discardableResult
    func openssl(_ arguments: String..., out name: String) throws -> String {
        let file = path(name)
        try #require(RelayTools.run(["openssl"] + arguments + ["-out", file]), "openssl \(arguments.joined(separator: " ")) failed")
        return file
    }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// The public key openssl derives from a private key file: the last 65 octets of its SubjectPublicKeyInfo.
    func opensslPublicKey(of key: String) throws -> [UInt8] {
        let der = try openssl("pkey", "-in", key, "-pubout", "-outform", "DER", out: "public-of-\(URL(fileURLWithPath: key).lastPathComponent).der")
        return Array(try Data(contentsOf: URL(fileURLWithPath: der)).suffix(65))
    }

    @Test("a SEC 1 key from openssl ecparam is read, with or without the EC PARAMETERS block, and its public key is openssl's")
    func sec1() throws {
        let bare = try openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", out: "bare.pem")
        let withParameters = try openssl("ecparam", "-name", "prime256v1", "-genkey", out: "with-parameters.pem")
        #expect(try String(contentsOfFile: bare, encoding: .utf8).hasPrefix("-----BEGIN EC PRIVATE KEY-----"))
        #expect(try String(contentsOfFile: withParameters, encoding: .utf8).hasPrefix("-----BEGIN EC PARAMETERS-----"))
        for file in [bare, withParameters] {
            let key = try VAPIDKey(file: file)
            #expect(try opensslPublicKey(of: file) == key.publicKey)
            #expect(key.publicKeyBase64URL == Base64URL.encode(key.publicKey))
            #expect(key.publicKeyBase64URL.count == 87, "65 octets, unpadded")
        }
    }

    @Test("a PKCS #8 key from openssl genpkey is read, and its public key is openssl's")
    func pkcs8() throws {
        let file = try openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", out: "pkcs8.pem")
        #expect(try String(contentsOfFile: file, encoding: .utf8).hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let opensslKey = try opensslPublicKey(of: file)
        #expect(try VAPIDKey(file: file).publicKey == opensslKey)
    }

    @Test("a generated key is written as PKCS #8 PEM that openssl and the reader both take back as the same key")
    func generated() throws {
        let key = VAPIDKey.generate()
        #expect(key.pemRepresentation.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let file = path("generated.pem")
        try key.pemRepresentation.write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try VAPIDKey(file: file) == key)
        #expect(try opensslPublicKey(of: file) == key.publicKey)
        #expect(!"\(key)".contains(key.pemRepresentation.split(separator: "\n")[1]), "the description withholds the private key")
        #expect(!String(reflecting: key).contains("PRIVATE"))
    }

    @Test("a missing file, a file without a key, an encrypted key, a public key and a P-384 key are refused in words that say so")
    func badFiles() throws {
        func problem(_ file: String) -> String {
            do {
                _ = try VAPIDKey(file: file)
                return "read"
            } catch {
                return error.description
            }
        }
        #expect(problem(path("absent.pem")).hasPrefix("cannot read the VAPID key file \(path("absent.pem"))"))

        let text = path("text.pem")
        try "not a key\n".write(toFile: text, atomically: true, encoding: .utf8)
        #expect(problem(text).contains("no private key in PEM"))

        let plain = try openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", out: "plain.pem")
        let legacyEncrypted = try openssl("ec", "-in", plain, "-aes256", "-passout", "pass:secret", out: "legacy.pem")
        let encrypted = try openssl("pkcs8", "-topk8", "-in", plain, "-v2", "aes-256-cbc", "-passout", "pass:secret", out: "encrypted.pem")
        #expect(problem(legacyEncrypted).contains("encrypted with a passphrase"))
        #expect(problem(encrypted).contains("encrypted with a passphrase"))

        let publicOnly = try openssl("ec", "-in", plain, "-pubout", out: "public.pem")
        #expect(problem(publicOnly).contains("holds a public key"))

        let p384 = try openssl("ecparam", "-name", "secp384r1", "-genkey", "-noout", out: "p384.pem")
        #expect(problem(p384).contains("not a P-256 (prime256v1) private key"))

        // The DER's first octets (its SEQUENCE's tag and length) zeroed.
        var lines = try String(contentsOfFile: plain, encoding: .utf8).components(separatedBy: "\n")
        lines[1] = "AAAAAAAA" + lines[1].dropFirst(8)
        let damaged = path("damaged.pem")
        try lines.joined(separator: "\n").write(toFile: damaged, atomically: true, encoding: .utf8)
        #expect(problem(damaged).contains("not a P-256 (prime256v1) private key, or is damaged"))
    }

    @Test("the token is an ES256 JWT that verifies with the k= key and claims the endpoint's origin, an expiry 12 hours ahead and the subject")
    func token() throws {
        let key = VAPIDKey.generate()
        let subject = try VAPIDSubject("mailto:push@vicinity.example")
        let now = Date(timeIntervalSince1970: 1_764_230_400.75)
        let header = try VAPIDToken.authorization(audience: "https://push.example.net", subject: subject, key: key, now: now)

        let prefix = "vapid t="
        try #require(header.hasPrefix(prefix))
        let parameters = header.dropFirst(prefix.count).components(separatedBy: ", k=")
        try #require(parameters.count == 2)
        let (token, k) = (parameters[0], parameters[1])
        #expect(k == key.publicKeyBase64URL)

        let parts = token.split(separator: ".").map(String.init)
        try #require(parts.count == 3)
        let headerJSON = try #require(Base64URL.decode(parts[0]))
        let headerObject = try JSONSerialization.jsonObject(with: Data(headerJSON)) as? [String: String]
        #expect(headerObject == ["typ": "JWT", "alg": "ES256"])

        struct Claims: Decodable, Equatable {
            var aud: String
            var exp: Int64
            var sub: String
        }
        let claims = try JSONDecoder().decode(Claims.self, from: Data(try #require(Base64URL.decode(parts[1]))))
        #expect(claims == Claims(aud: "https://push.example.net", exp: 1_764_230_400 + 12 * 3600, sub: "mailto:push@vicinity.example"))

        let signature = try #require(Base64URL.decode(parts[2]))
        #expect(signature.count == 64, "r and s, 32 octets each (RFC 7518 §3.4), not DER")
        let publicKey = try P256.Signing.PublicKey(x963Representation: try #require(Base64URL.decode(k)))
        let ecdsa = try P256.Signing.ECDSASignature(rawRepresentation: signature)
        let signed = Array((parts[0] + "." + parts[1]).utf8)
        #expect(publicKey.isValidSignature(ecdsa, for: signed))
        #expect(!publicKey.isValidSignature(ecdsa, for: signed + [0x20]), "a signature of these octets only")
    }

    @Test("an https subject is written with its slashes as they are")
    func httpsSubject() throws {
        let token = try VAPIDToken.jwt(
            .init(aud: "https://push.example.net", exp: 1, sub: "https://vicinity.example/contact"), key: VAPIDKey.generate())
        let claims = try #require(Base64URL.decode(String(token.split(separator: ".")[1])))
        #expect(String(decoding: claims, as: UTF8.self) == #"{"aud":"https://push.example.net","exp":1,"sub":"https://vicinity.example/contact"}"#)
    }

    @Test("a push service's token is signed once and reused while more than half its 12 hours remain; each origin has its own")
    func tokensAreReused() throws {
        let cache = VAPIDTokenCache(), key = VAPIDKey.generate(), subject = try VAPIDSubject("mailto:push@vicinity.example")
        let start = Date(timeIntervalSince1970: 1_764_230_400)
        let first = try cache.authorization(audience: "https://fcm.googleapis.com", subject: subject, key: key, now: start)
        #expect(try cache.authorization(audience: "https://fcm.googleapis.com", subject: subject, key: key, now: start + 6 * 3600 - 1) == first)
        let other = try cache.authorization(audience: "https://updates.push.services.mozilla.com", subject: subject, key: key, now: start)
        #expect(other != first && other.contains("k=\(key.publicKeyBase64URL)"))
        let renewed = try cache.authorization(audience: "https://fcm.googleapis.com", subject: subject, key: key, now: start + 6 * 3600)
        #expect(renewed != first, "half its life gone: signed anew, with a later expiry")
    }
}

