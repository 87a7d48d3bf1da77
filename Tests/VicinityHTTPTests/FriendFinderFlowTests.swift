import Foundation
import GeoCore
import Hummingbird
import HummingbirdTesting
import Testing
import VicinityCore
import VicinityHTTP

/// The Library, CSULB (csulb-lib in Data/csulb-buildings.csv).
private let library = (lat: 33.777267, lon: -118.114777)
/// Hall of Science, CSULB (csulb-hsci).
private let hall = (lat: 33.779842, lon: -118.112526)

@Suite("Friend finder over HTTP")
struct FriendFinderFlowTests {
    @Test("two students sign up, befriend, see each other around buildings, navigate, poke, hide, unfriend and sign out")
    func twoUsers() async throws {
        let store = try await store(csulbRows)
        try await withApp(store) { client in
            let alice = try await client.person("alice", first: "Alice", last: "Ng")
            let bob = try await client.person("bob", first: "Bob", last: "Diaz")

            // Search finds people, never where they are, and says where a request stands.
            let search = try await client.call(.get, "/v1/users?q=BO", as: alice)
            #expect(search.status == .ok)
            let found = try #require(search.list("users").first)
            #expect(found["id"] as? String == bob.id)
            #expect(found["relationship"] as? String == "none")
            #expect(Set(found.keys) == ["id", "username", "first_name", "last_name", "relationship", "request_id"])

            let request = try await client.call(.post, "/v1/friend-requests", as: alice, json: #"{"to":"\#(bob.id)"}"#)
            #expect(request.status == .created)
            #expect(request.object?["state"] as? String == "pending")
            let requestID = try #require(request.object?["id"] as? String)
            let afterRequest = try await client.call(.get, "/v1/users?q=bob", as: alice).list("users").first
            #expect(afterRequest?["relationship"] as? String == "request_sent")
            #expect(afterRequest?["request_id"] as? String == requestID)
            let incoming = try await client.call(.get, "/v1/friend-requests", as: bob)
            #expect(incoming.list("incoming").map { $0["id"] as? String } == [requestID])
            #expect(incoming.list("outgoing").isEmpty)
            // Only the recipient accepts; to anyone else the request does not exist.
            #expect(try await client.call(.post, "/v1/friend-requests/\(requestID)/accept", as: alice).status == .notFound)
            let accepted = try await client.call(.post, "/v1/friend-requests/\(requestID)/accept", as: bob)
            #expect(accepted.status == .ok)
            #expect(accepted.object?["id"] as? String == alice.id)

            // Where am I: the label and the closest building come back with the position.
            let shared = try await client.call(
                .put, "/v1/me/position", as: bob, json: #"{"lat":\#(hall.lat),"lon":\#(hall.lon),"accuracy_m":8,"status":"Lab until 5"}"#)
            #expect(shared.status == .ok)
            #expect(shared.object?["label"] as? String == "Around Hall of Science")
            #expect((shared.object?["closest"] as? [String: Any])?["id"] as? String == "csulb-hsci")
            #expect(shared.object?["presence"] as? String == "current")
            try await client.share(alice, library.lat, library.lon)

            let expectedDistance = haversineDistance(
                from: try Coordinate(latitude: library.lat, longitude: library.lon), to: try Coordinate(latitude: hall.lat, longitude: hall.lon))
            let expectedBearing = initialBearing(
                from: try Coordinate(latitude: library.lat, longitude: library.lon), to: try Coordinate(latitude: hall.lat, longitude: hall.lon))

            let friends = try await client.call(.get, "/v1/friends", as: alice)
            #expect(friends.status == .ok)
            let entry = try #require(friends.list("friends").first)
            #expect(entry["id"] as? String == bob.id)
            #expect(entry["label"] as? String == "Around Hall of Science")
            #expect(entry["status"] as? String == "Lab until 5")
            #expect(entry["presence"] as? String == "current")
            // Figures compared exactly through JSONDecoder (JSONSerialization on Linux rounds some doubles).
            let measured = try friends.decoded(as: FriendsWire.self).friends.first
            #expect(measured?.distance_m == expectedDistance.meters)
            #expect(measured?.bearing_deg == expectedBearing.degrees)
            #expect((entry["position"] as? [String: Any])?["accuracy_m"] as? Double == 8)
            #expect(entry["updated_at"] is String)

            let nearby = try await client.call(.get, "/v1/friends/nearby?radius=1000", as: alice)
            #expect(nearby.list("friends").map { $0["id"] as? String } == [bob.id])
            let tooFar = try await client.call(.get, "/v1/friends/nearby?radius=100", as: alice)
            #expect(tooFar.status == .ok && tooFar.list("friends").isEmpty)

            let direction = try await client.call(.get, "/v1/friends/\(bob.id)/direction", as: alice)
            #expect(direction.status == .ok)
            let way = try direction.decoded(as: FriendsWire.Friend.self)
            #expect(way.distance_m == expectedDistance.meters)
            #expect(way.bearing_deg == expectedBearing.degrees)
            #expect(direction.object?["directions_url"] as? String
                == "https://www.google.com/maps/dir/?api=1&destination=33.779842%2C-118.112526&travelmode=walking")

            // Map pins: GeoJSON points, [lon, lat], titled with the name and subtitled with the label.
            let pins = try await client.call(.get, "/v1/friends", as: alice, headers: [.accept: "application/geo+json"])
            #expect(pins.headers[.contentType] == "application/geo+json")
            let feature = try #require((pins.object?["features"] as? [[String: Any]])?.first)
            #expect((feature["geometry"] as? [String: Any])?["coordinates"] as? [Double] == [hall.lon, hall.lat])
            let properties = feature["properties"] as? [String: Any]
            #expect(properties?["title"] as? String == "Bob Diaz")
            #expect(properties?["subtitle"] as? String == "Around Hall of Science")

            #expect(try await client.call(.post, "/v1/friends/\(bob.id)/pokes", as: alice).status == .created)

            // Bob hides from Alice alone: she sees what she would see if he shared nothing.
            let hide = try await client.call(.patch, "/v1/friends/\(alice.id)", as: bob, json: #"{"share_position":false}"#)
            #expect(hide.status == .ok)
            #expect(hide.object?["sharing_my_position"] as? Bool == false)
            let hidden = try await client.call(.get, "/v1/friends/\(bob.id)", as: alice)
            #expect(hidden.object?["presence"] as? String == "none")
            #expect(hidden.object?["position"] is NSNull)
            #expect(hidden.object?["status"] is NSNull)
            #expect(try await client.call(.get, "/v1/friends/nearby", as: alice).list("friends").isEmpty)
            #expect(try await client.call(.get, "/v1/friends/\(bob.id)/direction", as: alice).status == .notFound)
            let noPins = try await client.call(.get, "/v1/friends", as: alice, headers: [.accept: "application/geo+json"])
            #expect((noPins.object?["features"] as? [Any])?.isEmpty == true)
            // Bob still sees Alice: hiding is one way.
            #expect(try await client.call(.get, "/v1/friends/\(alice.id)", as: bob).object?["presence"] as? String == "current")

            // Privacy mode: every friend sees "hidden".
            _ = try await client.call(.patch, "/v1/friends/\(alice.id)", as: bob, json: #"{"share_position":true}"#)
            let privacy = try await client.call(.patch, "/v1/me", as: bob, json: #"{"privacy_mode":true}"#)
            #expect(privacy.object?["privacy_mode"] as? Bool == true)
            #expect(try await client.call(.get, "/v1/friends/\(bob.id)", as: alice).object?["presence"] as? String == "hidden")
            _ = try await client.call(.patch, "/v1/me", as: bob, json: #"{"privacy_mode":false}"#)

            // Stopping sharing deletes the position.
            #expect(try await client.call(.delete, "/v1/me/position", as: bob).status == .noContent)
            #expect(try await client.call(.get, "/v1/me/position", as: bob).status == .notFound)
            #expect(try await client.call(.delete, "/v1/me/position", as: bob).status == .notFound)
            #expect(try await client.call(.get, "/v1/friends/\(bob.id)", as: alice).object?["presence"] as? String == "none")

            #expect(try await client.call(.delete, "/v1/friends/\(bob.id)", as: alice).status == .noContent)
            #expect(try await client.call(.get, "/v1/friends", as: alice).list("friends").isEmpty)
            #expect(try await client.call(.get, "/v1/friends", as: bob).list("friends").isEmpty)
            #expect(try await client.call(.get, "/v1/friends/\(bob.id)", as: alice).status == .notFound)

            #expect(try await client.call(.delete, "/v1/sessions/current", as: alice).status == .noContent)
            #expect(try await client.call(.get, "/v1/me", as: alice).status == .unauthorized)
            #expect(try await client.call(.get, "/v1/me", as: bob).status == .ok)
        }
    }

    @Test("a request to someone who asked first is answered 200 with the friendship; duplicates and strangers are refused")
    func crossedRequests() async throws {
        try await withApp(InMemoryStore()) { client in
            let anna = try await client.person("anna")
            let ben = try await client.person("ben")
            #expect(try await client.call(.post, "/v1/friend-requests", as: anna, json: #"{"to":"\#(ben.id)"}"#).status == .created)
            let duplicate = try await client.call(.post, "/v1/friend-requests", as: anna, json: #"{"to":"\#(ben.id)"}"#)
            #expect(duplicate.status == .conflict)
            let crossed = try await client.call(.post, "/v1/friend-requests", as: ben, json: #"{"to":"\#(anna.id)"}"#)
            #expect(crossed.status == .ok)
            #expect(crossed.object?["state"] as? String == "accepted")
            #expect((crossed.object?["friend"] as? [String: Any])?["id"] as? String == anna.id)
            #expect(try await client.call(.post, "/v1/friend-requests", as: anna, json: #"{"to":"\#(ben.id)"}"#).status == .conflict)

            let yourself: ProblemWire = try await client.call(.post, "/v1/friend-requests", as: anna, json: #"{"to":"\#(anna.id)"}"#).decoded()
            #expect(yourself.status == 400 && yourself.fields == ["to"])
            let malformed: ProblemWire = try await client.call(.post, "/v1/friend-requests", as: anna, json: #"{"to":"x"}"#).decoded()
            #expect(malformed.status == 400 && malformed.fields == ["to"])
            let unknown = try await client.call(.post, "/v1/friend-requests", as: anna, json: #"{"to":"\#(UserID.random())"}"#)
            #expect(unknown.status == .notFound)

            let cleo = try await client.person("cleo")
            let request = try await client.call(.post, "/v1/friend-requests", as: cleo, json: #"{"to":"\#(anna.id)"}"#)
            let id = try #require(request.object?["id"] as? String)
            #expect(try await client.call(.delete, "/v1/friend-requests/\(id)", as: ben).status == .notFound)
            #expect(try await client.call(.delete, "/v1/friend-requests/\(id)", as: anna).status == .noContent)
            #expect(try await client.call(.delete, "/v1/friend-requests/\(id)", as: cleo).status == .notFound)
        }
    }

    @Test("twenty pairs sending each other requests at once over HTTP end with exactly one friendship per pair")
    func concurrentMutualRequests() async throws {
        try await withApp(InMemoryStore()) { client in
            var pairs: [(Person, Person)] = []
            for index in 0..<20 { pairs.append((try await client.person("left\(index)"), try await client.person("right\(index)"))) }
            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for (left, right) in pairs {
                    for (from, to) in [(left, right), (right, left)] {
                        group.addTask { try await client.call(.post, "/v1/friend-requests", as: from, json: #"{"to":"\#(to.id)"}"#).status }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == .created }.count == 20)
            #expect(statuses.filter { $0 == .ok }.count == 20)
            for (left, right) in pairs {
                #expect(try await client.call(.get, "/v1/friends", as: left).list("friends").map { $0["id"] as? String } == [right.id])
                #expect(try await client.call(.get, "/v1/friend-requests", as: right).list("incoming").isEmpty)
            }
        }
    }

    @Test("nearby and direction need my current position or lat and lon, given together")
    func centres() async throws {
        let store = try await store(csulbRows)
        try await withApp(store) { client in
            let alice = try await client.person("alice")
            let bob = try await client.person("bob")
            try await client.befriend(alice, bob)
            try await client.share(bob, hall.lat, hall.lon)
            let noCentre = try await client.call(.get, "/v1/friends/nearby", as: alice)
            #expect(noCentre.status == .conflict)
            #expect(try await client.call(.get, "/v1/friends/\(bob.id)/direction", as: alice).status == .conflict)
            let given = try await client.call(.get, "/v1/friends/nearby?lat=\(library.lat)&lon=\(library.lon)", as: alice)
            #expect(given.list("friends").map { $0["id"] as? String } == [bob.id])
            let half: ProblemWire = try await client.call(.get, "/v1/friends/nearby?lat=33.7", as: alice).decoded()
            #expect(half.fields == ["lon"])
            let direction = try await client.call(.get, "/v1/friends/\(bob.id)/direction?lat=\(library.lat)&lon=\(library.lon)", as: alice)
            #expect(direction.status == .ok)
        }
    }

    @Test("the owner sees their own position as current, then last seen once older than its window, then nothing once older than the set age")
    func ownPosition() async throws {
        let clock = ManualClock()
        var settings = ServiceSettings()
        settings.friends.positions = PositionRules(currentFor: .seconds(600), maximumAge: .seconds(3600))
        try await withApp(try await store(csulbRows), clock: clock, settings: settings) { client in
            let alice = try await client.person("alice"), bob = try await client.person("bob")
            try await client.befriend(alice, bob)
            try await client.share(alice, hall.lat, hall.lon, status: "here")
            let current = try await client.call(.get, "/v1/me/position", as: alice)
            #expect(current.object?["presence"] as? String == "current")
            #expect(current.object?["status"] as? String == "here")
            clock.advance(by: .seconds(601))
            #expect(try await client.call(.get, "/v1/me/position", as: alice).object?["presence"] as? String == "last_seen")
            let friends = try await client.call(.get, "/v1/friends", as: bob)
            let seen = try #require((friends.object?["friends"] as? [[String: Any]])?.first)
            #expect(seen["presence"] as? String == "last_seen" && seen["updated_at"] is String, "\(friends.text)")
            let nearby = try await client.call(.get, "/v1/friends/nearby?lat=\(library.lat)&lon=\(library.lon)", as: bob)
            #expect((nearby.object?["friends"] as? [[String: Any]])?.isEmpty == true, "nearby lists take current positions only: \(nearby.text)")
            clock.advance(by: .seconds(3000))
            #expect(try await client.call(.get, "/v1/me/position", as: alice).status == .notFound, "gone, also to its owner")
            let later = try await client.call(.get, "/v1/friends", as: bob)
            #expect((later.object?["friends"] as? [[String: Any]])?.first?["presence"] as? String == "none")
            // A new position without a status clears the status: location and status travel together.
            try await client.share(alice, hall.lat, hall.lon)
            #expect(try await client.call(.get, "/v1/me/position", as: alice).object?["status"] is NSNull)
        }
    }
}

/// The figures of a friend list, decoded exactly.
private struct FriendsWire: Decodable {
    struct Friend: Decodable {
        var id: String
        var distance_m: Double?
        var bearing_deg: Double?
    }

    var friends: [Friend]
}
