import Foundation
import GeoCore
import Hummingbird
import HummingbirdTesting
import Testing
import VicinityCore
import VicinityHTTP

@Suite("Recommended temples")
struct TemplesEndpointTests {
    @Test("recommended temples come nearest first with distance, bearing and a directions link")
    func templesMatchStore() async throws {
        let store = try await store(csulbRows, bangkokRows)
        let expected = try await store.nearby(NearbyQuery(
            centre: Spot.watPho, radius: SearchRadius(meters: 2000), categories: TempleCategories.standard.categories))
        #expect(expected.count >= 5)
        try await withApp(store) { client in
            let response = try await client.execute(
                uri: "/v1/temples/recommended?lat=13.746549&lon=100.492766&radius=2000", method: .get)
            #expect(response.status == .ok)
            let body: TemplesWire = try response.decoded()
            #expect(body.temples.map(\.id) == expected.map(\.place.id.rawValue))
            #expect(body.temples.map(\.distance_m) == expected.map(\.distance.meters))
            #expect(body.temples.map(\.bearing_deg) == expected.map(\.bearing.degrees))
            #expect(body.temples.first?.id == "th-bkk-001")
            #expect(body.temples.first?.directions_url
                == "https://www.google.com/maps/dir/?api=1&destination=13.746549%2C100.492766")
            let arun = body.temples.first { $0.id == "th-bkk-005" }
            #expect(arun?.directions_url
                == "https://www.google.com/maps/dir/?api=1&destination=13.7438622%2C100.4884902")
        }
    }

    @Test("recommended temples honour limit and the configured temple categories")
    func configuredCategories() async throws {
        let store = try await store(bangkokRows)
        let shrines = TempleCategories(categories: ["shrine"])
        let expected = try await store.nearby(NearbyQuery(
            centre: Spot.watPho, radius: SearchRadius(meters: 2000), categories: shrines.categories))
        #expect(expected.map(\.place.id.rawValue) == ["th-bkk-006"])
        try await withApp(store, settings: ServiceSettings(temples: shrines)) { client in
            let body: TemplesWire = try await client.execute(
                uri: "/v1/temples/recommended?lat=13.746549&lon=100.492766&radius=2000", method: .get
            ).decoded()
            #expect(body.temples.map(\.id) == ["th-bkk-006"])
            #expect(body.temples.map(\.category) == ["shrine"])
        }
        try await withApp(store) { client in
            let body: TemplesWire = try await client.execute(
                uri: "/v1/temples/recommended?lat=13.746549&lon=100.492766&radius=2000&limit=2", method: .get
            ).decoded()
            #expect(body.temples.count == 2)
        }
    }

    @Test("no temple within the radius is an empty list with 200, not an error")
    func noTempleNearby() async throws {
        // Only Bangkok's temples and CSULB's buildings are loaded; from the Hall of Science no temple is near.
        let store = try await store(bangkokRows, csulbRows)
        try await withApp(store) { client in
            let response = try await client.execute(
                uri: "/v1/temples/recommended?lat=33.779842&lon=-118.112526&radius=50000", method: .get)
            #expect(response.status == .ok)
            #expect(response.text == #"{"next":null,"temples":[]}"#)
        }
    }

    @Test("recommended temples answer GeoJSON with directions links in the properties when asked")
    func templesGeoJSON() async throws {
        let store = try await store(bangkokRows)
        let expected = try await store.nearby(NearbyQuery(
            centre: Spot.watPho, radius: SearchRadius(meters: 1000), categories: TempleCategories.standard.categories))
        try await withApp(store) { client in
            let response = try await client.execute(
                uri: "/v1/temples/recommended?lat=13.746549&lon=100.492766", method: .get,
                headers: [.accept: "application/json;q=0.9, application/geo+json"])
            #expect(response.headers[.contentType] == "application/geo+json")
            let collection: GeoJSONFeatureCollection = try response.decoded()
            #expect(collection.features.map(\.id) == expected.map(\.place.id.rawValue))
            #expect(collection.features.map { $0.properties["distance_m"] } == expected.map { .number($0.distance.meters) })
            #expect(collection.features.allSatisfy {
                $0.properties["directions_url"]?.text?.hasPrefix("https://www.google.com/maps/dir/?api=1&destination=") == true
            })
        }
    }
}
