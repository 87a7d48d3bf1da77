import Testing
import VicinityCore
@testable import VicinityTransports

@Suite("Web Push subscriptions, topics and subjects are checked when read")
struct WebPushSubscriptionTests {
    typealias Example = WebPushEncryptionTests.Example

    func subscription(_ endpoint: String, allowHTTP: Bool = false) throws -> WebPushSubscription {
        try WebPushSubscription(endpoint: endpoint, p256dh: Example.userAgentPublicKey, auth: Example.authSecret, allowHTTP: allowHTTP)
    }

    @Test("an http endpoint is refused unless plain http is allowed, and an endpoint without a host always")
    func httpsOnly() throws {
        #expect(throws: WebPushProblem("a push endpoint must be an https URL")) {
            try subscription("http://127.0.0.1:8080/push/abc")
        }
        #expect(try !subscription("http://127.0.0.1:8080/push/abc", allowHTTP: true).isHTTPS)
        #expect(try subscription("https://push.example.net/push/abc").isHTTPS)
        #expect(throws: WebPushProblem.self) { try subscription("ftp://push.example.net/push/abc", allowHTTP: true) }
        #expect(throws: WebPushProblem.self) { try subscription("https:///push/abc") }
        #expect(throws: WebPushProblem.self) { try subscription("https://user:secret@push.example.net/push/abc") }
    }

    @Test("the token's audience is the endpoint's origin: scheme and host in lower case, a port only when not the default")
    func origin() throws {
        #expect(try subscription("https://Push.Example.NET/push/abc?x=1").origin == "https://push.example.net")
        #expect(try subscription("https://push.example.net:443/push/abc").origin == "https://push.example.net")
        #expect(try subscription("https://push.example.net:8443/push/abc").origin == "https://push.example.net:8443")
        #expect(try subscription("http://127.0.0.1:80/push", allowHTTP: true).origin == "http://127.0.0.1")
        #expect(try subscription("https://[2001:db8::1]:8443/push").origin == "https://[2001:db8::1]:8443")
    }

    @Test("keys are taken as browsers write them, padded or not; a key off the curve, compressed or short, and an auth secret not of 16 octets are refused")
    func keys() throws {
        let endpoint = "https://push.example.net/push/abc"
        let padded = try WebPushSubscription(endpoint: endpoint, p256dh: Example.userAgentPublicKey + "=", auth: Example.authSecret + "==")
        #expect(padded.userAgentPublicKey.count == 65)
        #expect(padded.authSecret.count == 16)

        let point = try WebPushEncryptionTests.decoded(Example.userAgentPublicKey)
        var offCurve = point
        offCurve[64] ^= 0x01
        let compressed = [0x02 | (point[64] & 1)] + Array(point[1...32])
        for key in [Base64URL.encode(offCurve), Base64URL.encode(compressed), String(Example.userAgentPublicKey.dropLast(4)), "not base64url!"] {
            #expect(throws: WebPushProblem("the subscription's p256dh is not an uncompressed P-256 public key in base64url")) {
                try WebPushSubscription(endpoint: endpoint, p256dh: key, auth: Example.authSecret)
            }
        }
        #expect(throws: WebPushProblem("the subscription's auth is not 16 octets in base64url")) {
            try WebPushSubscription(endpoint: endpoint, p256dh: Example.userAgentPublicKey, auth: "AAAA")
        }
    }

    @Test("a topic is 1 to 32 characters of the base64url alphabet")
    func topics() throws {
        #expect(try WebPushTopic("vote-42_result").rawValue == "vote-42_result")
        #expect(try WebPushTopic(String(repeating: "a", count: 32)).rawValue.count == 32)
        for refused in ["", String(repeating: "a", count: 33), "vote 42", "vote/42", "투표"] {
            #expect(throws: WebPushProblem.self, "\(refused)") { try WebPushTopic(refused) }
        }
    }

    @Test("a VAPID subject is a mailto: address or an https: URL")
    func subjects() throws {
        #expect(try VAPIDSubject("mailto:push@vicinity.example").rawValue == "mailto:push@vicinity.example")
        #expect(try VAPIDSubject("https://vicinity.example/contact").rawValue == "https://vicinity.example/contact")
        for refused in ["", "push@vicinity.example", "mailto:", "mailto:nobody", "http://vicinity.example", "mailto:a@b c", "https://"] {
            #expect(throws: WebPushProblem.self, "\(refused)") { try VAPIDSubject(refused) }
        }
    }
}
