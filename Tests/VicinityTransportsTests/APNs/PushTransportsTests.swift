import AsyncHTTPClient
import Foundation
import NIOSSL
import Testing
import TLSTestSupport
import VicinityCore
@testable import VicinityTransports

/// The outbox's way to devices (`PushTransports`) with an APNs on loopback: what a notice becomes on an iPhone.
@Suite("Pushes to iOS through the outbox's transport", .enabled(if: TestAuthority.available, "no openssl: run Scripts/setup.sh"), .timeLimit(.minutes(2)))
struct PushTransportsTests {
    @Test("a vote's result reaches APNs as an alert that it is out, with its page and event beside aps, its expiry, the vote's collapse id, and one apns-id for every try")
    func voteResult() async throws {
        let key = APNsSigningKey.generate()
        let account = TestAPNs.Account(publicKey: key.publicKey, keyID: "ABC123DEFG", teamID: "TEAM456XYZ")
        let created = Timestamp(millisecondsSince1970: 1_800_000_000_000)
        let notice = PushNotice(
            event: EventID(77), type: .voteFinished, title: "Where to meet", body: "The result of “Where to meet” is out.",
            url: "/#votes/K7M3QX", tag: "vote-K7M3QX")
        let push = OutgoingPush(
            id: .random(), notice: notice, device: .random(),
            target: .apns(APNsAddress(stored: String(repeating: "0f1e2d3c", count: 8), topic: "edu.csulb.vicinity")),
            createdAt: created, expiresAt: created + .seconds(86_400))
        try await TestAPNs.run(account: account, answers: [.refuse(503, reason: "ServiceUnavailable"), .accept]) { apns, port, authority in
            var http = APNsConfiguration.httpClientConfiguration
            http.tlsConfiguration?.trustRoots = .file(authority.certificateFile)
            try await HTTPClient.withHTTPClient(configuration: http) { client in
                var configuration = APNsConfiguration(
                    key: key, keyID: try APNsKeyID("ABC123DEFG"), teamID: try APNsTeamID("TEAM456XYZ"), environment: .sandbox)
                configuration.server = try #require(URL(string: "https://127.0.0.1:\(port)"))
                configuration.requestTimeout = .seconds(20)
                let transports = PushTransports(webPush: nil, apns: APNsClient(configuration: configuration, httpClient: client))
                #expect(transports.kinds == [.apns] && transports.applicationServerKey == nil)
                guard case .retry = await transports.deliver(push) else {
                    Issue.record("a 503 is not a retry")
                    return
                }
                #expect(await transports.deliver(push) == .delivered)
            }
            let received = apns.received
            try #require(received.count == 2)
            #expect(received[0].headers["apns-id"] == received[1].headers["apns-id"], "one notification to APNs however often tried")
            let delivered = received[1]
            #expect(delivered.problems == [])
            let collapse = try #require(delivered.headers["apns-collapse-id"])
            #expect(collapse.count == 32 && !collapse.contains("K7M3QX"), "the tag, unreadable to Apple: \(collapse)")
            let again = OutgoingPush(
                id: .random(), notice: notice, device: push.device, target: push.target, createdAt: created, expiresAt: push.expiresAt)
            let elsewhere = OutgoingPush(
                id: .random(), notice: notice, device: .random(), target: push.target, createdAt: created, expiresAt: push.expiresAt)
            #expect(PushMessage.collapseKey(again) == collapse, "the same tag to the same device collapses")
            #expect(PushMessage.collapseKey(elsewhere) != collapse, "another device's key tells nothing of this one's")
            #expect(delivered.headers["apns-expiration"] == "1800086400")
            let payload = try delivered.payloadObject()
            let aps = try #require(payload["aps"] as? [String: Any])
            #expect(aps["alert"] as? [String: String] == ["title": "Where to meet", "body": "The result of “Where to meet” is out."])
            #expect(aps["thread-id"] as? String == "vote_result")
            #expect(payload["type"] as? String == "vote_finished" && payload["url"] as? String == "/#votes/K7M3QX" && payload["event"] as? String == "77")
            #expect(payload.count == 4, "aps and the notice's three keys, nothing else: \(payload.keys)")
        }
    }
}
