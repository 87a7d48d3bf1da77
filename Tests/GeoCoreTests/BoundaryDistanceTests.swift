import GeoCore
import GeoTestSupport
import Testing

@Suite("Distance to a boundary")
struct BoundaryDistanceTests {
    private static func point(_ latitude: Double, _ longitude: Double) -> Coordinate {
        do { return try Coordinate(latitude: latitude, longitude: longitude) } catch { preconditionFailure("\(error)") }
    }

    /// The shortest haversine distance to any of 4,000 points along each edge: slow and plainly right.
    private static func bruteForce(_ shape: MultiPolygon, from point: Coordinate) -> Double {
        var shortest = Double.infinity
        for polygon in shape.polygons {
            for ring in polygon.rings {
                for index in 0..<(ring.count - 1) {
                    let a = ring[index], b = ring[index + 1]
                    var deltaLongitude = b.longitude - a.longitude
                    if deltaLongitude > 180 { deltaLongitude -= 360 }
                    if deltaLongitude < -180 { deltaLongitude += 360 }
                    for step in 0...4000 {
                        let t = Double(step) / 4000
                        var longitude = a.longitude + t * deltaLongitude
                        if longitude > 180 { longitude -= 360 }
                        if longitude < -180 { longitude += 360 }
                        let along = Self.point(a.latitude + t * (b.latitude - a.latitude), longitude)
                        shortest = min(shortest, haversineDistance(from: point, to: along).meters)
                    }
                }
            }
        }
        return shortest
    }

    /// The quadrilateral of four CSULB buildings (Library, Hall of Science, Pyramid, Student Union, from
    /// Data/csulb-buildings.csv): a campus-sized shape.
    private static let csulb: MultiPolygon = {
        let ring = [
            point(33.777267, -118.114777), point(33.779842, -118.112526), point(33.787445, -118.114403),
            point(33.781700, -118.114632), point(33.777267, -118.114777),
        ]
        do { return MultiPolygon(try Polygon(exterior: ring)) } catch { preconditionFailure("\(error)") }
    }()

    @Test("matches brute force within a centimetre per ten metres, inside and outside, near and a few kilometres away")
    func matchesBruteForce() {
        let library = Self.point(33.777267, -118.114777)
        for (metres, bearing) in [(0.0, 0.0), (5, 45), (30, 200), (120, 270), (400, 10), (2500, 135), (6000, 300)] {
            let point = destination(from: library, distance: metres, bearing: bearing)
            let expected = Self.bruteForce(Self.csulb, from: point)
            let measured = Self.csulb.distanceToBoundary(from: point).meters
            #expect(abs(measured - expected) <= 0.01 + expected / 1000, "\(metres) m at \(bearing)°: \(measured) against \(expected)")
        }
        #expect(Self.csulb.distanceToBoundary(from: library) == .zero, "a vertex is on the boundary")
    }

    @Test("a shape across the antimeridian is measured the short way round")
    func antimeridian() throws {
        let ring = [
            Self.point(-16.80, 179.99), Self.point(-16.80, -179.99), Self.point(-16.82, -179.99), Self.point(-16.82, 179.99),
            Self.point(-16.80, 179.99),
        ]
        let shape = MultiPolygon(try Polygon(exterior: ring))
        for point in [Self.point(-16.81, 180), Self.point(-16.81, -179.995), Self.point(-16.79, 179.97)] {
            let expected = Self.bruteForce(shape, from: point)
            #expect(abs(shape.distanceToBoundary(from: point).meters - expected) <= 0.01 + expected / 1000, "\(point)")
            #expect(expected < 3000, "the short way round is a few hundred metres: \(expected)")
        }
    }
}
