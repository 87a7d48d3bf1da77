import Foundation
import GeoCore
import Hummingbird
import HummingbirdTesting
import Testing
import VicinityCore
import VicinityHTTP

@Suite("Places endpoints")
struct PlacesEndpointTests {
    @Test("nearby lists places nearest first with distances from GeoCore")
    func nearbyMatchesStore() async throws {
        let store = try await store(csulbRows)
        let expected = try await store.nearby(NearbyQuery(centre: Spot.hallOfScience, radius: SearchRadius(meters: 500)))
        #expect(expected.count >= 3)
        try await withApp(store) { client in
            let response = try await client.execute(
                uri: "/v1/places/nearby?lat=33.779842&lon=-118.112526&radius=500", method: .get)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "application/json")
            let body: PlacesWire = try response.decoded()
            #expect(body.places.map(\.id) == expected.map(\.place.id.rawValue))
            #expect(body.places.map(\.distance_m) == expected.map(\.distance.meters))
            #expect(body.places.map(\.bearing_deg) == expected.map(\.bearing.degrees))
            #expect(body.places.map(\.lat) == expected.map(\.place.coordinate.latitude))
            #expect(body.places.map(\.lon) == expected.map(\.place.coordinate.longitude))
            #expect(body.places.map(\.distance_m) == body.places.map(\.distance_m).sorted())
            #expect(body.places.first?.id == "csulb-hsci")
            #expect(body.places.first?.distance_m == 0)
        }
    }

    @Test("nearby defaults to a 1000 m radius and 20 results")
    func nearbyDefaults() async throws {
        let store = try await store(bangkokRows)
        let expected = try await store.nearby(NearbyQuery(centre: Spot.watPho))
        let wider = try await store.nearby(NearbyQuery(centre: Spot.watPho, radius: SearchRadius(meters: 5000)))
        // The default must be doing work: some temples lie between 1 km and 5 km of Wat Pho.
        #expect(wider.count > expected.count)
        try await withApp(store) { client in
            let body: PlacesWire = try await client.execute(
                uri: "/v1/places/nearby?lat=13.746549&lon=100.492766", method: .get
            ).decoded()
            #expect(body.places.map(\.id) == expected.map(\.place.id.rawValue))
            #expect(body.places.map(\.distance_m).allSatisfy { $0 <= 1000 })
        }
    }

    @Test("nearby filters by category given repeated or comma-separated, and honours limit")
    func nearbyCategoriesAndLimit() async throws {
        let store = try await store(csulbRows)
        let both = try await store.nearby(NearbyQuery(
            centre: Spot.hallOfScience, radius: SearchRadius(meters: 2000), categories: ["academic", "administrative"]))
        let academic = try await store.nearby(NearbyQuery(
            centre: Spot.hallOfScience, radius: SearchRadius(meters: 2000), categories: ["academic"], limit: ResultLimit(1)))
        #expect(academic.count == 1)
        try await withApp(store) { client in
            let base = "/v1/places/nearby?lat=33.779842&lon=-118.112526&radius=2000"
            let repeated: PlacesWire = try await client.execute(
                uri: base + "&category=academic&category=administrative", method: .get
            ).decoded()
            let commas: PlacesWire = try await client.execute(
                uri: base + "&category=academic,administrative", method: .get
            ).decoded()
            let limited: PlacesWire = try await client.execute(
                uri: base + "&category=Academic&limit=1", method: .get
            ).decoded()
            #expect(repeated.places.map(\.id) == both.map(\.place.id.rawValue))
            #expect(commas.places.map(\.id) == both.map(\.place.id.rawValue))
            #expect(limited.places.map(\.id) == academic.map(\.place.id.rawValue))
            #expect(limited.places.allSatisfy { $0.category == "academic" })
        }
    }

    @Test("nearby answers a GeoJSON FeatureCollection of points in [lon, lat] when asked for application/geo+json")
    func nearbyGeoJSON() async throws {
        let store = try await store(csulbRows)
        let expected = try await store.nearby(NearbyQuery(centre: Spot.hallOfScience, radius: SearchRadius(meters: 500)))
        try await withApp(store) { client in
            let response = try await client.execute(
                uri: "/v1/places/nearby?lat=33.779842&lon=-118.112526&radius=500", method: .get,
                headers: [.accept: "application/geo+json"])
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "application/geo+json")
            #expect(response.headers[.vary] == "Accept, Accept-Encoding", "a form per Accept, compressed or not")
            let collection: GeoJSONFeatureCollection = try response.decoded()
            #expect(collection.features.map(\.id) == expected.map(\.place.id.rawValue))
            #expect(collection.features.map(\.geometry) == expected.map { .point($0.place.coordinate) })
            #expect(collection.features.map { $0.properties["distance_m"] } == expected.map { .number($0.distance.meters) })
            #expect(collection.features.map { $0.properties["bearing_deg"] } == expected.map { .number($0.bearing.degrees) })
            #expect(collection.features.first?.properties["name"] == .string("Hall of Science"))

            // On the wire the position is longitude first.
            let raw = response.object
            let first = (raw?["features"] as? [[String: Any]])?.first
            let position = (first?["geometry"] as? [String: Any])?["coordinates"] as? [Double]
            #expect(position == [-118.112526, 33.779842])
        }
    }

    @Test("nearby answers plain JSON for */*, application/json, or a GeoJSON preference below JSON's")
    func nearbyPlainJSONByDefault() async throws {
        let store = try await store(csulbRows)
        try await withApp(store) { client in
            for accept in ["*/*", "application/json", "application/json, application/geo+json;q=0.5", "text/html"] {
                let response = try await client.execute(
                    uri: "/v1/places/nearby?lat=33.779842&lon=-118.112526", method: .get, headers: [.accept: accept])
                #expect(response.headers[.contentType] == "application/json", "Accept: \(accept)")
                #expect(try response.decoded(as: PlacesWire.self).places.isEmpty == false)
            }
        }
    }

    @Test("closest names the closest place, labels the position and says on_campus null without boundaries")
    func closestWithoutCampuses() async throws {
        let store = try await store(csulbRows)
        let locator = Locator(places: store, campuses: store)
        // The Library's own coordinate: the closest administrative building is another one.
        let library = Spot.coordinate(33.777267, -118.114777)
        let expected = try await locator.whereabouts(of: library, categories: ["administrative"])
        let closest = try #require(expected.closest)
        try await withApp(store) { client in
            let response = try await client.execute(
                uri: "/v1/places/closest?lat=33.777267&lon=-118.114777&category=administrative", method: .get)
            #expect(response.status == .ok)
            let body = response.object
            let place = body?["place"] as? [String: Any]
            #expect(place?["id"] as? String == closest.place.id.rawValue)
            #expect(place?["category"] as? String == "administrative")
            #expect(body?["distance_m"] as? Double == closest.distance.meters)
            #expect(body?["bearing_deg"] as? Double == closest.bearing.degrees)
            #expect(body?["label"] as? String == expected.label)
            #expect(body?["on_campus"] is NSNull)
            #expect(body?.keys.contains("on_campus") == true)

            let atHall = try await client.execute(uri: "/v1/places/closest?lat=33.779842&lon=-118.112526", method: .get)
            let hall = atHall.object
            #expect(hall?["label"] as? String == "Around Hall of Science")
            #expect(hall?["distance_m"] as? Double == 0)
        }
    }

    @Test("closest says on_campus true inside a loaded boundary and false outside it")
    func closestOnCampus() async throws {
        let store = try await store(csulbRows)
        let gym = try Footprints.pavilionGym()
        _ = try await store.upsert([gym.place])
        // A real building outline stands in for a campus boundary: no public campus boundary exists.
        _ = try await store.upsert([Campus(id: PlaceID("test-boundary"), name: "Pavilion block", boundary: gym.outline)])
        let inside = gym.place.coordinate
        try await withApp(store) { client in
            let onCampus = try await client.execute(
                uri: "/v1/places/closest?lat=\(inside.latitude)&lon=\(inside.longitude)", method: .get)
            let insideBody = onCampus.object
            #expect(insideBody?["on_campus"] as? Bool == true)
            #expect((insideBody?["campuses"] as? [[String: Any]])?.first?["id"] as? String == "test-boundary")

            let offCampus = try await client.execute(uri: "/v1/places/closest?lat=33.779842&lon=-118.112526", method: .get)
            let outsideBody = offCampus.object
            #expect(outsideBody?["on_campus"] as? Bool == false)
            #expect((outsideBody?["campuses"] as? [Any])?.isEmpty == true)
        }
    }

    @Test("closest on an empty store is a 404 problem: there is no place to be closest to")
    func closestOnEmptyStore() async throws {
        try await withApp(InMemoryStore()) { client in
            let response = try await client.execute(uri: "/v1/places/closest?lat=33.779842&lon=-118.112526", method: .get)
            #expect(response.status == .notFound)
            #expect(response.headers[.contentType] == "application/problem+json")
            let problem: ProblemWire = try response.decoded()
            #expect(problem.status == 404)
            #expect(problem.errors == nil)
        }
    }

    @Test("search finds places by name or building code, best match first, as the store ranks them")
    func searchMatchesStore() async throws {
        let store = try await store(csulbRows, bangkokRows)
        let byCode = try await store.search(PlaceSearch(text: "hsci"))
        let byWord = try await store.search(PlaceSearch(text: "hall"))
        let temples = try await store.search(PlaceSearch(text: "wat", categories: ["buddhist_temple"], limit: ResultLimit(3)))
        #expect(byWord.count >= 2)
        #expect(temples.count == 3)
        try await withApp(store) { client in
            let code: PlacesWrapper = try await client.execute(uri: "/v1/places?q=HSCI", method: .get).decoded()
            #expect(code.places.map(\.id) == byCode.map(\.id.rawValue))
            #expect(code.places.first?.id == "csulb-hsci")
            #expect(code.places.first?.aliases == ["HSCI"])
            #expect(code.places.first?.attributes["xcheck_lightguard_name"] == "Hall of Science")

            let word: PlacesWrapper = try await client.execute(uri: "/v1/places?q=hall", method: .get).decoded()
            #expect(word.places.map(\.id) == byWord.map(\.id.rawValue))

            let limited: PlacesWrapper = try await client.execute(
                uri: "/v1/places?q=Wat&category=buddhist_temple&limit=3", method: .get
            ).decoded()
            #expect(limited.places.map(\.id) == temples.map(\.id.rawValue))

            let spaced: PlacesWrapper = try await client.execute(uri: "/v1/places?q=Hall+of%20Science", method: .get).decoded()
            #expect(spaced.places.map(\.id) == ["csulb-hsci"])
        }
    }

    @Test("search answers GeoJSON when asked, with the same places")
    func searchGeoJSON() async throws {
        let store = try await store(csulbRows)
        let expected = try await store.search(PlaceSearch(text: "hall"))
        try await withApp(store) { client in
            let response = try await client.execute(
                uri: "/v1/places?q=hall", method: .get, headers: [.accept: "application/geo+json"])
            #expect(response.headers[.contentType] == "application/geo+json")
            let collection: GeoJSONFeatureCollection = try response.decoded()
            #expect(collection.features.map(\.id) == expected.map(\.id.rawValue))
            #expect(collection.features.map(\.geometry) == expected.map { .point($0.coordinate) })
        }
    }

    @Test("a place by id comes with its aliases and attributes")
    func placeByID() async throws {
        let store = try await store(csulbRows)
        let stored = try #require(try await store.place(id: PlaceID("csulb-bh")))
        try await withApp(store) { client in
            let response = try await client.execute(uri: "/v1/places/csulb-bh", method: .get)
            #expect(response.status == .ok)
            let place: PlaceWire = try response.decoded()
            #expect(place.id == "csulb-bh")
            #expect(place.name == stored.name)
            #expect(place.lat == stored.coordinate.latitude)
            #expect(place.lon == stored.coordinate.longitude)
            #expect(place.aliases == stored.aliases)
            #expect(place.attributes == stored.attributes)
            let raw = response.object
            #expect(raw?.keys.contains("footprint") == false)
        }
    }

    @Test("a place with a footprint returns it as a GeoJSON MultiPolygon, and a percent-encoded slash in the id works")
    func placeWithFootprint() async throws {
        let store = InMemoryStore()
        let gym = try Footprints.pavilionGym()
        _ = try await store.upsert([gym.place])
        try await withApp(store) { client in
            let response = try await client.execute(uri: "/v1/places/way%2F32274168", method: .get)
            #expect(response.status == .ok)
            struct Detail: Decodable {
                var id: String
                var footprint: GeoJSONGeometry
            }
            let detail: Detail = try response.decoded()
            #expect(detail.id == "way/32274168")
            #expect(detail.footprint == .multiPolygon(gym.outline))
        }
    }

    @Test("an unknown or malformed place id is a 404 problem")
    func unknownPlace() async throws {
        let store = try await store(csulbRows)
        try await withApp(store) { client in
            for uri in ["/v1/places/csulb-nowhere", "/v1/places/%20padded%20", "/v1/places/%ZZ",
                        "/v1/places/" + String(repeating: "x", count: 129)] {
                let response = try await client.execute(uri: uri, method: .get)
                #expect(response.status == .notFound, "\(uri)")
                #expect(response.headers[.contentType] == "application/problem+json")
                #expect(try response.decoded(as: ProblemWire.self).status == 404)
            }
        }
    }
}

/// `{"places": [...]}` of plain places, as search answers.
struct PlacesWrapper: Decodable { var places: [PlaceWire] }
