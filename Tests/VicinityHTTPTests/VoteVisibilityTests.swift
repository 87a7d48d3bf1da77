import Foundation
import GeoCore
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
import VicinityCore
import VicinityHTTP
@testable import VicinityPostGIS
import VicinitySpatiaLite
import VicinitySQL

private let postgresURL = testPostgresURL

/// The store kinds a server runs over: memory for the rules, and each store of record behind its memory.
enum ServedStore: String, CaseIterable, CustomStringConvertible {
    case memory
    case spatiaLite
    case postGIS

    static var available: [ServedStore] { allCases.filter { $0 != .postGIS || postgresURL != nil } }

    var description: String { rawValue }

    /// Runs `test` with the application over a new, empty store of this kind, and those stores.
    func withApp(
        clock: ManualClock, _ test: @Sendable (any TestClientProtocol, any Stores) async throws -> Void
    ) async throws {
        switch self {
        case .memory:
            let store = InMemoryStore()
            try await VicinityHTTPTests.withApp(stores: store, clock: clock) { client in try await test(client, store) }
        case .spatiaLite:
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("vicinity-votes-\(UUID().uuidString).sqlite").path
            defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
            let record = try SpatiaLiteStore(path: path, logger: Logger(label: "test"))
            defer { try? record.close() }
            let stores = try await IndexedStores(record: record, at: clock.now)
            try await VicinityHTTPTests.withApp(stores: stores, clock: clock) { client in try await test(client, stores) }
        case .postGIS:
            let url = try #require(postgresURL)
            let configuration = try testPostGISConfiguration(url, schemaPrefix: "votes")
            try await PostGISStore.withStore(configuration, logger: Logger(label: "test")) { record in
                let stores = try await IndexedStores(record: record, at: clock.now)
                try await VicinityHTTPTests.withApp(stores: stores, clock: clock) { client in try await test(client, stores) }
                try await record.dropSchema()
            }
        }
    }
}


@Suite("Who sees a vote's result")
struct VoteVisibilityTests {
    @Test("the initiator and the voters see the result, each with their own ballot, in its answer and its event; nobody else does",
          arguments: ServedStore.available)
    func resultVisibility(store: ServedStore) async throws {
        let clock = ManualClock()
        try await store.withApp(clock: clock) { client, stores in
            let tess = try await client.person("tess", first: "Tess", last: "Ward")
            let ana = try await client.person("ana", first: "Ana", last: "Lima")
            let ben = try await client.person("ben", first: "Ben", last: "Ito")
            let cyd = try await client.person("cyd", first: "Cyd", last: "Roe")
            let opened = try await client.call(.post, "/v1/votes", as: tess, json: """
                {"subject":"Lunch after the lab?","options":["Pizza","Tacos","Pho"],"participants":2,"password":"482913",
                 "duration":"15m","visibility":"public","lat":33.779842,"lon":-118.112526}
                """)
            let id = try #require(opened.object?["id"] as? String)
            #expect(try await client.call(.post, "/v1/votes/\(id)/ballots", as: ana, json: #"{"password":"482913","option":0}"#).status == .created)

            // While it is open, a voter reads their own choice on the vote; nobody else reads anyone's.
            let anaView = try await client.call(.get, "/v1/votes/\(id)", as: ana).object
            let anaBallot = try #require(anaView?["your_ballot"] as? [String: Any])
            #expect(anaBallot["option"] as? Int == 0 && anaBallot["counted"] as? Bool == true)
            for person in [tess, ben, cyd] {
                #expect(try await client.call(.get, "/v1/votes/\(id)", as: person).object?["your_ballot"] is NSNull, "\(person.username)")
            }
            #expect(try await client.call(.get, "/v1/votes/\(id)/result", as: ana).status == .conflict)
            #expect(try await client.call(.get, "/v1/votes/\(id)/result", as: cyd).status == .forbidden)

            // The last ballot finishes it: the result goes to the initiator and both voters, each with their own ballot.
            clock.advance(by: .seconds(1))
            #expect(try await client.call(.post, "/v1/votes/\(id)/ballots", as: ben, json: #"{"password":"482913","option":1}"#).status == .created)
            for (person, option) in [(tess, nil), (ana, 0), (ben, 1)] as [(Person, Int?)] {
                let answer = try await client.call(.get, "/v1/votes/\(id)/result", as: person)
                #expect(answer.status == .ok, "\(person.username)")
                var result = try #require(answer.object)
                #expect((result["tally"] as? [[String: Any]])?.map { $0["ballots"] as? Int } == [1, 1, 0])
                #expect(result["winners"] as? [Int] == [0, 1])
                #expect((result["voters"] as? [[String: Any]])?.map { $0["name"] as? String } == ["Ana Lima", "Ben Ito"])
                #expect((result["your_ballot"] as? [String: Any])?["option"] as? Int == option, "\(person.username)")
                let events = try await stores.events.events(
                    for: try #require(UserID(person.id)), after: nil, since: Timestamp(millisecondsSince1970: 0), limit: 10)
                let finished = try #require(events.first { $0.type == .voteFinished }, "\(person.username)")
                let carried = try JSONSerialization.jsonObject(with: Data(JSONValue.object(Wire.payload(finished.payload)).jsonBytes)) as? [String: Any]
                // The event carries all of it but the public facts and the names, which are a request away.
                result["vote"] = nil
                result["voters"] = nil
                #expect(try canonicalJSON(try #require(carried?["result"])) == canonicalJSON(result), "\(person.username)")
            }
            // Someone who neither opened nor voted sees the public facts and never the result.
            #expect(try await client.call(.get, "/v1/votes/\(id)/result", as: cyd).status == .forbidden)
            let cydEvents = try await stores.events.events(
                for: try #require(UserID(cyd.id)), after: nil, since: Timestamp(millisecondsSince1970: 0), limit: 10)
            #expect(cydEvents.isEmpty)
            let publicFacts = try #require(try await client.call(.get, "/v1/votes/\(id)", as: cyd).object)
            #expect(publicFacts["state"] as? String == "finished" && publicFacts["ballots_cast"] as? Int == 2)
            #expect(publicFacts["tally"] == nil && publicFacts["your_ballot"] is NSNull)
        }
    }
}
