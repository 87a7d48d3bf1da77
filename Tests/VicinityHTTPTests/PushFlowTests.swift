import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Synchronization
import MailTestSupport
import Testing
import VicinityCore
import VicinityHTTP
@testable import VicinityPostGIS
import VicinitySQL
import VicinityTransports

/// The push path as people meet it: the HTTP front, the outbox, the sender running with the server, the Web
/// Push client, and a push service with its browser on loopback (`push_service.py`) that checks each push's
/// VAPID token and decrypts it with the subscription's private key.
private struct PushedFront {
    static let subject = "mailto:operators@csulb.example.edu"
    let key = VAPIDKey.generate()
    let transport: PushTransports

    init() throws {
        let configuration = WebPushConfiguration(key: key, subject: try VAPIDSubject(Self.subject), allowHTTP: true)
        transport = PushTransports(webPush: WebPushClient(configuration: configuration))
    }

    /// Plain-http endpoints allowed (the test service has no TLS); retries quick, so that a push service coming
    /// back is used within the test's patience.
    static func settings() -> ServiceSettings {
        var settings = ServiceSettings.standard
        settings.push.allowHTTP = true
        settings.outbox.firstRetry = .milliseconds(200)
        settings.outbox.longestRetry = .milliseconds(400)
        settings.outbox.pollInterval = .milliseconds(100)
        settings.following.behindAfter = .seconds(600)
        return settings
    }

    func services<S: Stores>(
        _ stores: S, settings: ServiceSettings = Self.settings(), limitKeys: LimitKeys = .random(),
        observe: @escaping @Sendable (OutboxOutcome) -> Void = { _ in }
    ) -> Services<S> {
        Services(
            stores: stores, clock: SystemClock(), hasher: testHasher, push: transport, settings: settings, limitKeys: limitKeys,
            observeOutbox: observe)
    }
}

/// The pushes the service took, once there are at least `count`: waits on its folder, at most 30 s.
private func pushes(_ service: TestPushService, atLeast count: Int) async throws -> [TestPushService.Received] {
    let deadline = ContinuousClock.now + .seconds(30)
    while true {
        let received = try service.received()
        if received.count >= count || ContinuousClock.now > deadline { return received }
        // Nothing signals across the process boundary: the service writes files.
        try await Task.sleep(for: .milliseconds(50))
    }
}

/// A push's decrypted body, as the page's service worker reads it.
private func message(_ received: TestPushService.Received) throws -> [String: Any] {
    let bytes = try #require(received.plaintextBytes, "not decrypted: \(received.problems)")
    return try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
}

private func subscriptionJSON(_ service: TestPushService, endpoint: String? = nil) -> String {
    #"{"kind":"webpush","endpoint":"\#(endpoint ?? service.endpoint)","expirationTime":null,"keys":{"p256dh":"\#(service.p256dh)","auth":"\#(service.auth)"}}"#
}

