import Foundation
import Testing
@testable import GeoCore
import GeoTestSupport

/// One row of Fixtures/sphere-vectors.csv: a published sphere distance with the radius it assumes.
struct SphereVector: CustomTestStringConvertible, Sendable {
    let id: String
    let start: Coordinate
    let end: Coordinate
    let distance: Double
    let radius: Double
    let tolerance: Double

    var testDescription: String { id }

    static func load() throws -> [SphereVector] {
        let url = try #require(Bundle.module.url(forResource: "sphere-vectors", withExtension: "csv", subdirectory: "Fixtures"))
        let lines = try String(contentsOf: url, encoding: .utf8).split(whereSeparator: \.isNewline).dropFirst()
        return try lines.map { line in
            let fields = splitCSV(String(line))
            let model = fields[6]
            // The model column names the radius, e.g. "sphere R=6372797.560856 m (Redis)".
            let radiusText = try #require(model.split(separator: "=").dropFirst().first?.split(separator: " ").first)
            return SphereVector(
                id: fields[0],
                start: try Coordinate(latitude: try #require(Double(fields[1])), longitude: try #require(Double(fields[2]))),
                end: try Coordinate(latitude: try #require(Double(fields[3])), longitude: try #require(Double(fields[4]))),
                distance: try #require(Double(fields[5])),
                radius: try #require(Double(radiusText)),
                tolerance: try #require(Double(fields[7])))
        }
    }

    /// Splits one CSV line, honouring double-quoted fields with doubled quotes inside.
    static func splitCSV(_ line: String) -> [String] {
        var fields: [String] = [], current = "", quoted = false
        var characters = line.makeIterator()
        while let character = characters.next() {
            switch (character, quoted) {
            case ("\"", true): quoted = false
            case ("\"", false): if current.isEmpty { quoted = true } else { current.append("\"") }
            case (",", false): fields.append(current); current = ""
            default: current.append(character)
            }
        }
        fields.append(current)
        return fields
    }
}

@Suite("Haversine distance")
struct DistanceTests {
    @Test("matches every published sphere distance within its stated tolerance, using that row's radius",
          arguments: try SphereVector.load())
    func publishedVectors(vector: SphereVector) {
        let computed = haversineDistance(from: vector.start, to: vector.end, radius: .meters(vector.radius))
        #expect(abs(computed.meters - vector.distance) <= vector.tolerance,
                "\(vector.id): computed \(computed.meters) m, published \(vector.distance) m")
    }

    @Test("the fixture holds all fourteen published vectors")
    func fixtureIsComplete() throws {
        #expect(try SphereVector.load().count == 14)
    }

    @Test("the sphere radius is the IUGG mean radius 6,371,008.8 m")
    func meanRadius() {
        #expect(Earth.meanRadius.meters == 6_371_008.8)
    }

    @Test("a centre measured from many times gives every point the formula's distance for the pair alone, to the last bit")
    func centreMeasuredOnce() {
        /// The haversine formula as written, every term worked out for the pair.
        func formula(_ a: Coordinate, _ b: Coordinate) -> Double {
            let phi1 = a.latitude * .pi / 180, phi2 = b.latitude * .pi / 180
            let sinHalfPhi = sin((phi2 - phi1) / 2), sinHalfLambda = sin((b.longitude * .pi / 180 - a.longitude * .pi / 180) / 2)
            let h = sinHalfPhi * sinHalfPhi + cos(phi1) * cos(phi2) * sinHalfLambda * sinHalfLambda
            return Earth.meanRadius.meters * (2 * asin(min(1, h.squareRoot())))
        }
        var generator = SeededGenerator(seed: 11)
        for index in 0..<200 {
            let centre = randomCentre(using: &generator, kind: index)
            let measure = HaversineCentre(centre)
            for other in 0..<50 {
                let point = randomCentre(using: &generator, kind: index + other)
                #expect(measure.distance(to: point).meters.bitPattern == formula(centre, point).bitPattern, "\(centre) to \(point)")
                #expect(haversineDistance(from: centre, to: point) == measure.distance(to: point))
            }
        }
    }

    @Test("a point is zero metres from itself, everywhere including the poles and the antimeridian")
    func zeroDistance() {
        for point in [coordinate(0, 0), coordinate(90, 0), coordinate(-90, 123), coordinate(12.5, 180), coordinate(-33, -180)] {
            #expect(haversineDistance(from: point, to: point).meters == 0)
        }
    }

    @Test("distance is symmetric and obeys the triangle inequality for random points")
    func symmetryAndTriangle() {
        var generator = SeededGenerator(seed: 7)
        for index in 0..<5000 {
            let a = randomCentre(using: &generator, kind: index)
            let b = randomCentre(using: &generator, kind: index + 1)
            let c = randomCentre(using: &generator, kind: index + 2)
            let ab = haversineDistance(from: a, to: b).meters
            #expect(abs(ab - haversineDistance(from: b, to: a).meters) <= 1e-6)
            let ac = haversineDistance(from: a, to: c).meters, cb = haversineDistance(from: c, to: b).meters
            #expect(ab <= ac + cb + 1e-6, "triangle inequality failed for \(a), \(b), \(c)")
            #expect(ab <= Double.pi * Earth.meanRadius.meters + 1e-6)
        }
    }

    @Test("points on either side of the antimeridian are as close as the same gap anywhere on their parallel")
    func antimeridianPairs() {
        let across = haversineDistance(from: coordinate(0, 179.9), to: coordinate(0, -179.9)).meters
        let same = haversineDistance(from: coordinate(0, 10.1), to: coordinate(0, 10.3)).meters
        #expect(abs(across - same) < 1e-6)
        // 0.2° of the equator on the mean sphere.
        #expect(abs(across - 0.2 * .pi / 180 * Earth.meanRadius.meters) < 1e-6)
        #expect(haversineDistance(from: coordinate(51, 180), to: coordinate(51, -180)).meters < 1e-6)
    }

    @Test("every longitude at a pole is the same point, and pole to pole is half a great circle")
    func polePairs() {
        #expect(haversineDistance(from: coordinate(90, 0), to: coordinate(90, 135)).meters < 1e-6)
        #expect(haversineDistance(from: coordinate(-90, -180), to: coordinate(-90, 45)).meters < 1e-6)
        let poleToPole = haversineDistance(from: coordinate(90, 0), to: coordinate(-90, 0)).meters
        #expect(abs(poleToPole - .pi * Earth.meanRadius.meters) < 1e-6)
        let poleToEquator = haversineDistance(from: coordinate(90, 77), to: coordinate(0, -120)).meters
        #expect(abs(poleToEquator - .pi / 2 * Earth.meanRadius.meters) < 1e-6)
    }

    @Test("antipodal points are half a circumference apart, not NaN")
    func antipodes() {
        let d = haversineDistance(from: coordinate(13.75, 100.49), to: coordinate(-13.75, -79.51)).meters
        #expect(abs(d - .pi * Earth.meanRadius.meters) < 1e-3)
    }
}

@Suite("Initial bearing")
struct BearingTests {
    @Test("cardinal directions from the equator are 0, 90, 180 and 270 degrees")
    func cardinal() {
        let origin = coordinate(0, 0)
        #expect(abs(initialBearing(from: origin, to: coordinate(1, 0)).degrees - 0) < 1e-9)
        #expect(abs(initialBearing(from: origin, to: coordinate(0, 1)).degrees - 90) < 1e-9)
        #expect(abs(initialBearing(from: origin, to: coordinate(-1, 0)).degrees - 180) < 1e-9)
        #expect(abs(initialBearing(from: origin, to: coordinate(0, -1)).degrees - 270) < 1e-9)
    }

    @Test("crossing the antimeridian eastwards is a bearing of 90 degrees, not 270")
    func antimeridianEastwards() {
        #expect(abs(initialBearing(from: coordinate(0, 179.9), to: coordinate(0, -179.9)).degrees - 90) < 1e-9)
    }

    @Test("bearings are always in [0, 360) and coincident points give north")
    func range() {
        var generator = SeededGenerator(seed: 11)
        for index in 0..<2000 {
            let bearing = initialBearing(from: randomCentre(using: &generator, kind: index),
                                         to: randomCentre(using: &generator, kind: index + 1)).degrees
            #expect(bearing >= 0 && bearing < 360)
        }
        #expect(initialBearing(from: coordinate(33.78, -118.11), to: coordinate(33.78, -118.11)).degrees == 0)
        #expect(Bearing(degrees: -90).degrees == 270)
        #expect(Bearing(degrees: 720).degrees == 0)
        #expect(Bearing(degrees: -1e-15).degrees == 0)
    }

    @Test("from a point to one reached at a bearing, the initial bearing is that bearing")
    func destinationRoundTrip() {
        var generator = SeededGenerator(seed: 13)
        for _ in 0..<2000 {
            let start = coordinate(Double.random(in: -80...80, using: &generator), Double.random(in: -180...180, using: &generator))
            let bearing = Double.random(in: 0..<360, using: &generator)
            let end = destination(from: start, distance: Double.random(in: 10...100_000, using: &generator), bearing: bearing)
            let measured = initialBearing(from: start, to: end).degrees
            let difference = abs(measured - bearing)
            #expect(min(difference, 360 - difference) < 1e-6)
        }
    }
}

@Suite("Coordinate validation")
struct CoordinateTests {
    @Test("values outside degree ranges and non-finite values are refused with the field they concern")
    func refusesBadValues() {
        #expect(throws: CoordinateError.latitudeOutOfRange(91)) { try Coordinate(latitude: 91, longitude: 0) }
        #expect(throws: CoordinateError.latitudeOutOfRange(-90.0001)) { try Coordinate(latitude: -90.0001, longitude: 0) }
        #expect(throws: CoordinateError.longitudeOutOfRange(180.5)) { try Coordinate(latitude: 0, longitude: 180.5) }
        #expect(throws: CoordinateError.latitudeNotFinite) { try Coordinate(latitude: .nan, longitude: 0) }
        #expect(throws: CoordinateError.longitudeNotFinite) { try Coordinate(latitude: 0, longitude: .infinity) }
        #expect(CoordinateError.latitudeOutOfRange(91).field == "lat")
        #expect(CoordinateError.longitudeNotFinite.field == "lon")
    }

    @Test("the edges of the ranges are valid coordinates")
    func acceptsEdges() throws {
        for (lat, lon) in [(90.0, 180.0), (-90.0, -180.0), (0.0, 0.0)] {
            let point = try Coordinate(latitude: lat, longitude: lon)
            #expect(point.latitude == lat && point.longitude == lon)
        }
    }
}

@Suite("WGS84 geodesic")
struct GeodesicTests {
    /// Geoscience Australia's worked example (Vincenty 1975): Flinders Peak to Buninyong, GRS80/WGS84,
    /// 54 972.271 m at an initial azimuth of 306°52′05.37″.
    @Test("Flinders Peak to Buninyong matches Geoscience Australia's published distance and azimuth")
    func flindersPeakToBuninyong() throws {
        let flindersPeak = try Coordinate(latitude: -(37 + 57 / 60.0 + 3.72030 / 3600), longitude: 144 + 25 / 60.0 + 29.52440 / 3600)
        let buninyong = try Coordinate(latitude: -(37 + 39 / 60.0 + 10.15610 / 3600), longitude: 143 + 55 / 60.0 + 35.38390 / 3600)
        let solution = Geodesic.inverse(from: flindersPeak, to: buninyong)
        #expect(abs(solution.distance.meters - 54_972.271) < 0.001)
        #expect(abs(solution.initialBearing.degrees - (306 + 52 / 60.0 + 5.37 / 3600)) < 0.5 / 3600)
    }

    @Test("pole to pole along the ellipsoid is twice the WGS84 meridian quadrant, 20 003 931.46 m")
    func meridian() {
        // Meridian quadrant of WGS84: 10 001 965.729 m (NIMA TR8350.2 derived; Karney's tables).
        let solution = Geodesic.inverse(from: coordinate(90, 0), to: coordinate(-90, 0))
        #expect(abs(solution.distance.meters - 2 * 10_001_965.729) < 0.01)
    }

    @Test("the geodesic and the sphere agree to within 0.6 percent (the spread of the ellipsoid's radii of curvature), and exactly at zero")
    func agreesWithSphere() {
        var generator = SeededGenerator(seed: 17)
        for index in 0..<1000 {
            let a = randomCentre(using: &generator, kind: index)
            let b = randomCentre(using: &generator, kind: index + 1)
            let sphere = haversineDistance(from: a, to: b).meters
            let ellipsoid = Geodesic.inverse(from: a, to: b).distance.meters
            if sphere > 1000 { #expect(abs(sphere - ellipsoid) / ellipsoid < 0.006) }
        }
        #expect(Geodesic.inverse(from: coordinate(13.7, 100.5), to: coordinate(13.7, 100.5)).distance.meters == 0)
    }
}
