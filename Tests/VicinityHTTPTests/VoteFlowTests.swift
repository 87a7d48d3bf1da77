import Foundation
import GeoCore
import HTTPTypes
import HummingbirdTesting
import Synchronization
import Testing
import VicinityCore
import VicinityHTTP

/// CSULB's Hall of Science and Library, from Data/csulb-buildings.csv.
private let hall = (lat: 33.779842, lon: -118.112526)
private let library = (lat: 33.777267, lon: -118.114777)

private let votePassword = "482913"

/// A store with the Hall of Science, so that votes there are labelled "Around Hall of Science".
private func campusStore() async throws -> InMemoryStore {
    let store = InMemoryStore()
    let place = try Place(
        id: PlaceID("csulb-hsci"), name: "Hall of Science", category: "academic",
        coordinate: Coordinate(latitude: hall.lat, longitude: hall.lon))
    _ = try await store.upsert([place])
    return store
}

extension TestClientProtocol {
    /// Opens a vote at the Hall of Science; the test fails unless it is created.
    fileprivate func openVote(
        as person: Person, participants: Int = 3, duration: String = "15m", visibility: String = "public",
        anonymous: Bool = false
    ) async throws -> String {
        let response = try await call(.post, "/v1/votes", as: person, json: """
            {"subject":"Lunch after the lab?","options":["Pizza","Tacos","Pho"],"participants":\(participants),
             "password":"\(votePassword)","duration":"\(duration)","visibility":"\(visibility)","anonymous":\(anonymous),
             "lat":\(hall.lat),"lon":\(hall.lon)}
            """)
        #expect(response.status == .created, "\(response.text)")
        return try #require(response.object?["id"] as? String)
    }

