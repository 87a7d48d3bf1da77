import GeoCore
import Hummingbird
import HummingbirdTesting
import Testing
import VicinityCore
import VicinityHTTP

@Suite("Distance endpoint")
struct DistanceEndpointTests {
    struct DistanceWire: Decodable {
        var distance_m: Double
        var bearing_deg: Double
        var method: String
    }

    static let library = Spot.coordinate(33.777267, -118.114777)

    @Test("distance defaults to haversine and equals GeoCore's figures exactly")
    func haversineByDefault() async throws {
        try await withApp(InMemoryStore()) { client in
            let body: DistanceWire = try await client.execute(
                uri: "/v1/distance?from=33.779842,-118.112526&to=33.777267,-118.114777", method: .get
            ).decoded()
            #expect(body.method == "haversine")
            #expect(body.distance_m == haversineDistance(from: Spot.hallOfScience, to: Self.library).meters)
            #expect(body.bearing_deg == initialBearing(from: Spot.hallOfScience, to: Self.library).degrees)
        }
    }

    @Test("distance with method=geodesic uses the WGS84 ellipsoid solution")
    func geodesic() async throws {
        let expected = Geodesic.inverse(from: Spot.hallOfScience, to: Spot.watPho)
        try await withApp(InMemoryStore()) { client in
            let body: DistanceWire = try await client.execute(
                uri: "/v1/distance?from=33.779842,-118.112526&to=13.746549,100.492766&method=geodesic", method: .get
            ).decoded()
            #expect(body.method == "geodesic")
            #expect(body.distance_m == expected.distance.meters)
            #expect(body.bearing_deg == expected.initialBearing.degrees)
            #expect(body.distance_m != haversineDistance(from: Spot.hallOfScience, to: Spot.watPho).meters)
        }
    }

    @Test("distance reports a malformed from, an out-of-range to and an unknown method together")
    func invalidDistance() async throws {
        try await withApp(InMemoryStore()) { client in
            let response = try await client.execute(
                uri: "/v1/distance?from=33.779842&to=91,-118.112526&method=vincenty", method: .get)
            #expect(response.status == .badRequest)
            let problem: ProblemWire = try response.decoded()
            #expect(problem.fields == ["from", "to", "method"])
            #expect(problem.errors?[1].message.contains("[-90, 90]") == true)

            let missing: ProblemWire = try await client.execute(uri: "/v1/distance", method: .get).decoded()
            #expect(missing.errors == [
                .init(field: "from", message: "is required"), .init(field: "to", message: "is required"),
            ])
        }
    }
}
