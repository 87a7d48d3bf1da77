import Foundation
import GeoCore
import GeoTestSupport
import Hummingbird
import HummingbirdTesting
import Testing
import VicinityCore
import VicinityHTTP

/// The Library and Hall of Science, CSULB, as Data/csulb-buildings.csv has them (csulb-lib, csulb-hsci).
private let library = (lat: 33.777267, lon: -118.114777)
private let hall = (lat: 33.779842, lon: -118.112526)

@Suite("Privacy matrix: a friend sharing buildings only is never located more precisely than the building")
struct BuildingSharingTests {
    @Test("list, one friend, map pins, nearby, directions and the time shown all put the friend at the building's point")
    func everyAnswerShowsTheBuilding() async throws {
        let clock = ManualClock()
        try await withApp(try await store(csulbRows), clock: clock) { client in
            let viewer = try await client.person("viewer")
            let pim = try await client.person("pim")
            try await client.befriend(pim, viewer)
            let setting = try await client.call(.patch, "/v1/friends/\(viewer.id)", as: pim, json: #"{"share":"building"}"#)
            #expect(setting.status == .ok)
            #expect(setting.object?["share"] as? String == "building")
            #expect(setting.object?["sharing_my_position"] as? Bool == true)

            // Pim stands 40 m from Hall of Science toward the Library, where the viewer is.
            let hallPoint = try Coordinate(latitude: hall.lat, longitude: hall.lon)
            let viewerPoint = try Coordinate(latitude: library.lat, longitude: library.lon)
            let real = destination(from: hallPoint, distance: 40, bearing: 225)
            try await client.share(viewer, library.lat, library.lon)
            let arrived = clock.now
            let shared = try await client.call(
                .put, "/v1/me/position", as: pim, json: #"{"lat":\#(real.latitude),"lon":\#(real.longitude),"accuracy_m":4,"status":"Lab"}"#)
            #expect(shared.object?["label"] as? String == "Around Hall of Science")

            func expectAtHall(_ entry: [String: Any]?, _ what: String) {
                let position = entry?["position"] as? [String: Any]
                #expect(position?["lat"] as? Double == hall.lat, "\(what)")
                #expect(position?["lon"] as? Double == hall.lon, "\(what)")
                #expect(position?["accuracy_m"] is NSNull, "\(what)")
                #expect(entry?["label"] as? String == "Around Hall of Science", "\(what)")
                #expect(entry?["precision"] as? String == "building", "\(what)")
                #expect(entry?["status"] as? String == "Lab", "\(what)")
                #expect(entry?["updated_at"] as? String == arrived.rfc3339, "\(what)")
                let distance = entry?["distance_m"] as? Double ?? .nan
                #expect(abs(distance - haversineDistance(from: viewerPoint, to: hallPoint).meters) < 1e-6, "\(what)")
                let bearing = entry?["bearing_deg"] as? Double ?? .nan
                #expect(abs(bearing - initialBearing(from: viewerPoint, to: hallPoint).degrees) < 1e-6, "\(what)")
            }
            // A move within the area a minute later changes nothing the viewer sees, the time included.
            clock.advance(by: .seconds(60))
            let moved = destination(from: hallPoint, distance: 25, bearing: 235)
            try await client.share(pim, moved.latitude, moved.longitude, status: "Lab")

            expectAtHall(try await client.call(.get, "/v1/friends", as: viewer).list("friends").first, "list")
            expectAtHall(try await client.call(.get, "/v1/friends/\(pim.id)", as: viewer).object, "one friend")
            let direction = try await client.call(.get, "/v1/friends/\(pim.id)/direction", as: viewer)
            expectAtHall(direction.object, "direction")
            #expect((direction.object?["directions_url"] as? String)?.contains("\(hall.lat)") == true)
            let pins = try await client.call(.get, "/v1/friends", as: viewer, headers: [.accept: "application/geo+json"])
            let feature = (pins.object?["features"] as? [[String: Any]])?.first
            #expect((feature?["geometry"] as? [String: Any])?["coordinates"] as? [Double] == [hall.lon, hall.lat])

            // Nearby measures to the building: a radius that holds Pim's real position but not the building
            // leaves Pim out.
            let toBuilding = haversineDistance(from: viewerPoint, to: hallPoint).meters
            let toPim = haversineDistance(from: viewerPoint, to: moved).meters
            #expect(toPim < toBuilding - 10)
            let between = Int((toPim + toBuilding) / 2)
            #expect(try await client.call(.get, "/v1/friends/nearby?radius=\(between)", as: viewer).list("friends").isEmpty)
            let wider = try await client.call(.get, "/v1/friends/nearby?radius=\(Int(toBuilding) + 1)", as: viewer).list("friends")
            expectAtHall(wider.first, "nearby")

            // Pim sees himself exactly; the exact sharing of the viewer's own is untouched.
            let own = try await client.call(.get, "/v1/me/position", as: pim)
            #expect(own.object?["lat"] as? Double == moved.latitude)
            #expect(try await client.call(.get, "/v1/friends/\(viewer.id)", as: pim).object?["precision"] as? String == "exact")
        }
    }

    @Test("a level given for an hour holds until then, falls back to the default by the clock, and the sharer and the friend are told")
    func sharingForAWhile() async throws {
        let clock = ManualClock()
        let store = try await store(csulbRows)
        let services = services(store, clock: clock)
        try await withApp(store, clock: clock) { client in
            let pim = try await client.person("pim"), nok = try await client.person("nok")
            try await client.befriend(pim, nok)
            #expect(try await client.call(.patch, "/v1/me", as: pim, json: #"{"default_share":"none"}"#).status == .ok)
            try await client.share(pim, library.lat, library.lon)
            let given = try await client.call(.patch, "/v1/friends/\(nok.id)", as: pim, json: #"{"share":"exact","for_s":3600}"#)
            #expect(given.status == .ok)
            let end = clock.now + .seconds(3600)
            #expect(given.object?["share_until"] as? String == end.rfc3339)
            #expect(try await client.call(.get, "/v1/friends/\(pim.id)", as: nok).object?["presence"] as? String == "current")

            // Past the hour, by the clock alone: Nok sees what Pim's default says, before any announcement.
            clock.advance(by: .seconds(3600))
            try await client.share(pim, library.lat, library.lon)
            #expect(try await client.call(.get, "/v1/friends/\(pim.id)", as: nok).object?["presence"] as? String == "none")

            // An announcer's round (the server's own, which runs beside this one, or this call, whichever claims
            // the end first): Pim is told the level ended, Nok that what he sees changed; once.
            _ = try await services.friends.endSharing()
            let pimID = try #require(UserID(pim.id)), nokID = try #require(UserID(nok.id))
            @Sendable func told(_ person: UserID, _ type: EventType) async throws -> [Event] {
                try await store.events(for: person, after: nil, since: Timestamp(millisecondsSince1970: 0), limit: 10).filter { $0.type == type }
            }
            try await waiting(for: "the end announced to both") {
                while true {
                    let ended = try await told(pimID, .sharingEnded), seen = try await told(nokID, .friendVisibility)
                    if !ended.isEmpty, !seen.isEmpty { return }
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
            #expect(try await services.friends.endSharing() == 0, "nothing left to claim")
            let toPim = try await told(pimID, .sharingEnded)
            #expect(toPim.map { Wire.payload($0.payload)["share"] } == [.string("none")])
            #expect(toPim.map { Wire.payload($0.payload).keys.sorted() } == [["friend", "share"]])
            #expect(try await told(nokID, .friendVisibility).count == 1)
            let after = try await client.call(.get, "/v1/friends/\(nok.id)", as: pim).object
            #expect(after?["share"] as? String == "none" && after?["share_until"] is NSNull)

            // Bad ends change nothing.
            let path = "/v1/friends/\(nok.id)"
            for body in [#"{"share":"exact","for_s":0}"#, #"{"share":"exact","for_s":604801}"#,
                         #"{"share":"exact","until":"2020-01-01T00:00:00.000Z"}"#, #"{"share":"exact","until":"tomorrow"}"#,
                         #"{"share":"exact","for_s":60,"until":"2099-01-01T00:00:00.000Z"}"#] {
                #expect(try await client.call(.patch, path, as: pim, json: body).status == .badRequest, "\(body)")
            }
            #expect(try await client.call(.get, path, as: pim).object?["share"] as? String == "none")

            // With everyone at once, for a day.
            let kit = try await client.person("kit")
            try await client.befriend(pim, kit)
            let everyone = try await client.call(.patch, "/v1/friends", as: pim, json: #"{"share":"building","for_s":86400}"#)
            #expect(everyone.status == .ok)
            let listed = everyone.list("friends")
            #expect(Set(listed.map { $0["id"] as? String }) == [nok.id, kit.id])
            #expect(listed.allSatisfy { $0["share"] as? String == "building" && $0["share_until"] as? String == (clock.now + .seconds(86400)).rfc3339 })
            #expect(try await client.call(.patch, "/v1/friends", as: pim, json: #"{"for_s":60}"#).status == .badRequest)
        }
    }

    @Test("sharing is set per friend by level or by the older yes-or-no, new friends start at one's default, and bad levels are refused")
    func levelsAndDefaults() async throws {
        try await withApp(try await store(csulbRows)) { client in
            let ana = try await client.person("ana"), ben = try await client.person("ben"), cleo = try await client.person("cleo")
            try await client.befriend(ana, ben)
            let path = "/v1/friends/\(ben.id)"
            #expect(try await client.call(.patch, path, as: ana, json: #"{"share_position":false}"#).object?["share"] as? String == "none")
            #expect(try await client.call(.patch, path, as: ana, json: #"{"share_position":true}"#).object?["share"] as? String == "exact")
            for body in [#"{"share":"city"}"#, #"{"share":"none","share_position":false}"#, #"{}"#, #"{"share":null}"#] {
                let refused = try await client.call(.patch, path, as: ana, json: body)
                #expect(refused.status == .badRequest, "\(body)")
            }
            #expect(try await client.call(.get, path, as: ana).object?["share"] as? String == "exact", "refusals changed nothing")

            let me = try await client.call(.patch, "/v1/me", as: cleo, json: #"{"default_share":"building"}"#)
            #expect(me.object?["default_share"] as? String == "building")
            #expect(try await client.call(.patch, "/v1/me", as: cleo, json: #"{"default_share":"exactish"}"#).status == .badRequest)
            try await client.befriend(ana, cleo)
            #expect(try await client.call(.get, "/v1/friends/\(ana.id)", as: cleo).object?["share"] as? String == "building")
            #expect(try await client.call(.get, "/v1/friends/\(cleo.id)", as: ana).object?["share"] as? String == "exact")
            #expect(try await client.call(.get, "/v1/friends/\(ben.id)", as: ana).object?["share"] as? String == "exact", "old friendships keep theirs")
        }
    }
}
