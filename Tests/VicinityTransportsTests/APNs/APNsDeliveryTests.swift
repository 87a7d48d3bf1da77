import AsyncHTTPClient
import Foundation
import NIOSSL
import Synchronization
import Testing
import TLSTestSupport
import VicinityCore
@testable import VicinityTransports

/// The client against an APNs on loopback (`TestAPNs`): HTTP/2 over TLS with a certificate the client trusts by
/// configuration, checking the provider token's signature with the key's public half. Time is the test's own
/// clock, moved by hand: no test sleeps, and none asserts how long anything took.
@Suite("APNs delivery to an HTTP/2 receiver over TLS", .enabled(if: TestAuthority.available, "no openssl: run Scripts/setup.sh"), .timeLimit(.minutes(2)))
struct APNsDeliveryTests {
    static let keyID = "ABC123DEFG"
    static let teamID = "TEAM456XYZ"
    static let topic = "com.example.vicinity"
    /// 32 octets, as today's tokens are.
    static let deviceToken = String(repeating: "0f1e2d3c", count: 8)
    /// Thu, 15 Jan 2027 08:00:00 GMT.
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// The test's clock: what the client reads as now, moved only by the test.
    final class TestClock: Sendable {
        private let current: Mutex<Date>
        init(_ start: Date) { current = Mutex(start) }
        var now: Date { current.withLock { $0 } }
        func advance(_ duration: Duration) {
            current.withLock { $0 += TimeInterval(duration.components.seconds) }
        }
    }

    struct Setup {
        var key = APNsSigningKey.generate()
        var clock = TestClock(APNsDeliveryTests.start)
        var logs = LogRecorder()

        var account: TestAPNs.Account {
            TestAPNs.Account(publicKey: key.publicKey, keyID: APNsDeliveryTests.keyID, teamID: APNsDeliveryTests.teamID)
        }
    }

    /// A client of its own HTTP client, made from `APNsConfiguration.httpClientConfiguration` and trusting the
    /// receiver's authority, sending to 127.0.0.1:`port`; shut down after `body`.
    func withClient<Value>(
        _ setup: Setup, port: Int, authority: TestAuthority, httpVersion: HTTPClient.Configuration.HTTPVersion = .automatic,
        _ body: (APNsClient) async throws -> Value
    ) async throws -> Value {
        var http = APNsConfiguration.httpClientConfiguration
        http.tlsConfiguration?.trustRoots = .file(authority.certificateFile)
        http.httpVersion = httpVersion
        return try await HTTPClient.withHTTPClient(configuration: http) { client in
            var configuration = APNsConfiguration(
                key: setup.key, keyID: try APNsKeyID(Self.keyID), teamID: try APNsTeamID(Self.teamID), environment: .sandbox)
            configuration.server = try #require(URL(string: "https://127.0.0.1:\(port)"))
            // Short enough for a failure to be quick, long enough for a busy machine.
            configuration.requestTimeout = .seconds(20)
            let clock = setup.clock
            return try await body(APNsClient(configuration: configuration, httpClient: client, now: { clock.now }, logger: setup.logs.logger))
        }
    }

    func send(
        _ client: APNsClient, _ notification: APNsNotification = APNsNotification(title: "Poke", body: "Someone nearby poked you"),
        id: UUID? = nil
    ) async throws -> APNsOutcome {
        await client.send(notification, to: try APNsDeviceToken(Self.deviceToken), topic: try APNsTopic(Self.topic), id: id)
    }

    @Test("a notification arrives over HTTP/2 with the alert's headers, a provider token that verifies with the key, and the payload sent")
    func delivered() async throws {
        let setup = Setup()
        let id = UUID()
        let notification = APNsNotification(
            title: "Poke", body: "ดาว 🌟 poked you", data: ["event": "poke", "url": "/#friends"],
            expiration: Self.start.addingTimeInterval(3600), collapseID: "poke-from-42", threadID: "friends")
        try await TestAPNs.run(account: setup.account) { apns, port, authority in
            let (first, plain) = try await withClient(setup, port: port, authority: authority) { client in
                let first = await client.send(
                    notification, to: try APNsDeviceToken(Self.deviceToken.uppercased()), topic: try APNsTopic(Self.topic), id: id)
                return (first, try await send(client))
            }
            #expect(first == .delivered(apnsID: id.uuidString.lowercased()))
            guard case .delivered(let generated) = plain else {
                Issue.record("a plain notification gave \(plain)")
                return
            }
            #expect(generated != nil, "APNs's own apns-id when none was sent")

            let received = apns.received
            try #require(received.count == 2)
            let push = received[0]
            #expect(push.problems == [])
            #expect(push.path == "/3/device/\(Self.deviceToken)", "the token in lower case")
            #expect(push.headers["apns-push-type"] == "alert")
            #expect(push.headers["apns-topic"] == Self.topic)
            #expect(push.headers["apns-expiration"] == "1800003600")
            #expect(push.headers["apns-priority"] == "10")
            #expect(push.headers["apns-collapse-id"] == "poke-from-42")
            #expect(push.headers["apns-id"] == id.uuidString.lowercased())
            #expect(push.headers["content-type"] == "application/json")
            #expect(push.jwtHeader == ["alg": "ES256", "kid": Self.keyID])
            #expect(push.issuer == Self.teamID)
            #expect(push.issuedAt == 1_800_000_000)

            let payload = try push.payloadObject()
            let aps = try #require(payload["aps"] as? [String: Any])
            #expect(aps["alert"] as? [String: String] == ["title": "Poke", "body": "ดาว 🌟 poked you"])
            #expect(aps["sound"] as? String == "default")
            #expect(aps["thread-id"] as? String == "friends")
            #expect(payload["event"] as? String == "poke")
            #expect(payload["url"] as? String == "/#friends")
            #expect(payload.count == 3)

            // Without a date, a collapse ID or an id: now or never, and nothing else said.
            let second = received[1]
            #expect(second.problems == [])
            #expect(second.headers["apns-expiration"] == "0")
            #expect(second.headers["apns-collapse-id"] == nil)
            #expect(second.headers["apns-id"] == nil)
            #expect(try (second.payloadObject()["aps"] as? [String: Any])?["thread-id"] == nil)
        }
        #expect(setup.logs.lines.contains { $0.contains("notification delivered") && $0.contains("apns.topic=\(Self.topic)") })
        #expect(!setup.logs.lines.contains { $0.lowercased().contains(Self.deviceToken) }, "the device token is never logged")
    }

