import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOSSL
import MailTestSupport
import Testing
import VicinityCore
@testable import VicinityTransports

/// The values a send is made of, checked when read: identifiers, device tokens, topics, the payload and the
/// headers a notification becomes, the environments and the HTTP client's settings.
@Suite("APNs values are checked when read and written as APNs takes them")
struct APNsValueTests {
    @Test("key and team IDs are 10 characters of A-Z and 0-9")
    func identifiers() throws {
        #expect(try APNsKeyID("ABC123DEFG").rawValue == "ABC123DEFG")
        #expect(try APNsTeamID("0123456789").rawValue == "0123456789")
        for refused in ["", "ABC123DEF", "ABC123DEFGH", "abc123defg", "ABC-23DEFG", "ABC123DEF ", "ÄBC123DEFG"] {
            #expect(throws: APNsProblem.self, "\(refused)") { try APNsKeyID(refused) }
            #expect(throws: APNsProblem.self, "\(refused)") { try APNsTeamID(refused) }
        }
    }

    @Test("a device token is an even number of 64 to 200 hex digits, kept in lower case and withheld from its description")
    func deviceTokens() throws {
        let token = String(repeating: "0F1E2D3C", count: 8)
        #expect(try APNsDeviceToken(token).hex == token.lowercased())
        #expect(try APNsDeviceToken(token) == APNsDeviceToken(token.lowercased()))
        #expect(try APNsDeviceToken(String(repeating: "ab", count: 100)).hex.count == 200)
        #expect(try !"\(APNsDeviceToken(token))".lowercased().contains(token.lowercased()))
        for refused in ["", String(token.dropLast()), String(token.dropLast(2)), String(repeating: "ab", count: 101), String(token.dropLast()) + "g"] {
            #expect(throws: APNsProblem.self, "\(refused)") { try APNsDeviceToken(refused) }
        }
    }

    @Test("a topic is a bundle ID, with a suffix when it has one: 1 to 255 of A-Z, a-z, 0-9, . and -")
    func topics() throws {
        for taken in ["com.example.vicinity", "com.example.vicinity.voip", "com.example.my-app.push-type.liveactivity", String(repeating: "a", count: 255)] {
            #expect(try APNsTopic(taken).rawValue == taken)
        }
        for refused in ["", "com example", "com/example", "com_example", "ชื่อ.app", String(repeating: "a", count: 256)] {
            #expect(throws: APNsProblem.self, "\(refused)") { try APNsTopic(refused) }
        }
    }

    @Test("the payload is aps with the alert, the default sound and the thread, and the notification's own keys beside it, in a fixed order")
    func payload() throws {
        let notification = APNsNotification(title: "Poke", body: "ดาว poked you", data: ["url": "/#friends", "event": "poke"], threadID: "friends")
        let body = try APNsPayload.body(for: notification)
        #expect(String(decoding: body, as: UTF8.self)
            == #"{"aps":{"alert":{"body":"ดาว poked you","title":"Poke"},"sound":"default","thread-id":"friends"},"event":"poke","url":"/#friends"}"#)
        let bare = try APNsPayload.body(for: APNsNotification(title: "T", body: "B"))
        #expect(String(decoding: bare, as: UTF8.self) == #"{"aps":{"alert":{"body":"B","title":"T"},"sound":"default"}}"#)
    }

    @Test("a payload of 4096 bytes is taken and one of 4097 refused in words that give both sizes")
    func payloadLimit() throws {
        // The bare payload's bytes besides the body: {"aps":{"alert":{"body":"","title":"T"},"sound":"default"}}.
        let overhead = try APNsPayload.body(for: APNsNotification(title: "T", body: "")).count
        let largest = APNsNotification(title: "T", body: String(repeating: "x", count: 4096 - overhead))
        #expect(try APNsPayload.body(for: largest).count == 4096)
        var over = largest
        over.body += "x"
        #expect(throws: APNsProblem(
            "the notification is 4097 bytes of JSON; APNs takes at most 4096 (Apple, \"Sending notification requests to APNs\")")) {
            try APNsPayload.body(for: over)
        }
    }

    @Test("apns-expiration is the date's UNIX seconds, 0 without one; a collapse ID over 64 bytes is sent as its 43-byte digest")
    func headers() {
        var notification = APNsNotification(title: "T", body: "B")
        #expect(notification.expirationHeader == "0")
        notification.expiration = Date(timeIntervalSince1970: 1_800_000_000.9)
        #expect(notification.expirationHeader == "1800000000")
        notification.expiration = Date(timeIntervalSince1970: -5)
        #expect(notification.expirationHeader == "0")

        #expect(notification.collapseIDHeader == nil)
        notification.collapseID = ""
        #expect(notification.collapseIDHeader == nil)
        notification.collapseID = String(repeating: "c", count: 64)
        #expect(notification.collapseIDHeader == String(repeating: "c", count: 64))
        let long = String(repeating: "ดาว", count: 8)  // 72 bytes
        notification.collapseID = long
        let digest = notification.collapseIDHeader
        #expect(digest == Base64URL.encode(Array(SHA256.hash(data: Array(long.utf8)))))
        #expect(digest?.utf8.count == 43)
        notification.collapseID = long + "!"
        #expect(notification.collapseIDHeader != digest, "two long IDs that share a start stay apart")
    }

    @Test("each environment is Apple's host on 443; the configuration follows the environment unless the server is set after it")
    func environments() throws {
        #expect(APNsEnvironment.production.server.absoluteString == "https://api.push.apple.com")
        #expect(APNsEnvironment.sandbox.server.absoluteString == "https://api.sandbox.push.apple.com")
        #expect(APNsEnvironment.allCases.allSatisfy { $0.server.port == nil && $0.server.scheme == "https" }, "https's own port, 443")
        var configuration = APNsConfiguration(key: .generate(), keyID: try APNsKeyID("ABC123DEFG"), teamID: try APNsTeamID("TEAM456XYZ"))
        #expect(configuration.environment == .production)
        #expect(configuration.server == APNsEnvironment.production.server)
        #expect(configuration.requestTimeout == .seconds(10))
        configuration.environment = .sandbox
        #expect(configuration.server == APNsEnvironment.sandbox.server)
        configuration.server = try #require(URL(string: "https://127.0.0.1:8443"))
        #expect(configuration.environment == .sandbox)
        #expect(configuration.server.absoluteString == "https://127.0.0.1:8443")
    }

    @Test("the HTTP client's settings offer HTTP/2, ask for TLS 1.2 or later, keep idle connections and follow no redirect")
    func httpClientSettings() {
        let settings = APNsConfiguration.httpClientConfiguration
        #expect(settings.httpVersion == .automatic)
        #expect(settings.tlsConfiguration?.minimumTLSVersion == .tlsv12)
        #expect(settings.connectionPool.idleTimeout == .minutes(10))
        #expect(!settings.connectionPool.retryConnectionEstablishment)
        #expect(settings.timeout.connect == .seconds(10))
    }
}

