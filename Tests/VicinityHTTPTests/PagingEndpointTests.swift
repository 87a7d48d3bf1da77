import Foundation
import GeoCore
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import VicinityCore
import VicinityHTTP

/// A page of places with its link to the next.
struct PageWire: Decodable {
    var places: [HitWire]
    var next: String?
}

@Suite("Paging nearby places")
struct PagingEndpointTests {
    @Test("following next and the Link header from the first page gives every place within the radius once, in order")
    func followingNextGivesEveryPlace() async throws {
        let store = try await store(csulbRows)
        let all = try await store.nearby(NearbyQuery(
            centre: Spot.hallOfScience, radius: SearchRadius(meters: 2000), limit: ResultLimit(500)))
        #expect(all.count == 6, "the six fixture buildings")
        try await withApp(store) { client in
            var uri: String? = "/v1/places/nearby?lat=33.779842&lon=-118.112526&radius=2000&limit=4"
            var seen: [String] = []
            var pages = 0
            while let current = uri {
                let response = try await client.execute(uri: current, method: .get)
                #expect(response.status == .ok)
                let page: PageWire = try response.decoded()
                seen += page.places.map(\.id)
                pages += 1
                let link = response.headers[try #require(HTTPField.Name("Link"))]
                #expect(link == page.next.map { "<\($0)>; rel=\"next\"" }, "the header names the same page")
                if let next = page.next {
                    #expect(next.hasPrefix("/v1/places/nearby?lat=33.779842&lon=-118.112526&radius=2000&limit=4&cursor="))
                }
                uri = page.next
            }
            #expect(seen == all.map(\.place.id.rawValue))
            #expect(pages == 2, "a full page of 4, then the last 2")
        }
    }

    @Test("the GeoJSON form carries next too, and a cursor that is not one is a 400 naming cursor")
    func geoJSONAndBadCursor() async throws {
        let store = try await store(csulbRows)
        try await withApp(store) { client in
            let response = try await client.execute(
                uri: "/v1/places/nearby?lat=33.779842&lon=-118.112526&limit=2", method: .get,
                headers: [.accept: "application/geo+json"])
            #expect(response.status == .ok)
            let collection = try JSONSerialization.jsonObject(with: Data(response.text.utf8)) as? [String: Any]
            let next = try #require(collection?["next"] as? String)
            #expect(next.contains("cursor="))
            #expect((collection?["features"] as? [Any])?.count == 2)

            for bad in ["abc", "", "%21%21"] {
                let refused = try await client.execute(
                    uri: "/v1/places/nearby?lat=33.779842&lon=-118.112526&cursor=\(bad)", method: .get)
                if bad.isEmpty {
                    #expect(refused.status == .ok, "an empty cursor is the first page")
                    continue
                }
                #expect(refused.status == .badRequest)
                let problem: ProblemWire = try refused.decoded()
                #expect(problem.fields == ["cursor"])
            }
        }
    }

    @Test("fields=id,distance_m gives only ids and distances, the full answer's, on every page and in GeoJSON; a bad selection is a 400 naming fields")
    func compactFields() async throws {
        let store = try await store(csulbRows)
        try await withApp(store) { client in
            let base = "/v1/places/nearby?lat=33.779842&lon=-118.112526&radius=2000&limit=4"
            var full: [[String: Any]] = []
            var uri: String? = base
            while let current = uri {
                let response = try await client.execute(uri: current, method: .get)
                let page = try #require(try JSONSerialization.jsonObject(with: Data(response.text.utf8)) as? [String: Any])
                full += try #require(page["places"] as? [[String: Any]])
                uri = page["next"] as? String
            }
            #expect(full.count == 6)

            var compact: [[String: Any]] = []
            uri = base + "&fields=id,distance_m"
            while let current = uri {
                let response = try await client.execute(uri: current, method: .get)
                #expect(response.status == .ok)
                let page = try #require(try JSONSerialization.jsonObject(with: Data(response.text.utf8)) as? [String: Any])
                compact += try #require(page["places"] as? [[String: Any]])
                uri = page["next"] as? String
                if let next = uri { #expect(next.contains("fields=id,distance_m"), "the next page keeps the selection") }
            }
            #expect(compact.map { Set($0.keys) } == Array(repeating: ["id", "distance_m"], count: 6))
            #expect(compact.map { $0["id"] as? String } == full.map { $0["id"] as? String })
            #expect(compact.map { $0["distance_m"] as? Double } == full.map { $0["distance_m"] as? Double })

            let geoJSON = try await client.execute(
                uri: base + "&fields=name", method: .get, headers: [.accept: "application/geo+json"])
            let collection = try JSONSerialization.jsonObject(with: Data(geoJSON.text.utf8)) as? [String: Any]
            let features = try #require(collection?["features"] as? [[String: Any]])
            #expect(features.count == 4)
            #expect(features.allSatisfy { Set((($0["properties"] as? [String: Any]) ?? [:]).keys) == ["name"] })
            #expect(features.allSatisfy { $0["geometry"] != nil }, "the point stays: it is the feature")

            let outlined = try await client.execute(uri: base + "&fields=id&footprint=true", method: .get)
            let outlinedPage = try JSONSerialization.jsonObject(with: Data(outlined.text.utf8)) as? [String: Any]
            let outlinedPlaces = try #require(outlinedPage?["places"] as? [[String: Any]])
            #expect(outlinedPlaces.allSatisfy { Set($0.keys) == ["id", "footprint"] })

            for bad in ["fields=", "fields=id,,name", "fields=id,footprint", "fields=directions_url", "fields=id&fields=name"] {
                let refused = try await client.execute(uri: base + "&" + bad, method: .get)
                #expect(refused.status == .badRequest, "\(bad)")
                let problem: ProblemWire = try refused.decoded()
                #expect(problem.fields == ["fields"], "\(bad)")
            }
        }
    }
}
