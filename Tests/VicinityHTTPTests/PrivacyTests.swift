import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import VicinityCore
import VicinityHTTP

/// Hall of Science, CSULB (csulb-hsci in Data/csulb-buildings.csv): where everyone in the matrix stands.
private let hall = (lat: 33.779842, lon: -118.112526)

/// The members that say who someone is; the rest of an answer must not tell a hidden position from none.
private let identityKeys: Set<String> = ["id", "username", "first_name", "last_name"]

private func withoutIdentity(_ object: [String: Any]?) -> NSDictionary {
    NSDictionary(dictionary: (object ?? [:]).filter { !identityKeys.contains($0.key) })
}

@Suite("Privacy matrix: no answer tells a hidden or non-friend position from none")
struct PrivacyTests {
    /// One viewer and one person in each relation the rule knows, all but one standing at the same spot.
    private struct Matrix {
        var viewer: Person
        var shared: Person
        var noPosition: Person
        var hiddenFromViewer: Person
        var privacyMode: Person
        var privacyModeNoPosition: Person
        var stale: Person
        /// Shared a position older than it is kept: gone, read as none.
        var expired: Person
        var stranger: Person
        var requestedByViewer: Person
        var requestingViewer: Person

        var hiddenOrAbsent: [Person] { [noPosition, hiddenFromViewer, expired] }
        var notFriends: [Person] { [stranger, requestedByViewer, requestingViewer] }
    }

