import Testing
@testable import GeoCore
import GeoTestSupport

@Suite("Bounding box around a centre")
struct BoundingBoxTests {
    @Test("never drops a point within the radius: random centres, radii and points, near the antimeridian and the poles too")
    func neverDropsATrueHit() {
        var generator = SeededGenerator(seed: 42)
        for index in 0..<4000 {
            let centre = randomCentre(using: &generator, kind: index)
            let radius = [1.0, 10, 100, 1000, 5000, 50_000, 2_000_000][index % 7] * Double.random(in: 0.1...1, using: &generator)
            let box = BoundingBox(around: centre, radius: .meters(radius))
            for _ in 0..<20 {
                let fraction = Bool.random(using: &generator) ? 1.0 : Double.random(in: 0...1, using: &generator)
                let point = destination(from: centre, distance: radius * fraction,
                                        bearing: Double.random(in: 0..<360, using: &generator))
                if haversineDistance(from: centre, to: point).meters <= radius {
                    #expect(box.contains(point), "box \(box) around \(centre) r=\(radius) misses \(point)")
                }
            }
        }
    }

    @Test("splits into two longitude ranges across the antimeridian")
    func splitsAtAntimeridian() {
        let box = BoundingBox(around: coordinate(-17.8, 179.99), radius: .meters(5000))
        #expect(box.crossesAntimeridian)
        #expect(box.longitudeRanges.count == 2)
        #expect(box.contains(coordinate(-17.8, -179.99)))
        #expect(box.contains(coordinate(-17.8, 180)))
        #expect(box.contains(coordinate(-17.8, -180)))
        #expect(!box.contains(coordinate(-17.8, 0)))
        #expect(!box.contains(coordinate(-17.8, -179)))
    }

    @Test("covers every longitude when a pole is within the radius, and only then")
    func coversPoles() {
        let north = BoundingBox(around: coordinate(89.995, 12), radius: .meters(1000))
        #expect(north.longitudeRanges == [-180...180])
        #expect(north.maxLatitude == 90)
        #expect(north.contains(coordinate(89.999, -170)))
        let south = BoundingBox(around: coordinate(-90, 0), radius: .meters(10))
        #expect(south.longitudeRanges == [-180...180] && south.minLatitude == -90)
        let nearPoleButNotReaching = BoundingBox(around: coordinate(89.9, 0), radius: .meters(1000))
        #expect(nearPoleButNotReaching.longitudeRanges.count == 1)
        #expect(nearPoleButNotReaching.longitudeRanges[0] != -180...180)
    }

    @Test("is tight: its latitude span is exactly twice the angular radius away from the poles")
    func tight() {
        let box = BoundingBox(around: coordinate(33.78, -118.11), radius: .meters(1000))
        let span = (box.maxLatitude - box.minLatitude) * .pi / 180 * Earth.meanRadius.meters
        #expect(abs(span - 2000) < 0.01)
        // The east and west edges touch the circle: the widest longitude of the circle is just inside.
        let east = destination(from: coordinate(33.78, -118.11), distance: 1000, bearing: 90)
        #expect(box.longitudeRanges[0].upperBound >= east.longitude)
        #expect(box.longitudeRanges[0].upperBound - east.longitude < 1e-4)
    }

    @Test("a radius of half the globe or more covers the whole globe")
    func wholeGlobe() {
        let box = BoundingBox(around: coordinate(13.75, 100.5), radius: .meters(21_000_000))
        #expect(box.longitudeRanges == [-180...180] && box.minLatitude == -90 && box.maxLatitude == 90)
    }
}
