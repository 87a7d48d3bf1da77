import Testing
@testable import GeoCore
import GeoTestSupport

/// Shapes are built here from plain degree grids so that expectations can be checked by eye.
private func ring(_ pairs: [(Double, Double)]) -> [Coordinate] {
    pairs.map { coordinate($0.0, $0.1) }
}

@Suite("Polygon containment")
struct PolygonTests {
    let square = ring([(0, 0), (0, 10), (10, 10), (10, 0), (0, 0)])
    let hole = ring([(4, 4), (4, 6), (6, 6), (6, 4), (4, 4)])

    @Test("a point is inside the exterior and outside any hole")
    func holes() throws {
        let polygon = try Polygon(exterior: square, holes: [hole])
        #expect(polygon.contains(coordinate(2, 2)))
        #expect(!polygon.contains(coordinate(5, 5)))
        #expect(!polygon.contains(coordinate(11, 5)))
        #expect(!polygon.contains(coordinate(-0.001, 5)))
    }

    @Test("points on the exterior edge are inside; points on a hole's edge are inside the polygon too")
    func edges() throws {
        let polygon = try Polygon(exterior: square, holes: [hole])
        #expect(polygon.contains(coordinate(0, 5)))
        #expect(polygon.contains(coordinate(10, 10)))
        #expect(polygon.contains(coordinate(4, 5)))
    }

    @Test("a MultiPolygon contains what any of its parts contains")
    func multiPolygon() throws {
        let second = try Polygon(exterior: ring([(20, 20), (20, 30), (30, 30), (30, 20), (20, 20)]))
        let multi = try MultiPolygon([try Polygon(exterior: square, holes: [hole]), second])
        #expect(multi.contains(coordinate(25, 25)))
        #expect(multi.contains(coordinate(1, 1)))
        #expect(!multi.contains(coordinate(5, 5)))
        #expect(!multi.contains(coordinate(15, 15)))
    }

    @Test("rings must be closed and have at least four positions")
    func ringRules() {
        #expect(throws: PolygonError.ringNotClosed(ring: 0)) {
            try Polygon(exterior: ring([(0, 0), (0, 1), (1, 1), (1, 0)]))
        }
        #expect(throws: PolygonError.tooFewPositions(ring: 0, count: 3)) {
            try Polygon(exterior: ring([(0, 0), (0, 1), (0, 0)]))
        }
        #expect(throws: PolygonError.ringNotClosed(ring: 1)) {
            try Polygon(exterior: square, holes: [ring([(4, 4), (4, 6), (6, 6), (6, 4)])])
        }
        #expect(throws: PolygonError.empty) { try MultiPolygon([]) }
    }

    @Test("the representative point lies inside even when the centroid does not")
    func representativePoint() throws {
        // A U shape whose centroid falls in the notch, and a square whose centroid falls in its hole.
        let u = try Polygon(exterior: ring([(0, 0), (0, 10), (10, 10), (10, 8), (2, 8), (2, 2), (10, 2), (10, 0), (0, 0)]))
        #expect(u.contains(u.representativePoint))
        let donut = try Polygon(exterior: square, holes: [hole])
        #expect(donut.contains(donut.representativePoint))
        let plain = try Polygon(exterior: square)
        #expect(plain.representativePoint == coordinate(5, 5))
    }
}