    private func makeMatrix(_ client: some TestClientProtocol, clock: ManualClock) async throws -> Matrix {
        let viewer = try await client.person("viewer")
        let matrix = Matrix(
            viewer: viewer,
            shared: try await client.person("shared"),
            noPosition: try await client.person("noposition"),
            hiddenFromViewer: try await client.person("hidden"),
            privacyMode: try await client.person("privacy"),
            privacyModeNoPosition: try await client.person("privacynopos"),
            stale: try await client.person("stale"),
            expired: try await client.person("expired"),
            stranger: try await client.person("stranger"),
            requestedByViewer: try await client.person("requested"),
            requestingViewer: try await client.person("requesting"))
        for friend in [matrix.shared, matrix.noPosition, matrix.hiddenFromViewer, matrix.privacyMode, matrix.privacyModeNoPosition, matrix.stale, matrix.expired] {
            try await client.befriend(friend, viewer)
        }
        _ = try await client.call(.post, "/v1/friend-requests", as: viewer, json: #"{"to":"\#(matrix.requestedByViewer.id)"}"#)
        _ = try await client.call(.post, "/v1/friend-requests", as: matrix.requestingViewer, json: #"{"to":"\#(viewer.id)"}"#)

        try await client.share(matrix.expired, hall.lat, hall.lon, status: "last week")
        clock.advance(by: PositionRules.standard.maximumAge)
        try await client.share(matrix.stale, hall.lat, hall.lon, status: "earlier")
        clock.advance(by: PositionRules.standard.currentFor + .seconds(1))
        for person in [viewer, matrix.shared, matrix.hiddenFromViewer, matrix.privacyMode, matrix.stranger, matrix.requestedByViewer, matrix.requestingViewer] {
            try await client.share(person, hall.lat, hall.lon, status: "here")
        }
        _ = try await client.call(.patch, "/v1/friends/\(viewer.id)", as: matrix.hiddenFromViewer, json: #"{"share_position":false}"#)
        for person in [matrix.privacyMode, matrix.privacyModeNoPosition] {
            _ = try await client.call(.patch, "/v1/me", as: person, json: #"{"privacy_mode":true}"#)
        }
        return matrix
    }

    @Test("friends list, one friend, map pins, nearby and directions")
    func friendEndpoints() async throws {
        let clock = ManualClock()
        try await withApp(try await store(csulbRows), clock: clock) { client in
            let m = try await makeMatrix(client, clock: clock)
            let list = try await client.call(.get, "/v1/friends", as: m.viewer).list("friends")
            let byID = Dictionary(uniqueKeysWithValues: list.map { ($0["id"] as? String ?? "", $0) })
            #expect(Set(byID.keys) == Set([m.shared, m.noPosition, m.hiddenFromViewer, m.privacyMode, m.privacyModeNoPosition, m.stale, m.expired].map(\.id)))

            // Hidden from the viewer alone, and a position older than it is kept, read exactly as no position at
            // all, in the list and one by one.
            #expect(withoutIdentity(byID[m.hiddenFromViewer.id]) == withoutIdentity(byID[m.noPosition.id]))
            #expect(withoutIdentity(byID[m.expired.id]) == withoutIdentity(byID[m.noPosition.id]))
            #expect(byID[m.noPosition.id]?["presence"] as? String == "none")
            let one = try await client.call(.get, "/v1/friends/\(m.hiddenFromViewer.id)", as: m.viewer)
            let other = try await client.call(.get, "/v1/friends/\(m.noPosition.id)", as: m.viewer)
            #expect(withoutIdentity(one.object) == withoutIdentity(other.object))

            // Privacy mode reads "hidden" whether or not a position lies behind it.
            #expect(withoutIdentity(byID[m.privacyMode.id]) == withoutIdentity(byID[m.privacyModeNoPosition.id]))
            #expect(byID[m.privacyMode.id]?["presence"] as? String == "hidden")
            for person in [m.hiddenFromViewer, m.privacyMode, m.noPosition] {
                for key in ["position", "status", "label", "on_campus", "updated_at", "distance_m", "bearing_deg"] {
                    #expect(byID[person.id]?[key] is NSNull, "\(person.username).\(key)")
                }
            }
            #expect(byID[m.shared.id]?["presence"] as? String == "current")
            #expect(byID[m.stale.id]?["presence"] as? String == "last_seen")
            #expect(byID[m.stale.id]?["status"] as? String == "earlier")

            let pins = try await client.call(.get, "/v1/friends", as: m.viewer, headers: [.accept: "application/geo+json"])
            let pinned = (pins.object?["features"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            #expect(Set(pinned) == [m.shared.id, m.stale.id])

            let nearby = try await client.call(.get, "/v1/friends/nearby?radius=50000&limit=500", as: m.viewer)
            #expect(nearby.list("friends").map { $0["id"] as? String } == [m.shared.id], "only current, shared positions are near")
            let nearbyPins = try await client.call(
                .get, "/v1/friends/nearby?radius=50000", as: m.viewer, headers: [.accept: "application/geo+json"])
            #expect((nearbyPins.object?["features"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [m.shared.id])

            // Directions: hidden, privacy mode and no position give the same status and the same words.
            var answers: [String] = []
            for person in [m.noPosition, m.hiddenFromViewer, m.privacyMode, m.privacyModeNoPosition] {
                let response = try await client.call(.get, "/v1/friends/\(person.id)/direction", as: m.viewer)
                #expect(response.status == .notFound)
                answers.append(response.text)
            }
            #expect(Set(answers).count == 1, "\(answers)")
            let stale = try await client.call(.get, "/v1/friends/\(m.stale.id)/direction", as: m.viewer)
            #expect(stale.status == .ok && stale.object?["presence"] as? String == "last_seen")

            // Anyone who is not a friend, whether located or not, with a request either way or none, reads as an
            // unknown id: same status, same words.
            var strangers: [String] = []
            for id in m.notFriends.map(\.id) + [UserID.random().rawValue] {
                for path in ["/v1/friends/\(id)", "/v1/friends/\(id)/direction"] {
                    let response = try await client.call(.get, path, as: m.viewer)
                    #expect(response.status == .notFound, "\(path)")
                    strangers.append(response.text)
                }
            }
            #expect(Set(strangers).count == 1, "\(Set(strangers))")
        }
    }

    @Test("people search, events and guests learn nothing of anyone's position")
    func otherDoors() async throws {
        let clock = ManualClock()
        let store = try await store(csulbRows)
        try await withApp(store, clock: clock) { client in
            let m = try await makeMatrix(client, clock: clock)
            let people = try await client.call(.get, "/v1/users?q=e", as: m.viewer).list("users")
            #expect(!people.isEmpty)
            for person in people {
                #expect(Set(person.keys) == ["id", "username", "first_name", "last_name", "relationship", "request_id"])
            }
            // A located stranger and an unlocated friend-to-be differ in nothing but who they are and the request.
            let stranger = try #require(people.first { $0["id"] as? String == m.stranger.id })
            #expect(stranger["relationship"] as? String == "none")

            // Pokes from a friend who hides and from one with no position carry the same fields.
            _ = try await client.call(.post, "/v1/friends/\(m.viewer.id)/pokes", as: m.hiddenFromViewer)
            _ = try await client.call(.post, "/v1/friends/\(m.viewer.id)/pokes", as: m.noPosition)
            let viewerID = try #require(UserID(m.viewer.id))
            let pokes = try await store.events(for: viewerID, after: nil, since: Timestamp(millisecondsSince1970: 0), limit: 100)
                .filter { $0.type == .poke }
            #expect(pokes.count == 2)
            #expect(Set(pokes.map { Set(Wire.payload($0.payload).keys) }).count == 1)
            #expect(pokes.allSatisfy { Set(Wire.payload($0.payload).keys) == ["from"] })

            // Changes of what the viewer may see, without a move, are told by name only, and only by those whose
            // change the viewer's list shows: hiding from the viewer, and privacy mode (which reads `hidden`
            // whether or not a position lies behind it).
            let changes = try await store.events(for: viewerID, after: nil, since: Timestamp(millisecondsSince1970: 0), limit: 100)
                .filter { $0.type == .friendVisibility }
            #expect(Set(changes.compactMap { $0.payload.about?.rawValue })
                == Set([m.hiddenFromViewer, m.privacyMode, m.privacyModeNoPosition].map(\.id)))
            #expect(changes.allSatisfy { Set(Wire.payload($0.payload).keys) == ["friend"] })

            // Guests get one and the same 401 from every friend-finder operation, whatever the id.
            var answers: Set<String> = []
            for path in [
                "/v1/friends", "/v1/friends/nearby?lat=33.78&lon=-118.11", "/v1/friends/\(m.shared.id)",
                "/v1/friends/\(m.shared.id)/direction", "/v1/friends/\(m.noPosition.id)/direction", "/v1/users?q=shared",
                "/v1/me/position",
            ] {
                let response = try await client.call(.get, path)
                #expect(response.status == .unauthorized, "\(path)")
                #expect(response.headers[.wwwAuthenticate] == #"Bearer realm="vicinity""#)
                answers.insert(response.text)
            }
            #expect(answers.count == 1)
        }
    }
}