    fileprivate func ballot(_ vote: String, _ option: Int, as person: Person, password: String = votePassword) async throws -> TestResponse {
        try await call(.post, "/v1/votes/\(vote)/ballots", as: person, json: #"{"password":"\#(password)","option":\#(option)}"#)
    }
}

@Suite("Votes over HTTP")
struct VoteFlowTests {
    @Test("three people: open at a place, find nearby, vote secretly, 409 until the last ballot, then the result and the events")
    func threeUsers() async throws {
        let store = try await campusStore()
        let clock = ManualClock()
        try await withApp(store, clock: clock) { client in
            let tess = try await client.person("tess", first: "Tess", last: "Ward")
            let ana = try await client.person("ana", first: "Ana", last: "Lima")
            let ben = try await client.person("ben", first: "Ben", last: "Ito")

            let opened = try await client.call(.post, "/v1/votes", as: tess, json: """
                {"subject":"Lunch after the lab?","options":["Pizza","Tacos","Pho"],"participants":3,"password":"\(votePassword)",
                 "duration":"15m","visibility":"public","anonymous":false,"lat":\(hall.lat),"lon":\(hall.lon)}
                """)
            #expect(opened.status == .created, "\(opened.text)")
            let vote = try #require(opened.object)
            let id = try #require(vote["id"] as? String)
            #expect(opened.headers[.location] == "/v1/votes/\(id)")
            #expect(id.count == 6 && id == id.uppercased())
            #expect(vote["closes_at"] as? String == "2026-11-22T09:15:00.000Z")
            #expect(vote["state"] as? String == "open")
            #expect(vote["label"] as? String == "Around Hall of Science")
            #expect(vote["initiator_name"] as? String == "Tess Ward")
            #expect(vote["password"] == nil && vote["password_hash"] == nil)

            // Ana is in the library, 354 m away; a guest finds it too.
            let nearby = try await client.call(.get, "/v1/votes/nearby?lat=\(library.lat)&lon=\(library.lon)")
            #expect(nearby.status == .ok, "\(nearby.text)")
            let listed = nearby.list("votes")
            #expect(listed.map { $0["id"] as? String } == [id])
            let distance = try #require(listed.first?["distance_m"] as? Double)
            #expect(abs(distance - 354.2) < 1, "\(distance)")
            #expect(listed.first?["ballots_cast"] as? Int == 0)
            #expect(listed.first?["tally"] == nil)

            let first = try await client.ballot(id.lowercased(), 1, as: ana)
            #expect(first.status == .created, "\(first.text)")
            #expect((first.object?["ballot"] as? [String: Any])?["option"] as? Int == 1)
            #expect(((first.object?["vote"] as? [String: Any])?["ballots_cast"]) as? Int == 1)

            let early = try await client.call(.get, "/v1/votes/\(id)/result", as: tess)
            #expect(early.status == .conflict)
            #expect(early.object?["ballots_cast"] as? Int == 1 && early.object?["participants"] as? Int == 3)
            #expect((early.object?["detail"] as? String)?.contains("not finished yet: 1 of 3") == true)

            #expect(try await client.ballot(id, 0, as: ben).status == .created)
            clock.advance(by: .seconds(40))
            #expect(try await client.ballot(id, 1, as: tess).status == .created)

            let again = try await client.ballot(id, 2, as: ana)
            #expect(again.status == .conflict, "\(again.text)")

            let result = try await client.call(.get, "/v1/votes/\(id)/result", as: ana)
            #expect(result.status == .ok, "\(result.text)")
            let answer = try #require(result.object)
            #expect((answer["tally"] as? [[String: Any]])?.map { $0["ballots"] as? Int } == [1, 2, 0])
            #expect(answer["winners"] as? [Int] == [1])
            #expect(answer["participants"] as? Int == 3 && answer["ballots_counted"] as? Int == 3)
            #expect((answer["voters"] as? [[String: Any]])?.map { $0["name"] as? String } == ["Ana Lima", "Ben Ito", "Tess Ward"])
            #expect((answer["your_ballot"] as? [String: Any])?["option"] as? Int == 1)
            #expect(((answer["vote"] as? [String: Any])?["finish_reason"]) as? String == "all_voted")
            #expect(((answer["vote"] as? [String: Any])?["finished_at"]) as? String == "2026-11-22T09:00:40.000Z")
            let forBen = try await client.call(.get, "/v1/votes/\(id)/result", as: ben)
            #expect((forBen.object?["your_ballot"] as? [String: Any])?["option"] as? Int == 0)

            // Finished votes leave the nearby list; history keeps them, newest first.
            #expect(try await client.call(.get, "/v1/votes/nearby?lat=\(library.lat)&lon=\(library.lon)").list("votes").isEmpty)
            let history = try await client.call(.get, "/v1/me/votes?role=attended", as: ana)
            #expect(history.list("votes").map { $0["id"] as? String } == [id])
            #expect(history.list("votes").first?["state"] as? String == "finished")
            let initiated = try await client.call(.get, "/v1/me/votes", as: tess)
            #expect(initiated.list("votes").first?["roles"] as? [String] == ["initiated", "attended"])

            for person in [tess, ana, ben] {
                let events = try await store.events(
                    for: try #require(UserID(person.id)), after: nil, since: Timestamp(millisecondsSince1970: 0), limit: 10)
                // Tess opened the vote: each ballot but the last told her how many had voted.
                let progress = person.id == tess.id ? [EventType](repeating: .voteProgress, count: 2) : []
                #expect(events.map(\.type) == progress + [.voteFinished], "\(person.username)")
                #expect(events.last.map { Wire.payload($0.payload)["reason"] } == .string("all_voted"))
                #expect(events.filter { $0.type == .voteProgress }.allSatisfy {
                    Set(Wire.payload($0.payload).keys) == ["vote_id", "subject", "ballots_cast", "participants"]
                })
            }
        }
    }

