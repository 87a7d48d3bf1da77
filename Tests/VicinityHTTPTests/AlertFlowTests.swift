import Foundation
import GeoCore
import Hummingbird
import HummingbirdTesting
import Testing
import VicinityCore
import VicinityHTTP

/// The Library and Hall of Science, CSULB, as Data/csulb-buildings.csv has them (csulb-lib, csulb-hsci).
private let library = (lat: 33.777267, lon: -118.114777)
private let hall = (lat: 33.779842, lon: -118.112526)

@Suite("Alerts over HTTP")
struct AlertFlowTests {
    @Test("a friend allows a watcher, who sets a place alert, is told of the arrival by an event, and the watched person sees and revokes it")
    func placeAlertLifecycle() async throws {
        let store = try await store(csulbRows), clock = ManualClock()
        try await withApp(store, clock: clock) { client in
            let pim = try await client.person("pim"), nok = try await client.person("nok"), ana = try await client.person("ana")
            try await client.befriend(pim, nok)
            let body = #"{"friend":"\#(pim.id)","kind":"place","place":"csulb-lib","radius_m":100}"#
            let refused = try await client.call(.post, "/v1/alerts", as: nok, json: body)
            #expect(refused.status == .conflict && refused.text.contains("not allowed you"), "\(refused.text)")
            #expect(try await client.call(.put, "/v1/me/watchers/\(nok.id)", as: pim).status == .created)
            #expect(try await client.call(.put, "/v1/me/watchers/\(nok.id)", as: pim).status == .ok)
            #expect(try await client.call(.put, "/v1/me/watchers/\(ana.id)", as: pim).status == .notFound, "strangers cannot be allowed")

            let set = try await client.call(.post, "/v1/alerts", as: nok, json: body)
            #expect(set.status == .created, "\(set.text)")
            let alertID = try #require(set.object?["id"] as? String)
            #expect((set.object?["place"] as? [String: Any])?["name"] as? String == "Library")
            #expect(set.object?["radius_m"] as? Double == 100)
            #expect((set.object?["friend"] as? [String: Any])?["id"] as? String == pim.id)
            #expect(try await client.call(.get, "/v1/alerts", as: nok).list("alerts").map { $0["id"] as? String } == [alertID])

            let watchers = try await client.call(.get, "/v1/me/watchers", as: pim).list("watchers")
            #expect(watchers.count == 1)
            #expect((watchers.first?["user"] as? [String: Any])?["id"] as? String == nok.id)
            #expect((watchers.first?["alerts"] as? [[String: Any]])?.first?["id"] as? String == alertID)

            // Hall of Science is 350 m from the Library: outside. Then Pim walks to the Library.
            try await client.share(pim, hall.lat, hall.lon)
            clock.advance(by: .seconds(60))
            try await client.share(pim, library.lat, library.lon)
            let told = try await store.events(for: try #require(UserID(nok.id)), after: nil, since: Timestamp(millisecondsSince1970: 0), limit: 10)
            #expect(told.filter { $0.type == .friendArrived }.count == 1)
            let arrival = try #require(told.first { $0.type == .friendArrived })
            let wire = Wire.event(arrival)
            guard case .object(let fields) = wire else { throw StoreError.corrupt("not an object") }
            #expect(fields["place_name"] == .string("Library") && fields["alert_id"] == .string(alertID) && fields["radius_m"] == .number(100))
            #expect(fields["lat"] == nil && fields["lon"] == nil && fields["distance_m"] == nil, "an alert never carries a position")

            #expect(try await client.call(.delete, "/v1/me/watchers/\(nok.id)", as: pim).status == .noContent)
            #expect(try await client.call(.get, "/v1/alerts", as: nok).list("alerts").isEmpty, "the place alert went with the permission")
            #expect(try await client.call(.delete, "/v1/me/watchers/\(nok.id)", as: pim).status == .notFound)
            #expect(try await client.call(.delete, "/v1/alerts/\(alertID)", as: nok).status == .notFound)
        }
    }

    @Test("bad alerts are refused with every bad field named, and change nothing")
    func refusals() async throws {
        try await withApp(try await store(csulbRows)) { client in
            let pim = try await client.person("pim"), nok = try await client.person("nok"), ana = try await client.person("ana")
            try await client.befriend(pim, nok)
            _ = try await client.call(.put, "/v1/me/watchers/\(nok.id)", as: pim)
            for (json, fields) in [
                (#"{"friend":"\#(pim.id)","kind":"place","radius_m":10}"#, ["place", "radius_m"]),
                (#"{"friend":"\#(pim.id)","kind":"orbit"}"#, ["kind"]),
                (#"{"friend":"nobody","kind":"nearby","radius_m":9000}"#, ["friend", "radius_m"]),
                (#"{"friend":"\#(pim.id)","kind":"point","point":{"lat":91,"lon":0}}"#, ["point.lat"]),
                (#"{"friend":"\#(pim.id)","kind":"campus","campus":"csulb","radius_m":100}"#, ["radius_m"]),
            ] {
                let refused = try await client.call(.post, "/v1/alerts", as: nok, json: json)
                #expect(refused.status == .badRequest, "\(json)")
                let named = Set((refused.object?["errors"] as? [[String: Any]] ?? []).compactMap { $0["field"] as? String })
                #expect(named == Set(fields), "\(json): \(named)")
            }
            let unknownPlace = try await client.call(.post, "/v1/alerts", as: nok, json: #"{"friend":"\#(pim.id)","kind":"place","place":"nowhere"}"#)
            #expect(unknownPlace.status == .notFound)
            let stranger = try await client.call(.post, "/v1/alerts", as: nok, json: #"{"friend":"\#(ana.id)","kind":"nearby"}"#)
            #expect(stranger.status == .notFound && stranger.text.contains("No friend of yours"))
            #expect(try await client.call(.delete, "/v1/alerts/not-an-id", as: nok).status == .notFound)
            #expect(try await client.call(.get, "/v1/alerts", as: nok).list("alerts").isEmpty)
            for index in 0..<10 {
                let added = try await client.call(
                    .post, "/v1/alerts", as: nok, json: #"{"friend":"\#(pim.id)","kind":"point","point":{"lat":\#(library.lat),"lon":\#(library.lon)},"radius_m":\#(100 + index)}"#)
                #expect(added.status == .created)
            }
            let eleventh = try await client.call(.post, "/v1/alerts", as: nok, json: #"{"friend":"\#(pim.id)","kind":"nearby"}"#)
            #expect(eleventh.status == .conflict && eleventh.text.contains("10 alerts"))
        }
    }
}
