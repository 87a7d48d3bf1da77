import CProj

/// Distance and azimuth on the WGS84 ellipsoid by Karney's algorithm (C. F. F. Karney, "Algorithms for
/// geodesics", J. Geodesy 87, 2013), through the implementation PROJ ships. Accurate to about 15 nm.
public enum Geodesic {
    /// WGS84 semi-major axis (m) and flattening, from NIMA TR8350.2.
    public static let wgs84SemiMajorAxis = 6_378_137.0
    public static let wgs84Flattening = 1 / 298.257223563

    public struct Solution: Hashable, Sendable {
        public let distance: Distance
        /// Forward azimuth at the start. 0 (north) for coincident points.
        public let initialBearing: Bearing
    }

    /// Solves the inverse geodesic problem between two points.
    public static func inverse(from start: Coordinate, to end: Coordinate) -> Solution {
        var geod = geod_geodesic()
        geod_init(&geod, wgs84SemiMajorAxis, wgs84Flattening)
        var meters = 0.0, azimuth1 = 0.0, azimuth2 = 0.0
        geod_inverse(&geod, start.latitude, start.longitude, end.latitude, end.longitude, &meters, &azimuth1, &azimuth2)
        let bearing = meters == 0 ? Bearing(degrees: 0) : Bearing(degrees: azimuth1.isFinite ? azimuth1 : 0)
        return Solution(distance: Distance(meters: meters), initialBearing: bearing)
    }
}
