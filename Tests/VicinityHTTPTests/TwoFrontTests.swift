import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
import VicinityCore
import VicinityHTTP
@testable import VicinityPostGIS
import VicinitySQL

private let postgresURL = testPostgresURL

/// Two fronts as `vicinity serve` runs them, each with its own pool and its own memory, over one new schema of
/// the test server: two processes, as far as the database and the clients can tell.
private func withTwoFronts(
    clock: any WallClock = SystemClock(),
    settings: ServiceSettings = .standard,
    options: HTTPOptions = .standard,
    logs: (a: LogRecorder, b: LogRecorder) = (LogRecorder(), LogRecorder()),
    _ test: @Sendable (_ a: any TestClientProtocol, _ aPort: Int, _ b: any TestClientProtocol, _ bPort: Int, _ record: PostGISStore) async throws -> Void
) async throws {
    let url = try #require(postgresURL)
    let configuration = try testPostGISConfiguration(url, schemaPrefix: "fronts", maximumConnections: 4)
    try await PostGISStore.withStore(configuration, logger: Logger(label: "front a")) { first in
        try await PostGISStore.withStore(configuration, logger: Logger(label: "front b")) { second in
            let a = try await front(first, clock: clock, settings: settings, options: options, logs: logs.a)
            let b = try await front(second, clock: clock, settings: settings, options: options, logs: logs.b)
            try await a.test(.live) { clientA in
                try await b.test(.live) { clientB in
                    try await test(clientA, try #require(clientA.port), clientB, try #require(clientB.port), first)
                }
            }
            try await first.dropSchema()
        }
    }
}

/// One front: the record's places, positions and alerts in memory and the sessions it looks up held, the services
/// under the record's shared limit keys (as `serve` takes them), the follower ready.
private func front(
    _ record: PostGISStore, clock: any WallClock, settings: ServiceSettings, options: HTTPOptions, logs: LogRecorder
) async throws -> some ApplicationProtocol {
    let loadedAfter = try await record.changes.changeCursor()
    let stores = try await IndexedStores(record: record, at: clock.now, held: HeldAccounts<PostGISStore>.standardCapacity)
    // Keyed as `vicinity serve` keys them: with the secret every front over the record shares, so that the
    // limits' counts of one front are the other's.
    let services = Services(
        stores: stores, clock: clock, hasher: testHasher, settings: settings, limitKeys: try await record.sharedLimitKeys())
    services.follower.prepare(loadedAfter: loadedAfter)
    return buildApplication(services: services, options: options, port: 0, metrics: sharedRegistry, logger: logs.logger)
}

/// Keeps what a stream delivers as it arrives, until the task returned is cancelled: for waiting, with a
/// deadline, for a given item.
private func collecting(_ stream: EventStreamConnection) -> (items: Watched<[StreamItem]>, reader: Task<Void, Never>) {
    let items = Watched<[StreamItem]>([])
    let reader = Task {
        for await item in stream.items { items.update { $0.append(item) } }
    }
    return (items, reader)
}

/// Opens `person`'s event stream on the front at `port`, waits until it says it is connected, and runs `body`
/// with what it delivers; closes it after.
private func withStream(
    on port: Int, of person: Person, _ body: (_ items: Watched<[StreamItem]>) async throws -> Void
) async throws {
    let stream = try await EventStreamConnection.open(port: port, token: person.token)
    let (items, reader) = collecting(stream)
    defer {
        reader.cancel()
        stream.close()
    }
    _ = try await waiting(for: "\(person.username)'s stream on port \(port)") { try await items.wait { $0.contains(.comment("connected")) } }
    try await body(items)
}

/// Whether `item` is a `friend_moved` notice of `friend` with `status`.
private func isMove(_ item: StreamItem, of friend: Person, status: String?) -> Bool {
    guard case .event(_, "friend_moved", let data) = item,
        let view = (try? JSONSerialization.jsonObject(with: Data(data.utf8))) as? [String: Any]
    else { return false }
    return view["id"] as? String == friend.id && view["status"] as? String == status
}

/// Opens a vote at Hall of Science with the password 482913; returns its id.
private func openQuiz(on front: any TestClientProtocol, by initiator: Person, for duration: String) async throws -> String {
    let opened = try await front.call(.post, "/v1/votes", as: initiator, json: """
        {"subject":"Quiz now?","options":["Yes","No"],"participants":30,"password":"482913","duration":"\(duration)",
         "lat":33.779842,"lon":-118.112526}
        """)
    return try #require(opened.object?["id"] as? String)
}

@Suite("Two fronts over one PostGIS database", .enabled(if: postgresURL != nil, "no PostgreSQL: run Scripts/test.sh"))
struct TwoFrontTests {
    @Test("a position shared through one front shows in a friend's list on the other, and moves and goes with it")
    func positionsCross() async throws {
        try await withTwoFronts { a, _, b, bPort, _ in
            let anna = try await a.person("anna"), ben = try await b.person("ben"), carl = try await a.person("carl")
            try await a.befriend(anna, ben)
            try await a.befriend(carl, ben)
            func annaAsBenSees() async throws -> [String: Any]? {
                let friends = try await b.call(.get, "/v1/friends", as: ben)
                return friends.list("friends").first { $0["id"] as? String == anna.id }
            }
            // Front B tells Ben's stream of a friend's move once it has read the move into memory, which its
            // friend list answers from.
            try await withStream(on: bPort, of: ben) { items in
                func moveSeen(of friend: Person, status: String?) async throws {
                    _ = try await waiting(for: "\(friend.username)'s move on front B") {
                        try await items.wait { $0.contains { isMove($0, of: friend, status: status) } }
                    }
                }
                try await a.share(anna, 33.779842, -118.112526, status: "Lab until 5")
                try await moveSeen(of: anna, status: "Lab until 5")
                #expect(try await annaAsBenSees()?["status"] as? String == "Lab until 5")
                try await a.share(anna, 33.777457, -118.114427, status: "At the library")
                try await moveSeen(of: anna, status: "At the library")
                #expect(try await annaAsBenSees()?["status"] as? String == "At the library")
                #expect(try await a.call(.delete, "/v1/me/position", as: anna).status == .noContent)
                // A removal is told to no stream, but a later move is; front B reads changes in the order they
                // committed, so once it tells of Carl's move it has read Anna's removal.
                try await a.share(carl, 33.779842, -118.112526)
                try await moveSeen(of: carl, status: nil)
                #expect(try await annaAsBenSees()?["presence"] as? String == "none")
            }
        }
    }

    @Test("a session signed out through one front is refused by the other, which held it, once its feed has read the ending")
    func sessionEndingsCross() async throws {
        try await withTwoFronts { a, _, b, _, _ in
            let anna = try await a.person("anna")
            #expect(try await b.call(.get, "/v1/me", as: anna).status == .ok, "front B holds Anna's session from here on")
            #expect(try await a.call(.delete, "/v1/sessions/current", as: anna).status == .noContent)
            #expect(try await a.call(.get, "/v1/me", as: anna).status == .unauthorized, "at once on the front that ended it")
            _ = try await waiting(for: "front B to refuse Anna's ended session") {
                while try await b.call(.get, "/v1/me", as: anna).status != .unauthorized { try await Task.sleep(for: .milliseconds(20)) }
                return true
            }
        }
    }

    @Test("a name, privacy mode and a friendship changed through one front show at once there, and in the other's friend list, which held them, once its feed has read them")
    func heldAccountsAndFriendshipsFollow() async throws {
        try await withTwoFronts { a, _, b, _, _ in
            let anna = try await a.person("anna"), ben = try await b.person("ben")
            try await a.befriend(anna, ben)
            try await a.share(anna, 33.779842, -118.112526)
            @Sendable func annaAsBenSees(on front: any TestClientProtocol) async throws -> [String: Any]? {
                try await front.call(.get, "/v1/friends", as: ben).list("friends").first { $0["id"] as? String == anna.id }
            }
            /// Waits until front B's list shows `seen`; front A, which made the change, must show it at once.
            func shown(_ what: String, _ seen: @escaping @Sendable ([String: Any]?) -> Bool) async throws {
                #expect(seen(try await annaAsBenSees(on: a)), "at once on the front that made it: \(what)")
                _ = try await waiting(for: "front B to show \(what)") {
                    while !seen(try await annaAsBenSees(on: b)) { try await Task.sleep(for: .milliseconds(20)) }
                    return true
                }
            }
            // Front B reads Anna's account and Ben's friendships once, and holds them from here on; Anna's position,
            // shared through front A, shows there once B's feed has read it.
            let firstName = try await waiting(for: "front B to show Anna's position") {
                while try await annaAsBenSees(on: b)?["presence"] as? String != "current" { try await Task.sleep(for: .milliseconds(20)) }
                return try await annaAsBenSees(on: b)?["first_name"] as? String
            }
            #expect(firstName == "Anna")
            #expect(try await a.call(.patch, "/v1/me", as: anna, json: #"{"first_name":"Annabel"}"#).status == .ok)
            try await shown("the new name") { $0?["first_name"] as? String == "Annabel" }
            #expect(try await a.call(.patch, "/v1/me", as: anna, json: #"{"privacy_mode":true}"#).status == .ok)
            try await shown("Anna hidden") { $0?["position"] is NSNull && $0?["presence"] as? String == "hidden" }
            #expect(try await a.call(.delete, "/v1/friends/\(ben.id)", as: anna).status == .noContent)
            try await shown("no friendship") { $0 == nil }
        }
    }

    @Test("an alert is told once per arrival and leaving when both fronts take the same person's moves at the same time")
    func alertOnceAcrossFronts() async throws {
        var settings = ServiceSettings.standard
        // Every crossing told, so that a second telling of one would show.
        settings.alerts.quietPeriod = .zero
        try await withTwoFronts(settings: settings) { a, _, b, _, record in
            let anna = try await a.person("anna"), ben = try await b.person("ben")
            try await a.befriend(anna, ben)
            #expect(try await a.call(.put, "/v1/me/watchers/\(ben.id)", as: anna).status == .created)
            // Anna is at the Library when Ben, seeing her there, sets the alert, so it starts from "outside": a front
            // that has not yet read the new alert from the feed works out Anna's moves without it, and the other
            // tells them.
            try await a.share(anna, 33.777267, -118.114777)
            _ = try await waiting(for: "Anna's position on front B") {
                while try await b.call(.get, "/v1/friends", as: ben).list("friends").first?["presence"] as? String != "current" {
                    try await Task.sleep(for: .milliseconds(20))
                }
                return true
            }
            // 100 m around Hall of Science; the Library, 350 m away, is outside (Data/csulb-buildings.csv).
            let set = try await b.call(
                .post, "/v1/alerts", as: ben, json: #"{"friend":"\#(anna.id)","kind":"point","point":{"lat":33.779842,"lon":-118.112526},"radius_m":100}"#)
            #expect(set.status == .created, "\(set.text)")
            #expect(try await record.alerts(involving: try #require(UserID(anna.id))).map(\.inside) == [false])
            let rounds = 8
            for _ in 0..<rounds {
                for spot in [(33.779842, -118.112526), (33.777267, -118.114777)] {
                    async let throughA: Void = a.share(anna, spot.0, spot.1)
                    async let throughB: Void = b.share(anna, spot.0, spot.1)
                    _ = try await (throughA, throughB)
                }
            }
            let told = try await record.events(for: try #require(UserID(ben.id)), after: nil, since: Timestamp(millisecondsSince1970: 0), limit: 100)
            #expect(told.filter { $0.type == .friendArrived }.count == rounds)
            #expect(told.filter { $0.type == .friendLeft }.count == rounds)
        }
    }

    @Test("a phone's post through one front moves its person on the other, and the other front's answer to a phone shows it")
    func phonesCross() async throws {
        try await withTwoFronts { a, _, b, bPort, _ in
            let anna = try await a.person("anna"), ben = try await b.person("ben")
            try await a.befriend(anna, ben)
            let annasPhone = try await addDevice(a, for: anna)
            let bensPhone = try await addDevice(b, for: ben)
            try await withStream(on: bPort, of: ben) { items in
                // Anna's phone posts through front A; front B tells Ben and answers his list with it.
                let now = Int64(Date().timeIntervalSince1970)
                let annas = try await post(
                    a, PhonePayloads.ownTracksLocation(lat: 33.777457, lon: -118.114427, tst: now), user: "anna", secret: annasPhone.secret)
                #expect(annas.status == .ok, "\(annas.text)")
                _ = try await waiting(for: "Anna's move on front B") {
                    try await items.wait { $0.contains { isMove($0, of: anna, status: nil) } }
                }
                let listed = try await b.call(.get, "/v1/friends", as: ben).list("friends").first { $0["id"] as? String == anna.id }
                let position = try #require(listed?["position"] as? [String: Any])
                #expect(position["lat"] as? Double == 33.777457 && position["lon"] as? Double == -118.114427)

                // Ben's phone posts through front B, which answers with Anna where her phone put her.
                let bens = try await post(
                    b, PhonePayloads.ownTracksLocation(lat: 33.779842, lon: -118.112526, tst: now), user: "ben", secret: bensPhone.secret)
                #expect(bens.status == .ok, "\(bens.text)")
                let answer = try #require((try JSONSerialization.jsonObject(with: bens.data)) as? [[String: Any]], "\(bens.text)")
                let located = answer.filter { $0["_type"] as? String == "location" }
                #expect(located.count == 1)
                #expect(located.first?["topic"] as? String == "owntracks/anna/vicinity")
                #expect(located.first?["lat"] as? Double == 33.777457 && located.first?["lon"] as? Double == -118.114427)

                // A phone removed through front B is refused on front A at once.
                #expect(try await b.call(.delete, "/v1/me/devices/\(annasPhone.id)", as: anna).status == .noContent)
                let refused = try await post(
                    a, PhonePayloads.ownTracksLocation(lat: 33.779842, lon: -118.112526, tst: now + 1), user: "anna", secret: annasPhone.secret)
                #expect(refused.status == .unauthorized)
            }
        }
    }

    @Test("five streams of one person on one front and a sixth on the other: the oldest ends, at the other front's next beat")
    func streamCapAcrossFronts() async throws {
        // Short beats, so that the front holding the oldest stream learns soon that its lease was pushed out.
        var options = HTTPOptions.standard
        options.eventHeartbeat = .milliseconds(200)
        try await withTwoFronts(options: options) { a, aPort, b, bPort, _ in
            let anna = try await a.person("anna")
            var streams: [EventStreamConnection] = []
            defer { streams.forEach { $0.close() } }
            for _ in 0..<5 {
                let stream = try await EventStreamConnection.open(port: aPort, token: anna.token)
                streams.append(stream)
                var items = stream.items.makeAsyncIterator()
                #expect(await items.next() == .comment("connected"))
            }
            let sixth = try await EventStreamConnection.open(port: bPort, token: anna.token)
            streams.append(sixth)
            var newest = sixth.items.makeAsyncIterator()
            #expect(await newest.next() == .comment("connected"))
            var oldest = streams[0].items.makeAsyncIterator()
            while let item = await oldest.next() { #expect(item == .comment("heartbeat")) }
            // The four others on front A still hold: each beats again after the oldest ended.
            for stream in streams[1..<5] {
                var items = stream.items.makeAsyncIterator()
                #expect(await items.next() == .comment("heartbeat"))
            }
        }
    }

    @Test("a poke and a friend request made through one front arrive on a stream held by the other, in order")
    func eventsCross() async throws {
        try await withTwoFronts { a, _, b, bPort, _ in
            let anna = try await a.person("anna"), ben = try await b.person("ben")
            let stream = try await EventStreamConnection.open(port: bPort, token: ben.token)
            defer { stream.close() }
            var items = stream.items.makeAsyncIterator()
            #expect(await items.next() == .comment("connected"))
            let request = try await a.call(.post, "/v1/friend-requests", as: anna, json: #"{"to":"\#(ben.id)"}"#)
            #expect(request.status == .created)
            let accepted = try await b.call(.post, "/v1/friend-requests/\(try #require(request.object?["id"] as? String))/accept", as: ben)
            #expect(accepted.status == .ok)
            for _ in 0..<3 { #expect(try await a.call(.post, "/v1/friends/\(ben.id)/pokes", as: anna).status == .created) }
            var types: [String] = [], ids: [Int64] = []
            while types.count < 4, let item = await items.next() {
                guard case .event(let id, let type, _) = item else { continue }
                types.append(type)
                ids.append(Int64(id) ?? -1)
            }
            #expect(types == ["friend_request", "poke", "poke", "poke"])
            #expect(ids == ids.sorted() && Set(ids).count == 4)
        }
    }

    @Test("privacy mode turned on and off through one front reaches a friend's stream on the other as friend_visibility, naming the friend only")
    func visibilityCrosses() async throws {
        try await withTwoFronts { a, _, b, bPort, _ in
            let anna = try await a.person("anna"), ben = try await b.person("ben")
            try await a.befriend(anna, ben)
            try await a.share(anna, 33.777267, -118.114777)
            let stream = try await EventStreamConnection.open(port: bPort, token: ben.token)
            defer { stream.close() }
            var items = stream.items.makeAsyncIterator()
            #expect(await items.next() == .comment("connected"))
            for on in [true, false] {
                #expect(try await a.call(.patch, "/v1/me", as: anna, json: #"{"privacy_mode":\#(on)}"#).status == .ok)
            }
            var told: [[String: Any]] = []
            while told.count < 2, let item = await items.next() {
                guard case .event(_, "friend_visibility", let data) = item else { continue }
                told.append((try? JSONSerialization.jsonObject(with: Data(data.utf8))) as? [String: Any] ?? [:])
            }
            #expect(told.count == 2)
            #expect(told.allSatisfy { ($0["friend"] as? [String: Any])?["id"] as? String == anna.id })
            #expect(told.allSatisfy { Set($0.keys) == ["id", "type", "at", "friend"] })
        }
    }

    @Test("a timed vote opened on one front finishes on time while both announce, and each participant hears it once")
    func finishAnnouncedOnce() async throws {
        let clock = ManualClock()
        let logs = (a: LogRecorder(), b: LogRecorder())
        var settings = ServiceSettings()
        // Rounds every 50 ms rather than every second: the rounds waited for below pass at once, and more race.
        settings.votes.announcementInterval = .milliseconds(50)
        try await withTwoFronts(clock: clock, settings: settings, logs: logs) { a, aPort, b, bPort, record in
            let tess = try await a.person("tess"), ana = try await b.person("ana")
            let id = try await openQuiz(on: a, by: tess, for: "5m")
            #expect(try await b.call(.post, "/v1/votes/\(id)/ballots", as: ana, json: #"{"password":"482913","option":0}"#).status == .created)
            let streams = [try await EventStreamConnection.open(port: aPort, token: tess.token),
                           try await EventStreamConnection.open(port: bPort, token: ana.token)]
            defer { for stream in streams { stream.close() } }
            clock.advance(by: .seconds(300))
            var finished: [String] = []
            for stream in streams {
                var items = stream.items.makeAsyncIterator()
                while let item = await items.next() {
                    guard case .event(let eventID, let type, _) = item, type == "vote_finished" else { continue }
                    finished.append(eventID)
                    break
                }
            }
            #expect(finished.count == 2)
            // Both fronts' announcers go on; once each has ended two more rounds (the second begun after both
            // streams heard), the record holds one finish event for each participant.
            let round = "announcing round done"
            for recorder in [logs.a, logs.b] {
                let done = recorder.records.filter { $0.message == round }.count
                _ = try await recorder.records(until: "two more announcing rounds") { $0.filter { $0.message == round }.count >= done + 2 }
            }
            for person in [tess, ana] {
                let events = try await record.events(
                    for: try #require(UserID(person.id)), after: nil, since: Timestamp(millisecondsSince1970: 0), limit: 1000)
                #expect(events.filter { $0.type == .voteFinished }.count == 1, "\(events.map(\.type))")
            }
        }
    }

    @Test("unknown vote ids looked up alternately through two fronts are refused after twenty an hour, as through one")
    func lookupsAreCountedTogether() async throws {
        let clock = ManualClock()
        try await withTwoFronts(clock: clock) { a, _, b, _, _ in
            let ana = try await a.person("ana")
            var statuses: [HTTPResponse.Status] = []
            for attempt in 0..<21 {
                let front = attempt % 2 == 0 ? a : b
                statuses.append(try await front.call(.get, "/v1/votes/\(VoteID.random())", as: ana).status)
            }
            #expect(statuses == Array(repeating: .notFound, count: 20) + [.tooManyRequests])
            clock.advance(by: .seconds(3601))
            #expect(try await b.call(.get, "/v1/votes/\(VoteID.random())", as: ana).status == .notFound, "the hour is over")
        }
    }

    @Test("wrong vote passwords sent alternately through two fronts count down one voter's tries and lock them out at the fifth, as through one")
    func guessesAreCountedTogether() async throws {
        let clock = ManualClock()
        try await withTwoFronts(clock: clock) { a, _, b, _, _ in
            let tess = try await a.person("tess"), ana = try await b.person("ana")
            let id = try await openQuiz(on: a, by: tess, for: "60m")
            var statuses: [HTTPResponse.Status] = []
            var triesLeft: [Int?] = []
            for attempt in 0..<5 {
                let front = attempt % 2 == 0 ? a : b
                let answer = try await front.call(.post, "/v1/votes/\(id)/ballots", as: ana, json: #"{"password":"000000","option":0}"#)
                statuses.append(answer.status)
                triesLeft.append(answer.object?["tries_left"] as? Int)
            }
            #expect(statuses == Array(repeating: .forbidden, count: 4) + [.tooManyRequests], "the fifth is answered with the lock")
            #expect(triesLeft == [4, 3, 2, 1, 0])
            for front in [a, b] {
                let locked = try await front.call(.post, "/v1/votes/\(id)/ballots", as: ana, json: #"{"password":"482913","option":0}"#)
                #expect(locked.status == .tooManyRequests, "locked on every front, the right password too")
                #expect(locked.headers[.retryAfter] == "900")
            }
        }
    }
}
