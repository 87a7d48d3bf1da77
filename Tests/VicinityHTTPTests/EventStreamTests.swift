import Foundation
import GeoCore
import Hummingbird
import HummingbirdTesting
import Logging
import NIOHTTP1
import Synchronization
import Testing
import VicinityCore
import VicinityHTTP
import VicinitySpatiaLite
import VicinitySQL

/// Runs the application on an ephemeral port over the given stores.
private func withLiveApp<S: Stores>(
    _ stores: S, clock: ManualClock = ManualClock(), settings: ServiceSettings = .standard, options: HTTPOptions = .standard,
    _ test: @Sendable (any TestClientProtocol, Int) async throws -> Void
) async throws {
    let services = services(stores, clock: clock, settings: settings)
    try await services.follower.prepare()
    let app = buildApplication(
        services: services, options: options, port: 0, metrics: sharedRegistry, logger: LogRecorder().logger)
    try await app.test(.live) { client in try await test(client, try #require(client.port)) }
}

/// The next event of a stream, skipping comments; nil when the stream ends.
private func nextEvent(_ iterator: inout AsyncStream<StreamItem>.Iterator) async -> (id: String, type: String, data: [String: Any])? {
    while let item = await iterator.next() {
        guard case .event(let id, let type, let data) = item else { continue }
        let object = (try? JSONSerialization.jsonObject(with: Data(data.utf8))) as? [String: Any] ?? [:]
        return (id, type, object)
    }
    return nil
}

/// An event number; -1 for text that is none, which fails any ordering check.
private func number(_ id: String) -> Int64 { Int64(id) ?? -1 }

@Suite("Live events over Server-Sent Events", .timeLimit(.minutes(1)))
struct EventStreamTests {
    @Test("when a vote's time runs out, the server's announcing round tells its voter and initiator live")
    func voteFinishedByTime() async throws {
        let clock = ManualClock()
        try await withLiveApp(InMemoryStore(), clock: clock) { client, port in
            let tess = try await client.person("tess"), ana = try await client.person("ana")
            let opened = try await client.call(.post, "/v1/votes", as: tess, json: """
                {"subject":"Quiz now?","options":["Yes","No"],"participants":30,"password":"482913","duration":"5m",
                 "lat":33.779842,"lon":-118.112526}
                """)
            let id = try #require(opened.object?["id"] as? String)
            let cast = try await client.call(.post, "/v1/votes/\(id)/ballots", as: ana, json: #"{"password":"482913","option":0}"#)
            #expect(cast.status == .created)
            let streams = [try await EventStreamConnection.open(port: port, token: tess.token),
                           try await EventStreamConnection.open(port: port, token: ana.token)]
            defer { for stream in streams { stream.close() } }
            clock.advance(by: .seconds(300))
            for stream in streams {
                var items = stream.items.makeAsyncIterator()
                let event = try #require(await nextEvent(&items))
                #expect(event.type == "vote_finished")
                #expect(event.data["vote_id"] as? String == id && event.data["reason"] as? String == "time_up")
            }
        }
    }

    @Test("a poke reaches the friend's open stream at once, with its number, type and who poked")
    func livePoke() async throws {
        try await withLiveApp(InMemoryStore()) { client, port in
            let anna = try await client.person("anna", first: "Anna", last: "Lee")
            let ben = try await client.person("ben")
            try await client.befriend(anna, ben)
            let stream = try await EventStreamConnection.open(port: port, token: ben.token)
            defer { stream.close() }
            #expect(stream.status == .ok)
            #expect(stream.headers["Content-Type"].first == "text/event-stream")
            #expect(stream.headers["Cache-Control"].first == "no-cache")
            var items = stream.items.makeAsyncIterator()
            #expect(await items.next() == .comment("connected"))
            #expect(try await client.call(.post, "/v1/friends/\(ben.id)/pokes", as: anna).status == .created)
            let event = try #require(await nextEvent(&items))
            #expect(event.type == "poke")
            #expect(event.data["type"] as? String == "poke")
            #expect(event.data["id"] as? String == event.id)
            let from = event.data["from"] as? [String: Any]
            #expect(from?["id"] as? String == anna.id)
            #expect(from?["first_name"] as? String == "Anna")
            #expect(Set(event.data.keys) == ["id", "type", "at", "from"])

            // Open streams and position updates are in the metrics (other tests share the registry, so the
            // stream count is at least this one).
            try await client.share(anna, 33.779842, -118.112526)
            let metrics = try await client.call(.get, "/metrics").text
            let streams = metrics.split(separator: "\n").first { $0.hasPrefix("vicinity_event_streams_open ") }
            #expect(streams.flatMap { Double($0.split(separator: " ").last ?? "") }.map { $0 >= 1 } == true, "\(streams ?? "none")")
            #expect(metrics.contains("vicinity_position_updates_total "))
            #expect(metrics.contains(#"vicinity_sign_ins_total{outcome="signed_in"}"#))
        }
    }

    @Test("a friend's move reaches the open stream as friend_moved without an event number, as the friend list shows them")
    func friendMoved() async throws {
        try await withLiveApp(InMemoryStore()) { client, port in
            let tess = try await client.person("tess"), ana = try await client.person("ana")
            try await client.befriend(tess, ana)
            try await client.share(ana, 33.777267, -118.114777)
            let stream = try await EventStreamConnection.open(port: port, token: ana.token)
            defer { stream.close() }
            var items = stream.items.makeAsyncIterator()
            #expect(await items.next() == .comment("connected"))
            try await client.share(tess, 33.779842, -118.112526, status: "in the lab")
            let moved = try #require(await nextEvent(&items))
            #expect(moved.type == "friend_moved")
            #expect(moved.id.isEmpty)
            let listed = try await client.call(.get, "/v1/friends/\(tess.id)", as: ana)
            let shown = try #require(listed.object)
            #expect(try canonicalJSON(moved.data) == canonicalJSON(shown))
            let position = moved.data["position"] as? [String: Any]
            #expect(position?["lat"] as? Double == 33.779842 && moved.data["status"] as? String == "in the lab")

            // Recorded events keep their numbers around the notices.
            #expect(try await client.call(.post, "/v1/friends/\(ana.id)/pokes", as: tess).status == .created)
            let poke = try #require(await nextEvent(&items))
            #expect(poke.type == "poke" && number(poke.id) > 0)
            // Notices are not replayed: a client resuming from before the poke gets the poke alone.
            let resumed = try await EventStreamConnection.open(port: port, token: ana.token, lastEventID: String(number(poke.id) - 1))
            defer { resumed.close() }
            var replay = resumed.items.makeAsyncIterator()
            let replayed = try #require(await nextEvent(&replay))
            #expect(replayed.type == "poke" && replayed.id == poke.id)
        }
    }

    @Test("friend requests and acceptances arrive as events too")
    func friendEvents() async throws {
        try await withLiveApp(InMemoryStore()) { client, port in
            let anna = try await client.person("anna")
            let ben = try await client.person("ben")
            let annaStream = try await EventStreamConnection.open(port: port, token: anna.token)
            let benStream = try await EventStreamConnection.open(port: port, token: ben.token)
            defer { annaStream.close(); benStream.close() }
            var annaItems = annaStream.items.makeAsyncIterator()
            var benItems = benStream.items.makeAsyncIterator()
            try await client.befriend(anna, ben)
            let request = try #require(await nextEvent(&benItems))
            #expect(request.type == "friend_request")
            #expect((request.data["from"] as? [String: Any])?["id"] as? String == anna.id)
            #expect(request.data["request_id"] is String)
            let accepted = try #require(await nextEvent(&annaItems))
            #expect(accepted.type == "friend_accepted")
            #expect((accepted.data["friend"] as? [String: Any])?["id"] as? String == ben.id)
        }
    }

    @Test("a client reconnecting with Last-Event-ID gets exactly what it missed, in order, then live events")
    func reconnect() async throws {
        try await withLiveApp(InMemoryStore()) { client, port in
            let anna = try await client.person("anna")
            let ben = try await client.person("ben")
            let cleo = try await client.person("cleo")
            try await client.befriend(anna, ben)
            try await client.befriend(cleo, ben)
            let first = try await EventStreamConnection.open(port: port, token: ben.token)
            var firstItems = first.items.makeAsyncIterator()
            _ = try await client.call(.post, "/v1/friends/\(ben.id)/pokes", as: anna)
            let seen = try #require(await nextEvent(&firstItems))
            first.close()

            // While Ben is away: a poke from Anna and one from Cleo.
            _ = try await client.call(.post, "/v1/friends/\(ben.id)/pokes", as: anna)
            _ = try await client.call(.post, "/v1/friends/\(ben.id)/pokes", as: cleo)
            let again = try await EventStreamConnection.open(port: port, token: ben.token, lastEventID: seen.id)
            defer { again.close() }
            var items = again.items.makeAsyncIterator()
            let missed1 = try #require(await nextEvent(&items))
            let missed2 = try #require(await nextEvent(&items))
            #expect((missed1.data["from"] as? [String: Any])?["id"] as? String == anna.id)
            #expect((missed2.data["from"] as? [String: Any])?["id"] as? String == cleo.id)
            #expect(number(seen.id) < number(missed1.id) && number(missed1.id) < number(missed2.id))
            _ = try await client.call(.post, "/v1/friends/\(ben.id)/pokes", as: cleo)
            let live = try #require(await nextEvent(&items))
            #expect(number(live.id) > number(missed2.id))
        }
    }

    @Test("events wait in the SpatiaLite file across a restart for a client that reconnects")
    func survivesRestart() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("vicinity-events-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let ben = try await {
            let store = try SpatiaLiteStore(path: path, logger: Logger(label: "test"))
            defer { try? store.close() }
            let ben = Mutex<Person?>(nil)
            try await withApp(stores: store) { client in
                let anna = try await client.person("anna")
                let person = try await client.person("ben")
                try await client.befriend(anna, person)
                _ = try await client.call(.post, "/v1/friends/\(person.id)/pokes", as: anna)
                ben.withLock { $0 = person }
            }
            return try #require(ben.withLock { $0 })
        }()
        let store = try SpatiaLiteStore(path: path, logger: Logger(label: "test"))
        defer { try? store.close() }
        try await withLiveApp(store) { _, port in
            let stream = try await EventStreamConnection.open(port: port, token: ben.token, lastEventID: "0")
            defer { stream.close() }
            var items = stream.items.makeAsyncIterator()
            #expect(await nextEvent(&items)?.type == "friend_request")
            #expect(await nextEvent(&items)?.type == "poke")
        }
    }

    @Test("a client that goes away leaves no stream behind in the hub")
    func disconnectFrees() async throws {
        let services = services(InMemoryStore())
        let app = buildApplication(services: services, port: 0, metrics: sharedRegistry, logger: LogRecorder().logger)
        try await app.test(.live) { client in
            let port = try #require(client.port)
            let anna = try await client.person("anna")
            let stream = try await EventStreamConnection.open(port: port, token: anna.token)
            var items = stream.items.makeAsyncIterator()
            #expect(await items.next() == .comment("connected"))
            #expect(services.events.hub.openStreams == 1)
            stream.close()
            // The server notices at its next write; a poke is one.
            let ben = try await client.person("ben")
            try await client.befriend(anna, ben)
            for _ in 0..<3 { _ = try await client.call(.post, "/v1/friends/\(anna.id)/pokes", as: ben) }
            let hub = services.events.hub
            try await waiting(for: "the hub to let the stream go") { await hub.waitForOpenStreams(atMost: 0) }
            #expect(hub.openStreams == 0)
        }
    }

    @Test("a quiet stream gets heartbeat comments")
    func heartbeats() async throws {
        try await withLiveApp(InMemoryStore(), options: HTTPOptions(eventHeartbeat: .milliseconds(100))) { client, port in
            let anna = try await client.person("anna")
            let stream = try await EventStreamConnection.open(port: port, token: anna.token)
            defer { stream.close() }
            var items = stream.items.makeAsyncIterator()
            #expect(await items.next() == .comment("connected"))
            #expect(await items.next() == .comment("heartbeat"))
            #expect(await items.next() == .comment("heartbeat"))
        }
    }

    @Test("graceful shutdown ends open streams cleanly instead of waiting for them")
    func shutdown() async throws {
        let ended = try await {
            let stream = Mutex<EventStreamConnection?>(nil)
            try await withLiveApp(InMemoryStore()) { client, port in
                let anna = try await client.person("anna")
                let opened = try await EventStreamConnection.open(port: port, token: anna.token)
                stream.withLock { $0 = opened }
            }
            return try #require(stream.withLock { $0 })
        }()
        // The server has stopped, so its side ended the stream: reading finds the end, not a hang.
        var items = ended.items.makeAsyncIterator()
        while await items.next() != nil {}
        await ended.reader.value
    }

    @Test("a sixth stream of one user ends the oldest")
    func streamCap() async throws {
        try await withLiveApp(InMemoryStore()) { client, port in
            let anna = try await client.person("anna")
            var streams: [EventStreamConnection] = []
            for _ in 0..<6 { streams.append(try await EventStreamConnection.open(port: port, token: anna.token)) }
            defer { streams.forEach { $0.close() } }
            var oldest = streams[0].items.makeAsyncIterator()
            #expect(await oldest.next() == .comment("connected"))
            #expect(await oldest.next() == nil)
        }
    }

    @Test("signing out ends that session's streams at once; a password change ends the other sessions' streams, not its own")
    func streamsEndWithTheirSession() async throws {
        try await withLiveApp(InMemoryStore()) { client, port in
            let anna = try await client.person("anna"), ben = try await client.person("ben")
            try await client.befriend(anna, ben)
            let phone = try await Self.signIn(client, anna)
            let laptop = try await Self.signIn(client, anna)
            let streams = [
                try await EventStreamConnection.open(port: port, token: anna.token),
                try await EventStreamConnection.open(port: port, token: phone.token),
                try await EventStreamConnection.open(port: port, token: laptop.token),
            ]
            defer { streams.forEach { $0.close() } }
            var first = streams[0].items.makeAsyncIterator(), second = streams[1].items.makeAsyncIterator()
            var third = streams[2].items.makeAsyncIterator()
            for index in 0..<3 {
                var items = streams[index].items.makeAsyncIterator()
                #expect(await items.next() == .comment("connected"))
            }
            #expect(try await client.call(.delete, "/v1/sessions/current", as: phone).status == .noContent)
            // Ended, with no event after the sign-out: the poke that follows reaches the two others only.
            #expect(await nextEvent(&second) == nil)
            #expect(try await client.call(.post, "/v1/friends/\(anna.id)/pokes", as: ben).status == .created)
            #expect(await nextEvent(&first)?.type == "poke")
            #expect(await nextEvent(&third)?.type == "poke")

            let change = try await client.call(.patch, "/v1/me", as: laptop, json: """
                {"current_password":"\(testPassword)","password":"a new and longer passphrase"}
                """)
            #expect(change.status == .ok, "\(change.text)")
            #expect(await nextEvent(&first) == nil, "the other session's stream ended with it")
            #expect(try await client.call(.post, "/v1/friends/\(anna.id)/pokes", as: ben).status == .created)
            #expect(await nextEvent(&third)?.type == "poke", "the session that changed the password keeps listening")
        }
    }

    /// A second session of someone already signed up.
    private static func signIn(_ client: any TestClientProtocol, _ person: Person) async throws -> Person {
        let signIn = try await client.call(.post, "/v1/sessions", json: #"{"username":"\#(person.username)","password":"\#(testPassword)"}"#)
        var session = person
        session.token = try #require(signIn.object?["token"] as? String)
        return session
    }

    @Test("limits per client address count an IPv6 client by its /64 and an IPv4-mapped address as the IPv4 one")
    func addressGroups() async throws {
        var settings = ServiceSettings()
        settings.accounts.signUpsPerAddress = RateLimit(limit: 1, window: .seconds(3600))
        try await withLiveApp(InMemoryStore(), settings: settings, options: HTTPOptions(trustedProxies: ["127.0.0.1"])) { client, _ in
            let statuses = [
                try await Self.signUp(client, "first", forwardedFor: "2001:db8:1:2::1"),
                try await Self.signUp(client, "second", forwardedFor: "2001:db8:1:2:ffff:ffff:ffff:fffe"),
                try await Self.signUp(client, "third", forwardedFor: "2001:db8:1:3::1"),
                try await Self.signUp(client, "fourth", forwardedFor: "10.0.0.1"),
                try await Self.signUp(client, "fifth", forwardedFor: "::ffff:10.0.0.1"),
            ]
            #expect(statuses == [.created, .tooManyRequests, .created, .created, .tooManyRequests])
        }
    }

    @Test("limits per client address read X-Forwarded-For from trusted proxies only, from its right end")
    func trustedProxies() async throws {
        var settings = ServiceSettings()
        settings.accounts.signUpsPerAddress = RateLimit(limit: 1, window: .seconds(3600))
        try await withLiveApp(InMemoryStore(), settings: settings, options: HTTPOptions(trustedProxies: ["127.0.0.1"])) { client, _ in
            let first = try await Self.signUp(client, "first", forwardedFor: "10.0.0.1")
            let second = try await Self.signUp(client, "second", forwardedFor: "10.0.0.1")
            let third = try await Self.signUp(client, "third", forwardedFor: "10.0.0.2")
            // A client that writes its own header cannot pick its address: the proxy appended the real one.
            let spoofed = try await Self.signUp(client, "fourth", forwardedFor: "10.0.0.77, 10.0.0.2")
            #expect([first, second, third, spoofed] == [.created, .tooManyRequests, .created, .tooManyRequests])
        }
        // Without trusted proxies the header is ignored: every request here comes from 127.0.0.1.
        try await withLiveApp(InMemoryStore(), settings: settings) { client, _ in
            let first = try await Self.signUp(client, "first", forwardedFor: "10.0.0.1")
            let second = try await Self.signUp(client, "second", forwardedFor: "10.0.0.2")
            #expect([first, second] == [.created, .tooManyRequests])
        }
    }

    private static func signUp(_ client: any TestClientProtocol, _ name: String, forwardedFor: String) async throws -> HTTPResponse.Status {
        try await client.call(
            .post, "/v1/users",
            json: #"{"username":"\#(name)","password":"\#(testPassword)","first_name":"A","last_name":"B"}"#,
            headers: [.init("X-Forwarded-For")!: forwardedFor]
        ).status
    }

    @Test("a stream needs a token, and Last-Event-ID must be an event number")
    func refusals() async throws {
        try await withApp(InMemoryStore()) { client in
            #expect(try await client.call(.get, "/v1/events").status == .unauthorized)
            let anna = try await client.person("anna")
            for bad in ["abc", "-1", "1.5", "99999999999999999999"] {
                let problem: ProblemWire = try await client.call(.get, "/v1/events", as: anna, headers: [.init("Last-Event-ID")!: bad]).decoded()
                #expect(problem.status == 400, "\(bad)")
                #expect(problem.fields == ["Last-Event-ID"])
            }
        }
    }
}

/// A replay of hundreds of events is hundreds of writes, each waiting for the client to take the one before: on a
/// machine busy with other work that takes longer than the one minute the other stream tests are given.
@Suite("A long replay over Server-Sent Events", .timeLimit(.minutes(5)))
struct LongReplayTests {
    @Test("a replay longer than any buffer arrives whole and in order, read from the store as the client reads")
    func longReplay() async throws {
        let store = InMemoryStore()
        try await withLiveApp(store) { client, port in
            let anna = try await client.person("anna")
            let annaID = try #require(UserID(anna.id))
            let count = EventHub.bufferedEvents * 3 + 7
            let sender = UserSummary(
                id: .random(), username: try Username("sender"), firstName: try PersonName("Sen", field: "first_name"),
                lastName: try PersonName("Der", field: "last_name"))
            let start = Timestamp(Date())
            let drafts = (0..<count).map { index in
                EventDraft.poke(to: annaID, from: sender, at: start + .milliseconds(Int64(index)))
            }
            let recorded = try await store.appendEvents(drafts)
            let stream = try await EventStreamConnection.open(port: port, token: anna.token, lastEventID: "0")
            defer { stream.close() }
            var items = stream.items.makeAsyncIterator()
            var received: [String] = []
            while received.count < count, let event = await nextEvent(&items) { received.append(event.id) }
            #expect(received == recorded.map(\.id.description))
        }
    }
}