    @Test("guests find votes nearby but cannot look one up by id, vote, see results or settle conflicts")
    func guests() async throws {
        try await withApp(try await campusStore()) { client in
            let tess = try await client.person("tess"), ana = try await client.person("ana")
            let id = try await client.openVote(as: tess)
            let near = "/v1/votes/nearby?lat=\(hall.lat)&lon=\(hall.lon)&radius=100"
            #expect(try await client.call(.get, near).list("votes").compactMap { $0["id"] as? String } == [id])
            let facts = try await client.call(.get, "/v1/votes/\(id)", as: ana)
            #expect(facts.status == .ok)
            #expect(facts.object?["tally"] == nil && facts.object?["ballots_cast"] as? Int == 0)
            #expect(facts.object?["options"] as? [String] == ["Pizza", "Tacos", "Pho"])
            for (method, path, body) in [
                (HTTPRequest.Method.post, "/v1/votes/\(id)/ballots", #"{"password":"482913","option":0}"#),
                (.get, "/v1/votes/\(id)/result", nil), (.get, "/v1/votes/\(id)/conflicts", nil),
                (.post, "/v1/votes", "{}"), (.get, "/v1/me/votes", nil), (.get, "/v1/votes/\(id)", nil),
                (.get, "/v1/votes/K7M3QX", nil),
            ] {
                let response = try await client.call(method, path, json: body)
                #expect(response.status == .unauthorized, "\(method) \(path)")
                #expect(response.headers[.wwwAuthenticate] != nil)
            }
            #expect(try await client.call(.get, "/v1/votes/\(id)", as: tess).object?["ballots_cast"] as? Int == 0, "nothing was cast")
        }
    }

    @Test("nearby never lists private or finished votes; private ones are found by id")
    func nearbyVisibility() async throws {
        let clock = ManualClock()
        try await withApp(try await campusStore(), clock: clock) { client in
            let tess = try await client.person("tess"), ana = try await client.person("ana")
            let open = try await client.openVote(as: tess)
            let hidden = try await client.openVote(as: tess, visibility: "private")
            let full = try await client.openVote(as: tess, participants: 1)
            #expect(try await client.ballot(full, 0, as: ana).status == .created)
            let permanent = try await client.openVote(as: tess, duration: "permanent")
            let near = "/v1/votes/nearby?lat=\(hall.lat)&lon=\(hall.lon)&radius=100"
            #expect(Set(try await client.call(.get, near).list("votes").compactMap { $0["id"] as? String }) == [open, permanent])
            #expect(try await client.call(.get, "/v1/votes/\(hidden)", as: ana).object?["visibility"] as? String == "private")
            clock.advance(by: .seconds(15 * 60))
            #expect(try await client.call(.get, near).list("votes").compactMap { $0["id"] as? String } == [permanent])
            #expect(try await client.call(.get, "/v1/votes/\(open)", as: ana).object?["finish_reason"] as? String == "time_up")
            // A finished private vote's result: the initiator and its voters only, whoever has the id.
            let secret = try await client.openVote(as: tess, participants: 1, visibility: "private")
            #expect(try await client.ballot(secret, 1, as: ana).status == .created)
            let outsider = try await client.person("ozzy")
            let refused = try await client.call(.get, "/v1/votes/\(secret)/result", as: outsider)
            #expect(refused.status == .forbidden)
            #expect(refused.object?["tally"] == nil)
            #expect(try await client.call(.get, "/v1/votes/\(secret)/result", as: ana).status == .ok)
            #expect(try await client.call(.get, "/v1/votes/\(secret)/result", as: tess).status == .ok)
        }
    }

    @Test("a classroom of fifty behind one address signs up and sends fifty ballots at once to a thirty-person vote: thirty count")
    func classroom() async throws {
        try await withApp(try await campusStore()) { client in
            let tess = try await client.person("tess")
            var students: [Person] = []
            for index in 0..<50 { students.append(try await client.person("student\(index)")) }
            let id = try await client.openVote(as: tess, participants: 30)
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for (index, student) in students.enumerated() {
                    group.addTask { try await client.ballot(id, index % 3, as: student).status }
                }
                return try await group.reduce(into: [HTTPResponse.Status]()) { $0.append($1) }
            }
            #expect(statuses.count { $0 == .created } == 30)
            #expect(statuses.count { $0 == .conflict } == 20)
            let result = try await client.call(.get, "/v1/votes/\(id)/result", as: tess)
            #expect(result.object?["ballots_counted"] as? Int == 30)
            #expect((result.object?["voters"] as? [Any])?.count == 30)
        }
    }