    @Test("the receiver speaks HTTP/2 only: a client held to HTTP/1.1 gets no answer, so every delivery here went over HTTP/2")
    func http2Only() async throws {
        let setup = Setup()
        try await TestAPNs.run(account: setup.account) { apns, port, authority in
            let outcome = try await withClient(setup, port: port, authority: authority, httpVersion: .http1Only) { client in
                try await send(client)
            }
            guard case .retry(_, let reason) = outcome else {
                Issue.record("an HTTP/1.1 request was answered: \(outcome)")
                return
            }
            #expect(reason.hasPrefix("APNs at 127.0.0.1 could not be reached"))
            #expect(apns.received.isEmpty)
        }
    }

    @Test("one provider token serves every send, concurrent ones too, until it is 50 minutes old; then one new token is signed")
    func tokenReused() async throws {
        let setup = Setup()
        try await TestAPNs.run(account: setup.account) { apns, port, authority in
            try await withClient(setup, port: port, authority: authority) { client in
                var outcomes = try await withThrowingTaskGroup(of: APNsOutcome.self) { group in
                    for _ in 0..<4 { group.addTask { try await send(client) } }
                    return try await group.reduce(into: [APNsOutcome]()) { $0.append($1) }
                }
                setup.clock.advance(.seconds(50 * 60 - 1))
                outcomes.append(try await send(client))
                setup.clock.advance(.seconds(1))
                outcomes.append(try await send(client))
                setup.clock.advance(.seconds(19 * 60))
                outcomes.append(try await send(client))
                #expect(outcomes.map(Self.kind) == Array(repeating: "delivered", count: 7))
            }
            let received = apns.received
            try #require(received.count == 7)
            #expect(received.allSatisfy { $0.problems.isEmpty }, "\(received.map(\.problems))")
            let first = try #require(received[0].jwt)
            #expect(received[0..<5].allSatisfy { $0.jwt == first }, "the same token for 49:59")
            #expect(received[0..<5].allSatisfy { $0.issuedAt == 1_800_000_000 })
            let renewed = try #require(received[5].jwt)
            #expect(renewed != first)
            #expect(received[5].issuedAt == 1_800_003_000, "signed anew at 50 minutes")
            #expect(received[6].jwt == renewed, "and kept again")
        }
    }

