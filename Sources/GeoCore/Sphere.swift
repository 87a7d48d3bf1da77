#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The spherical Earth model used for every reported distance.
public enum Earth {
    /// Mean radius R₁ = (2a + b) / 3 of the WGS84 ellipsoid, 6,371,008.8 m, as recommended by the IUGG
    /// (Moritz, "Geodetic Reference System 1980", Bulletin Géodésique 54, 1980).
    public static let meanRadius = Distance(meters: 6_371_008.8)
}

/// Great-circle distance between two coordinates by the haversine formula.
///
/// The haversine form stays accurate for nearby points (where the spherical law of cosines loses digits)
/// and the `min(1, …)` guard keeps antipodal points finite.
public func haversineDistance(
    from start: Coordinate,
    to end: Coordinate,
    radius: Distance = Earth.meanRadius
) -> Distance {
    HaversineCentre(start, radius: radius).distance(to: end)
}

/// A point measured from many times, as a search's centre is: the part of the haversine formula that depends on
/// it alone (its latitude's cosine) is worked out once. `distance(to:)` is `haversineDistance(from:to:)`, which
/// it also implements, so the two agree to the last bit.
public struct HaversineCentre: Sendable {
    private let phi1: Double
    private let cosPhi1: Double
    private let lambda1: Double
    private let radius: Distance

    public init(_ centre: Coordinate, radius: Distance = Earth.meanRadius) {
        phi1 = centre.latitudeRadians
        cosPhi1 = cos(phi1)
        lambda1 = centre.longitudeRadians
        self.radius = radius
    }

    public func distance(to end: Coordinate) -> Distance {
        let phi2 = end.latitudeRadians
        let deltaPhi = phi2 - phi1
        let deltaLambda = end.longitudeRadians - lambda1
        let sinHalfPhi = sin(deltaPhi / 2)
        let sinHalfLambda = sin(deltaLambda / 2)
        let h = sinHalfPhi * sinHalfPhi + cosPhi1 * cos(phi2) * sinHalfLambda * sinHalfLambda
        let centralAngle = 2 * asin(min(1, sqrt(h)))
        return Distance(meters: radius.meters * centralAngle)
    }
}

/// Initial bearing (forward azimuth) of the great circle from `start` to `end`.
///
/// For coincident (or antipodal) points no direction is defined; the result is then 0 (north) by convention
/// rather than whatever `atan2(0, 0)` happens to give. From a pole the bearing is measured against the
/// meridian of the start's longitude, the usual convention.
public func initialBearing(from start: Coordinate, to end: Coordinate) -> Bearing {
    let phi1 = start.latitudeRadians
    let phi2 = end.latitudeRadians
    let deltaLambda = end.longitudeRadians - start.longitudeRadians
    let y = sin(deltaLambda) * cos(phi2)
    let x = cos(phi1) * sin(phi2) - sin(phi1) * cos(phi2) * cos(deltaLambda)
    if abs(y) < 1e-15 && abs(x) < 1e-15 { return Bearing(degrees: 0) }
    return Bearing(degrees: atan2(y, x) * 180 / .pi)
}
