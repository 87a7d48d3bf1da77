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

    @Test("with no temple within the radius the answer says so and gives the nearest ones beyond it, with directions")
    func noTempleNearby() async throws {
        // Only Bangkok's temples and CSULB's buildings are loaded; from the Hall of Science the nearest temple is
        // across the Pacific.
        let store = try await store(bangkokRows, csulbRows)
        let temples = try await store.nearby(NearbyQuery(
            centre: Spot.watPho, radius: SearchRadius(meters: 50_000), categories: TempleCategories.standard.categories))
        let hall = try Coordinate(latitude: 33.779842, longitude: -118.112526)
        let expected = temples.map { (id: $0.place.id.rawValue, distance: haversineDistance(from: hall, to: $0.place.coordinate).meters) }
            .sorted { $0.distance != $1.distance ? $0.distance < $1.distance : $0.id < $1.id }
        #expect(expected.count > 3)
        try await withApp(store) { client in
            let response = try await client.execute(
                uri: "/v1/temples/recommended?lat=33.779842&lon=-118.112526&radius=50000&limit=3", method: .get)
            #expect(response.status == .ok)
            #expect(response.object?["within_radius"] as? Bool == false)
            #expect(response.object?["next"] is NSNull)
            let body: TemplesWire = try response.decoded()
            #expect(body.temples.map(\.id) == expected.prefix(3).map(\.id))
            #expect(body.temples.map(\.distance_m) == expected.prefix(3).map(\.distance))
            #expect(body.temples.allSatisfy { $0.distance_m > 12_000_000 && $0.directions_url?.isEmpty == false })

            let near = try await client.execute(uri: "/v1/temples/recommended?lat=13.746549&lon=100.492766", method: .get)
            #expect(near.object?["within_radius"] as? Bool == true)
        }
        let buildingsOnly = try await VicinityHTTPTests.store(csulbRows)
        try await withApp(buildingsOnly) { client in
            let response = try await client.execute(uri: "/v1/temples/recommended?lat=33.779842&lon=-118.112526", method: .get)
            #expect(response.text == #"{"next":null,"temples":[],"within_radius":false}"#)
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