    @Test("wrong passwords sent all at once from one address are checked up to the address's limit, not one more")
    func concurrentWrongPasswords() async throws {
        var settings = ServiceSettings()
        settings.votes.passwords.failuresPerAddress = RateLimit(limit: 10, window: .seconds(15 * 60))
        try await withApp(try await campusStore(), settings: settings) { client in
            let tess = try await client.person("tess")
            var people: [Person] = []
            for index in 0..<30 { people.append(try await client.person("guesser\(index)")) }
            let id = try await client.openVote(as: tess, participants: 100)
            // Thirty people, two wrong passwords each, all at the same moment, all from one address.
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for person in people + people {
                    group.addTask { try await client.ballot(id, 0, as: person, password: "111111").status }
                }
                return try await group.reduce(into: [HTTPResponse.Status]()) { $0.append($1) }
            }
            #expect(statuses.count { $0 == .forbidden } == 10, "checked and found wrong")
            #expect(statuses.count { $0 == .tooManyRequests } == 50, "refused before any check")
            #expect(try await client.ballot(id, 0, as: tess).status == .tooManyRequests, "the address is closed to ballots for now")
        }
    }

    @Test("bad input gets every bad field named and changes nothing; unknown and malformed ids are 404")
    func validation() async throws {
        try await withApp(try await campusStore()) { client in
            let tess = try await client.person("tess")
            let bad = try await client.call(.post, "/v1/votes", as: tess, json: """
                {"subject":"","options":["A","a"],"participants":0,"password":"12345","duration":"10m","visibility":"secret",
                 "anonymous":"no","lat":91,"lon":0,"colour":"red"}
                """)
            #expect(bad.status == .badRequest)
            let fields = Set((bad.object?["errors"] as? [[String: Any]])?.compactMap { $0["field"] as? String } ?? [])
            #expect(fields == ["subject", "options[1]", "participants", "password", "duration", "visibility", "anonymous", "lat", "colour"])
            let noPlace = try await client.call(.post, "/v1/votes", as: tess, json: """
                {"subject":"Lunch?","options":["A","B"],"participants":2,"password":"123456","duration":"5m"}
                """)
            #expect(noPlace.status == .badRequest)
            #expect(Set((noPlace.object?["errors"] as? [[String: Any]])?.compactMap { $0["field"] as? String } ?? []) == ["lat", "lon"])
            #expect(try await client.call(.get, "/v1/me/votes", as: tess).list("votes").isEmpty, "nothing was opened")

            #expect(try await client.call(.get, "/v1/votes/K7M3QX", as: tess).status == .notFound)
            #expect(try await client.call(.get, "/v1/votes/not-an-id", as: tess).status == .notFound)
            let id = try await client.openVote(as: tess)
            let fraction = try await client.call(.post, "/v1/votes/\(id)/ballots", as: tess, json: #"{"password":"482913","option":0.5}"#)
            #expect(fraction.status == .badRequest)
            #expect(try await client.call(.get, "/v1/me/votes?role=voted", as: tess).status == .badRequest)
            #expect(try await client.call(.patch, "/v1/votes/\(id)/ballots/not-a-ballot", as: tess,
                                          json: #"{"counted":false}"#).status == .notFound)
            // A well-formed ballot id that names no ballot of the vote is 404 like a malformed one.
            #expect(try await client.call(.patch, "/v1/votes/\(id)/ballots/\(String(repeating: "a", count: 20))", as: tess,
                                          json: #"{"counted":false}"#).status == .notFound)
        }
    }

    @Test("four wrong passwords: 403 each with tries_left 4, 3, 2, 1; the fifth 429 with Retry-After for 15 minutes and tries_left 0, the right password refused too")
    func lockout() async throws {
        let clock = ManualClock()
        try await withApp(try await campusStore(), clock: clock) { client in
            let tess = try await client.person("tess"), ana = try await client.person("ana")
            let id = try await client.openVote(as: tess, duration: "60m")
            for left in [4, 3, 2, 1] {
                let wrong = try await client.ballot(id, 0, as: ana, password: "000000")
                #expect(wrong.status == .forbidden)
                #expect(wrong.object?["tries_left"] as? Int == left)
                #expect(wrong.object?["detail"] as? String == "The password of this vote is wrong: \(left) \(left == 1 ? "try" : "tries") left.")
            }
            let fifth = try await client.ballot(id, 0, as: ana, password: "000000")
            #expect(fifth.status == .tooManyRequests)
            #expect(fifth.headers[.retryAfter] == "900")
            #expect(fifth.object?["tries_left"] as? Int == 0)
            #expect(fifth.object?["detail"] as? String == "Too many wrong passwords for this vote; try again in 900 s.")
            let locked = try await client.ballot(id, 0, as: ana)
            #expect(locked.status == .tooManyRequests)
            #expect(locked.headers[.retryAfter] == "900")
            clock.advance(by: .seconds(900))
            #expect(try await client.ballot(id, 0, as: ana).status == .created)
        }
    }

    @Test("on a vote that ends in 5 minutes the lock's Retry-After is at most those 5 minutes, and after the end the answer is 409, the vote has ended")
    func lockoutEndsWithTheVote() async throws {
        let clock = ManualClock()
        try await withApp(try await campusStore(), clock: clock) { client in
            let tess = try await client.person("tess"), ana = try await client.person("ana")
            let id = try await client.openVote(as: tess, duration: "5m")
            for _ in 0..<4 { #expect(try await client.ballot(id, 0, as: ana, password: "000000").status == .forbidden) }
            let locked = try await client.ballot(id, 0, as: ana, password: "000000")
            #expect(locked.status == .tooManyRequests)
            let wait = try #require(locked.headers[.retryAfter].flatMap { Int($0) })
            #expect(wait > 0 && wait <= 5 * 60, "\(wait) s")
            #expect(locked.object?["tries_left"] as? Int == 0)
            #expect(locked.object?["detail"] as? String
                    == "Too many wrong passwords for this vote: you have no tries left before it ends, in \(wait) s.")
            clock.advance(by: .seconds(wait))
            let ended = try await client.ballot(id, 0, as: ana)
            #expect(ended.status == .conflict)
            #expect(ended.object?["detail"] as? String == ServiceError.conflict(.voteFinished).message)
            #expect(ended.object?["tries_left"] == nil)
        }
    }

    @Test("the initiator's controls over HTTP: 200 with the vote as it stands, 403 for anyone else, 409 where a change does not apply, 400 for bad input")
    func initiatorControls() async throws {
        let store = try await campusStore()
        let clock = ManualClock()
        try await withApp(store, clock: clock) { client in
            let tess = try await client.person("tess", first: "Tess", last: "Ward")
            let ana = try await client.person("ana", first: "Ana", last: "Lima")
            let anna = try await client.person("anna", first: "ANA", last: "lima")
            let id = try await client.openVote(as: tess, duration: "5m")

            let edit = try await client.call(.patch, "/v1/votes/\(id)", as: tess, json: #"{"subject":"Dinner?","options":["Rice","Noodles"]}"#)
            #expect(edit.status == .ok, "\(edit.text)")
            #expect(edit.object?["subject"] as? String == "Dinner?" && edit.object?["options"] as? [String] == ["Rice", "Noodles"])
            for bad in [#"{}"#, #"{"subject":null}"#, #"{"options":null}"#, #"{"options":["Same","same"]}"#, #"{"state":"open"}"#] {
                #expect(try await client.call(.patch, "/v1/votes/\(id)", as: tess, json: bad).status == .badRequest, "\(bad)")
            }
            #expect(try await client.call(.patch, "/v1/votes/\(id)", as: ana, json: #"{"subject":"Mine"}"#).status == .forbidden)
            #expect(try await client.call(.get, "/v1/votes/\(id)", as: tess).object?["you_initiated"] as? Bool == true)
            #expect(try await client.call(.get, "/v1/votes/\(id)", as: ana).object?["you_initiated"] as? Bool == false)
            #expect(try await client.call(.post, "/v1/votes/K7M3QX/close", as: tess).status == .notFound)
            #expect(try await client.call(.post, "/v1/votes/\(id)/close").status == .unauthorized)

            let extended = try await client.call(.post, "/v1/votes/\(id)/extend", as: tess, json: #"{"duration":"15m"}"#)
            #expect(extended.status == .ok)
            #expect(extended.object?["extended_by"] as? String == "15m")
            #expect(extended.object?["closes_at"] as? String == "2026-11-22T09:20:00.000Z")
            #expect(try await client.call(.post, "/v1/votes/\(id)/extend", as: tess, json: #"{"duration":"15m"}"#).status == .conflict)
            #expect(try await client.call(.post, "/v1/votes/\(id)/extend", as: tess, json: #"{"duration":"2h"}"#).status == .badRequest)
            #expect(try await client.call(.post, "/v1/votes/\(id)/publish", as: tess).status == .conflict, "nothing to publish while open")

            #expect(try await client.ballot(id, 0, as: ana).status == .created)
            #expect(try await client.call(.patch, "/v1/votes/\(id)", as: tess, json: #"{"subject":"Lunch?"}"#).status == .conflict,
                    "no edit after the first ballot")
            #expect(try await client.ballot(id, 1, as: anna).status == .created)
            let closed = try await client.call(.post, "/v1/votes/\(id)/close", as: tess)
            #expect(closed.status == .ok)
            #expect(closed.object?["state"] as? String == "settling" && closed.object?["finish_reason"] as? String == "closed")
            #expect(closed.object?["settling_until"] as? String == "2026-11-23T09:00:00.000Z")
            #expect(try await client.call(.get, "/v1/votes/\(id)/result", as: ana).status == .conflict)
            let published = try await client.call(.post, "/v1/votes/\(id)/publish", as: tess)
            #expect(published.object?["state"] as? String == "finished" && published.object?["finished_at"] as? String == "2026-11-22T09:00:00.000Z")
            let result = try await client.call(.get, "/v1/votes/\(id)/result", as: ana)
            #expect(result.status == .ok)
            #expect(result.object?["ballots_voided"] as? Int == 0)
            #expect((result.object?["settlement"] as? [String: Any])?["by"] as? String == "initiator")
            #expect(try await client.call(.post, "/v1/votes/\(id)/cancel", as: tess).status == .conflict, "a published result is final")

            let other = try await client.openVote(as: tess, duration: "permanent")
            #expect(try await client.call(.post, "/v1/votes/\(other)/extend", as: tess, json: #"{"duration":"5m"}"#).status == .conflict)
            #expect(try await client.ballot(other, 2, as: ana).status == .created)
            let cancelled = try await client.call(.post, "/v1/votes/\(other)/cancel", as: tess)
            #expect(cancelled.object?["state"] as? String == "cancelled" && cancelled.object?["cancelled_at"] as? String == "2026-11-22T09:00:00.000Z")
            #expect(try await client.call(.get, "/v1/votes/\(other)/result", as: ana).status == .conflict)
            #expect(try await client.ballot(other, 0, as: anna).status == .conflict)
        }
    }

    @Test("a choice never reaches anyone but its voter: every other answer, event and log line is the same whichever way two voters chose")
    func secrecy() async throws {
        /// Everything anyone but Ana and Ben could see, with random ids replaced, when Ana chooses `anaChoice`
        /// and Ben the other of Pizza and Tacos; and Ana's own result.
        func observe(anaChoice: Int) async throws -> (others: [String], ana: String) {
            let store = try await campusStore()
            let clock = ManualClock()
            let logs = LogRecorder()
            let seen = Mutex<(texts: [String], ids: [String: String], ana: String)>(([], [:], ""))
            try await withApp(store, clock: clock, logs: logs) { client in
                let tess = try await client.person("tess", first: "Tess", last: "Ward")
                let ana = try await client.person("ana", first: "Ana", last: "Lima")
                let ben = try await client.person("ben", first: "Ben", last: "Ito")
                let anna = try await client.person("anna", first: "ana", last: "LIMA")
                let cyd = try await client.person("cyd", first: "Cyd", last: "Roe")
                let id = try await client.openVote(as: tess, participants: 4)
                seen.withLock { state in
                    state.ids[id] = "VOTE"
                    for person in [tess, ana, ben, anna, cyd] { state.ids[person.id] = person.username.uppercased() }
                }
                func record(_ response: TestResponse) {
                    seen.withLock { $0.texts.append("\(response.status.code) " + response.text) }
                }
                #expect(try await client.ballot(id, anaChoice, as: ana).status == .created)
                clock.advance(by: .seconds(1))
                #expect(try await client.ballot(id, 1 - anaChoice, as: ben).status == .created)
                clock.advance(by: .seconds(1))
                #expect(try await client.ballot(id, 2, as: anna).status == .created)
                record(try await client.call(.get, "/v1/votes/\(id)/result", as: tess))
                let conflicts = try await client.call(.get, "/v1/votes/\(id)/conflicts", as: tess)
                let ballots = ((conflicts.object?["conflicts"] as? [[String: Any]])?.first?["ballots"] as? [[String: Any]]) ?? []
                #expect(ballots.count == 2)
                seen.withLock { state in
                    for (index, ballot) in ballots.enumerated() { state.ids[ballot["id"] as? String ?? ""] = "BALLOT\(index)" }
                }
                record(conflicts)
                let annaBallot = ballots.last?["id"] as? String ?? ""
                record(try await client.call(.patch, "/v1/votes/\(id)/ballots/\(annaBallot)", as: tess, json: #"{"counted":false}"#))
                // The last ballot ends the vote in a name conflict: it settles, and everyone but the voters of
                // Pizza and Tacos looks at it.
                clock.advance(by: .seconds(1))
                let cydBallot = try await client.ballot(id, 2, as: cyd)
                seen.withLock { $0.ids[(cydBallot.object?["ballot"] as? [String: Any])?["id"] as? String ?? ""] = "CYDBALLOT" }
                record(cydBallot)
                for person in [tess, anna, cyd] {
                    record(try await client.call(.get, "/v1/votes/\(id)", as: person))
                    record(try await client.call(.get, "/v1/votes/\(id)/result", as: person))
                }
                record(try await client.call(.get, "/v1/votes/\(id)/conflicts", as: tess))
                for person in [ana, anna, cyd] {
                    #expect(try await client.call(.get, "/v1/votes/\(id)/conflicts", as: person).status == .forbidden,
                            "only the initiator sees whose the ballots under one name are")
                }
                record(try await client.call(.patch, "/v1/votes/\(id)/ballots/\(annaBallot)", as: tess, json: #"{"counted":false}"#))
                record(try await client.call(.patch, "/v1/votes/\(id)/ballots/\(annaBallot)", as: tess, json: #"{"counted":true}"#))
                record(try await client.call(.patch, "/v1/votes/\(id)/ballots/\(annaBallot)", as: tess, json: #"{"counted":false}"#))
                clock.advance(by: .seconds(1))
                record(try await client.call(.post, "/v1/votes/\(id)/publish", as: tess))
                for person in [tess, cyd] {
                    record(try await client.call(.get, "/v1/votes/\(id)/result", as: person))
                    record(try await client.call(.get, "/v1/votes/\(id)", as: person))
                    record(try await client.call(.get, "/v1/me/votes", as: person))
                    let events = try await store.events(
                        for: try #require(UserID(person.id)), after: nil, since: Timestamp(millisecondsSince1970: 0), limit: 10)
                    // Event numbers follow the order recipients are served in, which follows their random ids.
                    let text = events.map { event in
                        "\(event.type) " + String(decoding: JSONValue.object(Wire.payload(event.payload)).jsonBytes, as: UTF8.self)
                    }.joined(separator: "\n")
                    seen.withLock { $0.texts.append(text) }
                }
                record(try await client.call(.get, "/v1/votes/\(id)"))
                record(try await client.call(.get, "/v1/votes/\(id)/result", as: anna))
                let own = try await client.call(.get, "/v1/votes/\(id)/result", as: ana).text
                seen.withLock { $0.ana = own }
            }
            // Timings, request ids and how many rounds the announcer ran (a line each, with nothing in it) differ
            // from run to run whatever anyone chose.
            let logged = logs.records.filter { $0.message != "announcing round done" }.map { record in
                let metadata = record.metadata.filter { !["duration_ms", "hb.request.id"].contains($0.key) }
                return "\(record.level) \(record.message) \(metadata.sorted { $0.key < $1.key })"
            }
            return seen.withLock { state in
                let normalized = (state.texts + logged).map { text in
                    state.ids.reduce(text) { $0.replacingOccurrences(of: $1.key, with: $1.value) }
                }
                return (normalized, state.ana)
            }
        }
        let first = try await observe(anaChoice: 0)
        let swapped = try await observe(anaChoice: 1)
        #expect(first.others.count == swapped.others.count)
        for (a, b) in zip(first.others, swapped.others) { #expect(a == b) }
        #expect(first.ana != swapped.ana, "Ana alone sees her own choice, so her answer differs")
    }
}