    @Test("403 ExpiredProviderToken is a misconfiguration and the next send signs a new token; a refusal of the topic keeps the token")
    func expiredToken() async throws {
        let setup = Setup()
        let answers: [TestAPNs.Answer] = [.refuse(400, reason: "BadTopic"), .refuse(403, reason: "ExpiredProviderToken")]
        try await TestAPNs.run(account: setup.account, answers: answers) { apns, port, authority in
            let outcomes = try await withClient(setup, port: port, authority: authority) { client in
                var outcomes = [try await send(client)]
                setup.clock.advance(.seconds(60))
                outcomes.append(try await send(client))
                setup.clock.advance(.seconds(60))
                outcomes.append(try await send(client))
                return outcomes
            }
            #expect(outcomes[0] == .gone(reason: "the device's app is not one this key pushes to (APNs answered 400 BadTopic)"))
            #expect(outcomes[1] == .misconfigured(
                reason: "APNs refused the key, its key or team ID, or the environment (APNs answered 403 ExpiredProviderToken)"))
            #expect(Self.kind(outcomes[2]) == "delivered")
            let received = apns.received
            try #require(received.count == 3)
            #expect(received[1].jwt == received[0].jwt, "BadTopic left the token alone")
            #expect(received[2].jwt != received[1].jwt)
            #expect(received[2].issuedAt == 1_800_000_120, "the token refused was dropped and a new one signed")
        }
    }

    /// The outcome's kind and wait, for comparing outcomes whose words differ.
    static func kind(_ outcome: APNsOutcome) -> String {
        switch outcome {
        case .delivered: "delivered"
        case .gone: "gone"
        case .retry(let after, _): "retry after \(after.map { "\($0.components.seconds) s" } ?? "nothing said")"
        case .failed: "failed"
        case .misconfigured: "misconfigured"
        }
    }

    static func reason(_ outcome: APNsOutcome) -> String {
        switch outcome {
        case .delivered: ""
        case .gone(let reason), .retry(_, let reason), .failed(let reason), .misconfigured(let reason): reason
        }
    }

    @Test("each refusal APNs answers becomes the outcome the outbox acts on, with APNs's status and reason and without the device token")
    func refusals() async throws {
        let setup = Setup()
        let cases: [(answer: TestAPNs.Answer, kind: String, said: String)] = [
            (.refuse(410, reason: "Unregistered"), "gone", "410 Unregistered"),
            (.refuse(400, reason: "BadDeviceToken"), "gone", "400 BadDeviceToken"),
            (.refuse(400, reason: "DeviceTokenNotForTopic"), "gone", "400 DeviceTokenNotForTopic"),
            (.refuse(403, reason: "InvalidProviderToken"), "misconfigured", "403 InvalidProviderToken"),
            (.refuse(403, reason: "MissingProviderToken"), "misconfigured", "403 MissingProviderToken"),
            (.refuse(400, reason: "TopicDisallowed"), "gone", "400 TopicDisallowed"),
            (.refuse(400, reason: "BadCollapseId"), "failed", "400 BadCollapseId"),
            (.refuse(413, reason: "PayloadTooLarge"), "failed", "413 PayloadTooLarge"),
            (.refuse(429, reason: "TooManyRequests", headers: ["retry-after": "7"]), "retry after 7 s", "429 TooManyRequests"),
            (.refuse(503, reason: "ServiceUnavailable", headers: ["retry-after": "120"]), "retry after 120 s", "503 ServiceUnavailable"),
            (.refuse(500, reason: "InternalServerError"), "retry after nothing said", "500 InternalServerError"),
        ]
        try await TestAPNs.run(account: setup.account, answers: cases.map(\.answer)) { apns, port, authority in
            let outcomes = try await withClient(setup, port: port, authority: authority) { client in
                var outcomes: [APNsOutcome] = []
                for _ in cases { outcomes.append(try await send(client)) }
                return outcomes
            }
            for (outcome, expected) in zip(outcomes, cases) {
                #expect(Self.kind(outcome) == expected.kind, "\(expected.said)")
                #expect(Self.reason(outcome).contains("APNs answered \(expected.said)"), "\(outcome)")
                #expect(!Self.reason(outcome).contains(Self.deviceToken))
            }
            #expect(outcomes[0].deliveryOutcome == .gone(reason: Self.reason(outcomes[0])))
            #expect(outcomes[8].deliveryOutcome == .retry(after: .seconds(7), reason: "APNs answered 429 TooManyRequests"))
            #expect(apns.received.count == cases.count)
            #expect(apns.received.allSatisfy { $0.problems.isEmpty })
        }
    }

    @Test("a receiver that is down is a retry that names APNs's host, never the device token")
    func receiverDown() async throws {
        let setup = Setup()
        // A port that was just listened on and is closed now.
        let (port, authority) = try await TestAPNs.run(account: setup.account) { _, port, authority in (port, authority) }
        let outcome = try await withClient(setup, port: port, authority: authority) { client in try await send(client) }
        guard case .retry(nil, let reason) = outcome else {
            Issue.record("a closed port gave \(outcome)")
            return
        }
        #expect(reason.hasPrefix("APNs at 127.0.0.1 could not be reached"))
        #expect(!reason.contains(Self.deviceToken))
        #expect(outcome.deliveryOutcome == .retry(after: nil, reason: reason))
    }

    @Test("a notification over 4096 bytes of JSON, or with a key of its own named aps, is refused before any request; one that fits is sent")
    func oversize() async throws {
        let setup = Setup()
        try await TestAPNs.run(account: setup.account) { apns, port, authority in
            let outcomes = try await withClient(setup, port: port, authority: authority) { client in
                [
                    try await send(client, APNsNotification(title: "Poke", body: String(repeating: "x", count: 4100))),
                    try await send(client, APNsNotification(title: "Poke", body: "hello", data: ["aps": "mine"])),
                    try await send(client, APNsNotification(title: "Poke", body: String(repeating: "x", count: 3900))),
                ]
            }
            #expect(Self.kind(outcomes[0]) == "failed")
            #expect(Self.reason(outcomes[0]).contains("APNs takes at most 4096"), "\(outcomes[0])")
            #expect(outcomes[1] == .failed(reason: "a notification's own keys cannot include aps, which is Apple's"))
            #expect(Self.kind(outcomes[2]) == "delivered")
            let received = apns.received
            try #require(received.count == 1, "only the one that fits was sent")
            #expect(received[0].problems == [])
            #expect(received[0].payload.count <= 4096)
        }
    }
}
