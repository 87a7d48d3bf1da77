import AsyncHTTPClient
import Foundation
import MailTestSupport
import Testing
import VicinityCore
@testable import VicinityTransports

/// The client against a push service on loopback that is not ours (`push_service.py`): Python checks the VAPID
/// token with the k= key and decrypts the body with http_ece and the subscription's private key, which never
/// leaves it. No test waits on a clock: each awaits the answer, bounded by the client's own timeout and the
/// suite's time limit.
@Suite("Web Push delivery to a real push service", .enabled(if: PushTools.available, PushTools.howToInstall), .timeLimit(.minutes(2)))
struct WebPushDeliveryTests {
    static let subject = "mailto:push@vicinity.example"
    /// What a poke's push might say: Thai and an emoji, and no position.
    static let message = Array(#"{"kind":"poke","from":"ดาว 🌟","panel":"friends"}"#.utf8)
    static let options = WebPushOptions(timeToLive: .seconds(3600), urgency: .high)

    /// A client that takes http endpoints, with its own HTTP client, shut down after `body`; it logs to `logs`.
    func withClient<Value>(
        key: VAPIDKey = VAPIDKey.generate(), subject: String = Self.subject, allowHTTP: Bool = true, logs: LogRecorder = LogRecorder(),
        _ body: (WebPushClient) async throws -> Value
    ) async throws -> Value {
        try await HTTPClient.withHTTPClient(configuration: WebPushConfiguration.httpClientConfiguration) { http in
            var configuration = WebPushConfiguration(key: key, subject: try VAPIDSubject(subject), allowHTTP: allowHTTP)
            // Short enough for a failure to be quick, long enough for a busy machine's Python to answer.
            configuration.requestTimeout = .seconds(20)
            return try await body(WebPushClient(configuration: configuration, httpClient: http, logger: logs.logger))
        }
    }

    func subscribe(to service: TestPushService) throws -> WebPushSubscription {
        try WebPushSubscription(endpoint: service.endpoint, p256dh: service.p256dh, auth: service.auth, allowHTTP: true)
    }

    /// What one push of `message`, with the usual options, to `service` comes to.
    func push(to service: TestPushService, key: VAPIDKey = VAPIDKey.generate(), allowHTTP: Bool = true) async throws -> WebPushOutcome {
        try await withClient(key: key, allowHTTP: allowHTTP) { client in
            try await client.send(Self.message, to: subscribe(to: service), options: Self.options)
        }
    }

    @Test("a push arrives with a VAPID token the push service verifies, and the browser decrypts exactly the message sent")
    func delivered() async throws {
        let service = try await TestPushService(subject: Self.subject)
        let key = VAPIDKey.generate()
        let topic = try WebPushTopic("vote-42")
        let logs = LogRecorder()
        let outcome = try await withClient(key: key, logs: logs) { client in
            let options = WebPushOptions(timeToLive: .seconds(3600), urgency: .high, topic: topic)
            return try await client.send(Self.message, to: subscribe(to: service), options: options)
        }
        #expect(outcome == .delivered)

        let received = try service.received()
        try #require(received.count == 1)
        let push = received[0]
        #expect(push.problems == [])
        #expect(push.plaintextBytes == Self.message)
        #expect(push.k == key.publicKeyBase64URL)
        #expect(push.claims?.aud == "http://127.0.0.1:\(service.port)")
        #expect(push.claims?.sub == Self.subject)
        #expect(push.headers["ttl"] == "3600")
        #expect(push.headers["urgency"] == "high")
        #expect(push.headers["topic"] == "vote-42")
        #expect(push.headers["content-encoding"] == "aes128gcm")
        #expect(push.headers["content-type"] == "application/octet-stream")

        // The log names the push service, never the endpoint, which is what lets anyone push to the browser.
        #expect(logs.lines.contains { $0.contains("push delivered") && $0.contains("push.service=http://127.0.0.1:\(service.port)") })
        #expect(!logs.lines.contains { $0.contains(push.path) })
    }

    @Test("the push service's checks are real: a body encrypted for another browser and a token for another subject are refused")
    func checksRefuse() async throws {
        let service = try await TestPushService(subject: Self.subject)
        let otherBrowser = try WebPushSubscription(
            endpoint: service.endpoint, p256dh: WebPushEncryptionTests.Example.userAgentPublicKey,
            auth: WebPushEncryptionTests.Example.authSecret, allowHTTP: true)
        let undecryptable = try await withClient { client in
            await client.send(Self.message, to: otherBrowser, options: Self.options)
        }
        let otherSubject = try await withClient(subject: "mailto:someone-else@vicinity.example") { client in
            try await client.send(Self.message, to: subscribe(to: service), options: Self.options)
        }
        for (outcome, problem) in [(undecryptable, "does not decrypt"), (otherSubject, "sub is")] {
            guard case .failed(let reason) = outcome else {
                Issue.record("a push the service refuses gave \(outcome)")
                continue
            }
            #expect(reason.contains("400"))
            #expect(reason.contains(problem), "\(reason)")
        }
    }

    @Test("the largest message, 3993 octets, goes as a body of 4096 that the browser decrypts; one octet more is refused before any request")
    func largest() async throws {
        let service = try await TestPushService(subject: Self.subject)
        let largest = (0..<WebPushEncryption.maximumPlaintextLength).map { UInt8(truncatingIfNeeded: $0) }
        let (sent, refused) = try await withClient { client in
            let subscription = try subscribe(to: service)
            return (await client.send(largest, to: subscription, options: Self.options),
                    await client.send(largest + [0], to: subscription, options: Self.options))
        }
        #expect(sent == .delivered)
        guard case .failed(let reason) = refused else {
            Issue.record("a message too large was not refused: \(refused)")
            return
        }
        #expect(reason.contains("at most 3993"))
        let received = try service.received()
        try #require(received.count == 1)
        #expect(received[0].length == 4096)
        #expect(received[0].plaintextBytes == largest)
    }

    @Test("a key read from an openssl SEC 1 file signs tokens the push service accepts", .enabled(if: RelayTools.run(["openssl", "version"]), "no openssl"))
    func opensslKey() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vicinity-vapid-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("vapid.pem").path
        try #require(RelayTools.run(["openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", file]))
        let service = try await TestPushService(subject: Self.subject)
        let outcome = try await push(to: service, key: try VAPIDKey(file: file))
        #expect(outcome == .delivered)
        #expect(try service.received().first?.problems == [])
    }