/// The APNs key as Apple hands it out (a PKCS #8 `.p8`) and as openssl writes one (SEC 1), and the refusals of
/// anything else, checked against what openssl says the key is.
@Suite("APNs signing keys", .enabled(if: RelayTools.run(["openssl", "version"]), "no openssl"))
final class APNsSigningKeyTests: Sendable {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("vicinity-apns-key-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: folder)
    }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// Runs openssl with `arguments` and `-out` the file `name` of the folder; that file's path.
    @discardableResult
    func openssl(_ arguments: String..., out name: String) throws -> String {
        let file = path(name)
        try #require(RelayTools.run(["openssl"] + arguments + ["-out", file]), "openssl \(arguments.joined(separator: " ")) failed")
        return file
    }

    /// The public key openssl derives from a private key file: the last 65 octets of its SubjectPublicKeyInfo.
    func opensslPublicKey(of key: String) throws -> [UInt8] {
        let der = try openssl("pkey", "-in", key, "-pubout", "-outform", "DER", out: "public-of-\(URL(fileURLWithPath: key).lastPathComponent).der")
        return Array(try Data(contentsOf: URL(fileURLWithPath: der)).suffix(65))
    }

    @Test("a PKCS #8 .p8 key and a SEC 1 key both load, from a file or from text, as the key openssl says they are")
    func loads() throws {
        let p8 = try openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", out: "AuthKey_ABC123DEFG.p8")
        let sec1 = try openssl("ecparam", "-name", "prime256v1", "-genkey", out: "sec1.pem")
        #expect(try String(contentsOfFile: p8, encoding: .utf8).hasPrefix("-----BEGIN PRIVATE KEY-----"))
        #expect(try String(contentsOfFile: sec1, encoding: .utf8).contains("-----BEGIN EC PRIVATE KEY-----"))
        for file in [p8, sec1] {
            let key = try APNsSigningKey(file: file)
            #expect(try key.publicKey == opensslPublicKey(of: file))
            #expect(try APNsSigningKey(pem: String(contentsOfFile: file, encoding: .utf8)) == key)
        }
    }

    @Test("a generated key is written as PKCS #8 that openssl and the reader take back, and no description shows it")
    func generated() throws {
        let key = APNsSigningKey.generate()
        #expect(key.pemRepresentation.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let file = path("generated.p8")
        try key.pemRepresentation.write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try APNsSigningKey(file: file) == key)
        #expect(try opensslPublicKey(of: file) == key.publicKey)
        #expect(!"\(key)".contains("PRIVATE"))
        #expect(!String(reflecting: key).contains(key.pemRepresentation.split(separator: "\n")[1]))
    }

    @Test("a missing file, text without a key, a public key, an encrypted key and a P-384 key are refused in words that say so")
    func refused() throws {
        func problem(_ file: String) -> String {
            do {
                _ = try APNsSigningKey(file: file)
                return "read"
            } catch {
                return error.description
            }
        }
        #expect(problem(path("absent.p8")).hasPrefix("cannot read the APNs key file \(path("absent.p8"))"))
        #expect(throws: APNsProblem.self) { try APNsSigningKey(pem: "garbage") }
        do {
            _ = try APNsSigningKey(pem: "garbage")
        } catch {
            #expect(error.description.hasPrefix("no private key in PEM"))
            #expect(error.description.contains("AuthKey_<key ID>.p8"), "says where an APNs key comes from")
        }

        let plain = try openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", out: "plain.pem")
        let publicOnly = try openssl("ec", "-in", plain, "-pubout", out: "public.pem")
        #expect(problem(publicOnly) == "\(publicOnly): the file holds a public key; the APNs key must be the private one")
        let encrypted = try openssl("pkcs8", "-topk8", "-in", plain, "-v2", "aes-256-cbc", "-passout", "pass:secret", out: "encrypted.p8")
        #expect(problem(encrypted).contains("the APNs key is encrypted with a passphrase"))
        let p384 = try openssl("ecparam", "-name", "secp384r1", "-genkey", "-noout", out: "p384.pem")
        #expect(problem(p384).contains("not a P-256 (prime256v1) private key"))
    }
}
