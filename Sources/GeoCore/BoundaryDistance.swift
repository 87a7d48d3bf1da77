#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension MultiPolygon {
    /// The shortest distance from `point` to any ring's edge, inside or outside.
    ///
    /// Each edge is measured in a plane tangent at `point` (an equirectangular projection with metres east
    /// scaled by the cosine of the point's latitude), the same plane reading of edges that `contains` uses:
    /// for campus-sized shapes the error is far below a phone fix's (under 0.1% of the distance within a few
    /// kilometres). Longitudes are taken the short way round, so shapes near ±180° measure as they should.
    public func distanceToBoundary(from point: Coordinate) -> Distance {
        let metresPerRadian = Earth.meanRadius.meters
        let eastScale = cos(point.latitudeRadians)
        func planar(_ c: Coordinate) -> (east: Double, north: Double) {
            var deltaLongitude = c.longitude - point.longitude
            if deltaLongitude > 180 { deltaLongitude -= 360 }
            if deltaLongitude < -180 { deltaLongitude += 360 }
            return (
                deltaLongitude * .pi / 180 * eastScale * metresPerRadian,
                (c.latitude - point.latitude) * .pi / 180 * metresPerRadian
            )
        }
        var shortest = Double.infinity
        for polygon in polygons {
            for ring in polygon.rings {
                for index in 0..<(ring.count - 1) {
                    let a = planar(ring[index]), b = planar(ring[index + 1])
                    let edge = (east: b.east - a.east, north: b.north - a.north)
                    let lengthSquared = edge.east * edge.east + edge.north * edge.north
                    // The edge's point closest to the origin (the point), clamped to the edge's ends.
                    let along = lengthSquared > 0 ? max(0, min(1, -(a.east * edge.east + a.north * edge.north) / lengthSquared)) : 0
                    let closest = (east: a.east + along * edge.east, north: a.north + along * edge.north)
                    shortest = min(shortest, (closest.east * closest.east + closest.north * closest.north).squareRoot())
                }
            }
        }
        return Distance(meters: shortest)
    }
}