@Suite("Pushes to a real push service", .enabled(if: PushTools.available, PushTools.howToInstall))
struct PushFlowTests {
    @Test("a browser registered for notifications gets a friend request and a poke, signed, encrypted to it and once each, with no position; muted kinds stop and signing out removes it")
    func wholeLife() async throws {
        let service = try await TestPushService(subject: PushedFront.subject)
        let front = try PushedFront()
        let app = buildApplication(services: front.services(InMemoryStore()), port: 0, metrics: sharedRegistry, logger: LogRecorder().logger)
        try await app.test(.live) { client in
            let key = try await client.call(.get, "/v1/push/vapid-public-key")
            #expect(key.status == .ok && key.object?["key"] as? String == front.key.publicKeyBase64URL)
            let alice = try await client.person("alice"), bob = try await client.person("bob")
            let registered = try await client.call(.post, "/v1/me/push-subscriptions", as: bob, json: subscriptionJSON(service))
            #expect(registered.status == .created, "\(registered.text)")
            #expect(registered.object?["kind"] as? String == "webpush" && registered.object?["service"] as? String == "127.0.0.1")
            #expect(registered.object?["endpoint"] == nil, "the endpoint is the device's address: it stays with the server")
            let list = try await client.call(.get, "/v1/me/push-subscriptions", as: bob)
            #expect((list.object?["subscriptions"] as? [[String: Any]])?.count == 1)

            try await client.befriend(alice, bob)
            _ = try await client.call(.put, "/v1/me/position", as: alice, json: #"{"lat":33.779842,"lon":-118.112526}"#)
            _ = try await client.call(.put, "/v1/me/position", as: bob, json: #"{"lat":33.7838,"lon":-118.1141}"#)
            #expect(try await client.call(.post, "/v1/friends/\(bob.id)/pokes", as: alice).status == .created)

            let received = try await pushes(service, atLeast: 2)
            #expect(received.count == 2)
            let messages = try received.map(message)
            #expect(messages.map { $0["type"] as? String } == ["friend_request", "poke"])
            #expect(messages.last?["body"] as? String == "Alice Test poked you.")
            #expect(messages.last?["url"] as? String == "/#friends")
            for (push, body) in zip(received, messages) {
                #expect(push.problems.isEmpty, "\(push.problems)")
                #expect(push.claims?.sub == PushedFront.subject && push.claims?.aud == "http://127.0.0.1:\(service.port)")
                #expect(push.k == front.key.publicKeyBase64URL)
                #expect(Set(body.keys).isSubset(of: ["type", "title", "body", "url", "tag", "event"]), "only the notice: \(body.keys)")
                let text = String(decoding: try #require(push.plaintextBytes), as: UTF8.self)
                for hidden in ["33.7", "-118.1", "distance", "bearing", "lat", "lon"] { #expect(!text.contains(hidden), "\(hidden) in \(text)") }
                #expect(push.headers["urgency"] == "normal" && Int(push.headers["ttl"] ?? "") ?? 0 > 0)
            }
            let topic = try #require(received.last?.headers["topic"], "a later poke from Alice replaces one not yet shown")
            #expect(topic.count == 32 && !topic.contains(alice.id), "the push service cannot read who poked: \(topic)")

            // Pokes muted: the next poke writes no push; a request from Carol still comes, and nothing more.
            let muted = try await client.call(
                .put, "/v1/me/push-preferences", as: bob,
                json: #"{"poke":false,"friend_request":true,"vote_conflict":true,"vote_result":true,"alert":true}"#)
            #expect(muted.status == .ok && muted.object?["poke"] as? Bool == false && muted.object?["friend_request"] as? Bool == true)
            let partial = try await client.call(.put, "/v1/me/push-preferences", as: bob, json: #"{"poke":true}"#)
            #expect(partial.status == .badRequest, "every kind is said, so that none changes unmeant")
            #expect(try await client.call(.get, "/v1/me/push-preferences", as: bob).object?["poke"] as? Bool == false)
            #expect(try await client.call(.post, "/v1/friends/\(bob.id)/pokes", as: alice).status == .created)
            let carol = try await client.person("carol")
            #expect(try await client.call(.post, "/v1/friend-requests", as: carol, json: #"{"to":"\#(bob.id)"}"#).status == .created)
            let later = try await pushes(service, atLeast: 3)
            try await Task.sleep(for: .milliseconds(500))
            #expect(try service.received().count == 3, "no push for the muted poke, none twice")
            #expect(try message(later[2])["body"] as? String == "Carol Test asks to be your friend.")

            // Signing out removes the device the session registered.
            #expect(try await client.call(.delete, "/v1/sessions/current", as: bob).status == .noContent)
            let again = try await client.call(.post, "/v1/sessions", json: #"{"username":"bob","password":"\#(testPassword)"}"#)
            let bobAgain = Person(id: bob.id, username: "bob", token: try #require(again.object?["token"] as? String))
            let after = try await client.call(.get, "/v1/me/push-subscriptions", as: bobAgain)
            #expect((after.object?["subscriptions"] as? [[String: Any]])?.isEmpty == true, "\(after.text)")
        }
    }

    @Test("a push service that answers 410 has the device removed; one that is down gets the push once it is back, once")
    func goneAndDown() async throws {
        let gone = try await TestPushService(answer: .status(410))
        let down = try await TestPushService(subject: PushedFront.subject)
        down.stop()
        let front = try PushedFront()
        let outcomes = Mutex<[OutboxOutcome]>([])
        let services = front.services(InMemoryStore()) { outcome in outcomes.withLock { $0.append(outcome) } }
        let app = buildApplication(services: services, port: 0, metrics: sharedRegistry, logger: LogRecorder().logger)
        try await app.test(.live) { client in
            let alice = try await client.person("alice"), bob = try await client.person("bob"), carol = try await client.person("carol")
            #expect(try await client.call(.post, "/v1/me/push-subscriptions", as: bob, json: subscriptionJSON(gone)).status == .created)
            #expect(try await client.call(.post, "/v1/me/push-subscriptions", as: carol, json: subscriptionJSON(down)).status == .created)
            try await client.befriend(alice, bob)

            // Bob's device is gone at its push service: after its answer to the friend request, it is no longer his.
            _ = try await pushes(gone, atLeast: 1)
            let deadline = ContinuousClock.now + .seconds(30)
            var devices: [[String: Any]]? = nil
            while ContinuousClock.now < deadline {
                devices = try await client.call(.get, "/v1/me/push-subscriptions", as: bob).object?["subscriptions"] as? [[String: Any]]
                if devices?.isEmpty == true { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(devices?.isEmpty == true)
            _ = try await client.call(.put, "/v1/me/position", as: alice, json: #"{"lat":33.779842,"lon":-118.112526}"#)
            #expect(try await client.call(.post, "/v1/friends/\(bob.id)/pokes", as: alice).status == .created)

            try await client.befriend(alice, carol)
            #expect(try await client.call(.post, "/v1/friends/\(carol.id)/pokes", as: alice).status == .created)
            // Carol's push service was down through the friend request and the poke: tried, refused at the
            // connection, and kept; both arrive once it is back.
            let triedWhileDown = { outcomes.withLock { $0.contains { if case .retried(_, .webPush) = $0 { true } else { false } } } }
            let patience = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < patience, !triedWhileDown() { try await Task.sleep(for: .milliseconds(50)) }
            #expect(triedWhileDown(), "tried while down")
            #expect(try down.received().isEmpty)
            try await down.start()
            let received = try await pushes(down, atLeast: 2)
            try await Task.sleep(for: .seconds(1))
            #expect(try down.received().count == 2, "each once")
            #expect(Set(try received.map { try message($0)["type"] as? String }) == ["friend_request", "poke"])
            #expect(try gone.received().count == 1, "the poke after the 410 found no device of Bob's to go to")
        }
    }
}

@Suite("Registering devices for pushes")
struct PushRegistrationTests {
    /// A well-formed subscription (RFC 8291 Appendix A's browser key and secret) to an https push service.
    static func subscription(_ number: Int, endpoint: String? = nil, p256dh: String = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4") -> String {
        #"{"kind":"webpush","endpoint":"\#(endpoint ?? "https://push.example.net/send/\(number)")","keys":{"p256dh":"\#(p256dh)","auth":"BTBZMqHH6r4Tts7J_aSIgg"}}"#
    }

    @Test("bad subscriptions are refused naming each field, http endpoints only when allowed, and a person holds ten devices at most; the same device again is one device")
    func refusals() async throws {
        var settings = PushedFront.settings()
        settings.push.allowHTTP = false
        let app = buildApplication(services: try PushedFront().services(InMemoryStore(), settings: settings), port: 0, metrics: sharedRegistry, logger: LogRecorder().logger)
        try await app.test(.router) { client in
            let ana = try await client.person("ana")
            #expect(try await client.call(.post, "/v1/me/push-subscriptions", json: Self.subscription(0)).status == .unauthorized)
            let plain = try await client.call(.post, "/v1/me/push-subscriptions", as: ana, json: Self.subscription(0, endpoint: "http://push.example.net/1"))
            #expect(plain.status == .badRequest && plain.text.contains("endpoint"), "\(plain.text)")
            let badKey = try await client.call(.post, "/v1/me/push-subscriptions", as: ana, json: Self.subscription(0, p256dh: "not-a-key"))
            #expect(badKey.status == .badRequest && badKey.text.contains("keys.p256dh"), "\(badKey.text)")
            let noKeys = try await client.call(.post, "/v1/me/push-subscriptions", as: ana, json: #"{"kind":"webpush","endpoint":"https://push.example.net/1"}"#)
            #expect(noKeys.status == .badRequest && noKeys.text.contains("keys"), "\(noKeys.text)")
            let stray = try await client.call(.post, "/v1/me/push-subscriptions", as: ana, json: #"{"kind":"webpush","endpoint":"https://push.example.net/1","keys":{"p256dh":"x","auth":"y","extra":1}}"#)
            #expect(stray.status == .badRequest && stray.text.contains("keys.extra"), "\(stray.text)")
            let kind = try await client.call(.post, "/v1/me/push-subscriptions", as: ana, json: #"{"kind":"fax"}"#)
            #expect(kind.status == .badRequest && kind.text.contains("kind"))
            let apns = try await client.call(
                .post, "/v1/me/push-subscriptions", as: ana, json: #"{"kind":"apns","token":"\#(String(repeating: "ab", count: 32))","topic":"edu.csulb.vicinity"}"#)
            #expect(apns.status == .conflict && apns.object?["setting"] as? String == "--apns-key", "this server has no APNs key: \(apns.text)")

            let first = try await client.call(.post, "/v1/me/push-subscriptions", as: ana, json: Self.subscription(0))
            let again = try await client.call(.post, "/v1/me/push-subscriptions", as: ana, json: Self.subscription(0))
            #expect(first.status == .created && again.object?["id"] as? String == first.object?["id"] as? String)
            for number in 1..<10 {
                #expect(try await client.call(.post, "/v1/me/push-subscriptions", as: ana, json: Self.subscription(number)).status == .created)
            }
            let eleventh = try await client.call(.post, "/v1/me/push-subscriptions", as: ana, json: Self.subscription(10))
            #expect(eleventh.status == .conflict && eleventh.text.contains("10 devices"), "\(eleventh.text)")
            let id = try #require(first.object?["id"] as? String)
            let ben = try await client.person("ben")
            #expect(try await client.call(.delete, "/v1/me/push-subscriptions/\(id)", as: ben).status == .notFound, "not Ben's")
            #expect(try await client.call(.delete, "/v1/me/push-subscriptions/\(id)", as: ana).status == .noContent)
            #expect(try await client.call(.delete, "/v1/me/push-subscriptions/\(id)", as: ana).status == .notFound)
            #expect(try await client.call(.delete, "/v1/me/push-subscriptions/nonsense", as: ana).status == .notFound)
        }
    }

    @Test("a server without push keys says so: no VAPID key to give, and registering a browser answers 409 naming the setting")
    func unconfigured() async throws {
        let app = buildApplication(
            services: Services(stores: InMemoryStore(), clock: SystemClock(), hasher: testHasher), port: 0, metrics: sharedRegistry,
            logger: LogRecorder().logger)
        try await app.test(.router) { client in
            let key = try await client.call(.get, "/v1/push/vapid-public-key")
            #expect(key.status == .notFound && key.text.contains("--vapid-key"), "\(key.text)")
            let ana = try await client.person("ana")
            let refused = try await client.call(.post, "/v1/me/push-subscriptions", as: ana, json: Self.subscription(0))
            #expect(refused.status == .conflict && refused.object?["setting"] as? String == "--vapid-key", "\(refused.text)")
            let preferences = try await client.call(.get, "/v1/me/push-preferences", as: ana)
            #expect(preferences.status == .ok && preferences.object?.count == PushCategory.allCases.count && preferences.object?.values.allSatisfy { $0 as? Bool == true } == true)
        }
    }
}

private let postgresURL = testPostgresURL

@Suite("Pushes with two fronts over one PostGIS database", .enabled(if: postgresURL != nil && PushTools.available, "needs PostgreSQL and http_ece: run Scripts/test.sh"))
struct TwoFrontPushTests {
    @Test("with both fronts sending, each event's push leaves once; a push claimed by a front that died is sent by the other once its claim lapses")
    func oncePerEvent() async throws {
        let service = try await TestPushService(subject: PushedFront.subject)
        let front = try PushedFront()
        let url = try #require(postgresURL)
        let configuration = try testPostGISConfiguration(url, schemaPrefix: "push", maximumConnections: 4)
        let settings = PushedFront.settings()
        try await PostGISStore.withStore(configuration, logger: Logger(label: "front a")) { first in
            try await PostGISStore.withStore(configuration, logger: Logger(label: "front b")) { second in
                let keys = try await first.sharedLimitKeys()
                let a = buildApplication(services: front.services(first, settings: settings, limitKeys: keys), port: 0, metrics: sharedRegistry, logger: LogRecorder().logger)
                let b = buildApplication(services: front.services(second, settings: settings, limitKeys: keys), port: 0, metrics: sharedRegistry, logger: LogRecorder().logger)
                let bobID = try await a.test(.live) { clientA in
                    let bob = try await clientA.person("bob")
                    #expect(try await clientA.call(.post, "/v1/me/push-subscriptions", as: bob, json: subscriptionJSON(service)).status == .created)
                    try await b.test(.live) { clientB in
                        for index in 0..<8 {
                            let client = index % 2 == 0 ? clientA : clientB
                            let asker = try await client.person("asker\(index)")
                            #expect(try await client.call(.post, "/v1/friend-requests", as: asker, json: #"{"to":"\#(bob.id)"}"#).status == .created)
                        }
                        _ = try await pushes(service, atLeast: 8)
                        try await Task.sleep(for: .seconds(1))
                        let received = try service.received()
                        #expect(received.count == 8, "one push per request, whichever front sent it")
                        #expect(Set(try received.map { try message($0)["event"] as? Int }).count == 8)
                    }
                    return bob.id
                }
                // A front claims the next push and dies before sending it (its sender is this direct claim); the
                // other front, the only one left, sends it once the claim lapses.
                let carol = UserSummary(
                    id: .random(), username: try Username("carol"), firstName: try PersonName("Carol", field: "first_name"),
                    lastName: try PersonName("Test", field: "last_name"))
                _ = try await first.appendEvents([.poke(to: try #require(UserID(bobID)), from: carol, at: SystemClock().now)])
                // The dead front's claim lapses after 2 s, so that it is taken over within the test.
                var dying = settings.outbox
                dying.claim = .seconds(2)
                let claimed = try await first.claimOutbox(at: SystemClock().now, limit: 10, rules: dying)
                #expect(claimed.count == 1)
                try await b.test(.live) { _ in
                    let received = try await pushes(service, atLeast: 9)
                    try await Task.sleep(for: .seconds(1))
                    #expect(try service.received().count == 9)
                    #expect(try message(try #require(received.last))["type"] as? String == "poke")
                }
                try await first.dropSchema()
            }
        }
    }
}