    @Test("410 from the push service means the subscription is gone")
    func gone() async throws {
        let service = try await TestPushService(answer: .status(410))
        let outcome = try await push(to: service)
        guard case .gone(let reason) = outcome else {
            Issue.record("410 gave \(outcome)")
            return
        }
        #expect(reason.contains("410"))
        #expect(reason.contains("answered as told"), "the push service's words are kept")
    }

    @Test("429 with Retry-After: 7 is retried not before 7 seconds")
    func tooManyRequests() async throws {
        let service = try await TestPushService(answer: .status(429, headers: ["Retry-After: 7"]))
        let outcome = try await push(to: service)
        guard case .retry(let after, _) = outcome else {
            Issue.record("429 gave \(outcome)")
            return
        }
        #expect(after == .seconds(7))
    }

    @Test("503 is retried")
    func unavailable() async throws {
        let service = try await TestPushService(answer: .status(503))
        let outcome = try await push(to: service)
        guard case .retry(nil, let reason) = outcome else {
            Issue.record("503 gave \(outcome)")
            return
        }
        #expect(reason.contains("503"))
    }

    @Test("403 is a subscription made with another VAPID key: gone, so the device goes; 401 is a token refused: misconfigured, so the message is kept")
    func forbidden() async throws {
        let outcome = try await push(to: try await TestPushService(answer: .status(403)))
        guard case .gone = outcome else {
            Issue.record("403 gave \(outcome)")
            return
        }
        let refused = try await push(to: try await TestPushService(answer: .status(401)))
        guard case .misconfigured = refused else {
            Issue.record("401 gave \(refused)")
            return
        }
    }

    @Test("a push service that does not listen is retried")
    func notListening() async throws {
        let service = try await TestPushService()
        let subscription = try subscribe(to: service)
        service.stop()
        let outcome = try await withClient { client in
            await client.send(Self.message, to: subscription, options: Self.options)
        }
        guard case .retry(nil, let reason) = outcome else {
            Issue.record("a closed port gave \(outcome)")
            return
        }
        #expect(reason.contains("could not be reached"))
    }

    @Test("an http endpoint is refused without a request when plain http is not allowed")
    func httpRefused() async throws {
        let service = try await TestPushService()
        let outcome = try await push(to: service, allowHTTP: false)
        guard case .failed(let reason) = outcome else {
            Issue.record("an http endpoint gave \(outcome)")
            return
        }
        #expect(reason.contains("not https"))
        #expect(try service.received().isEmpty)
    }
}
