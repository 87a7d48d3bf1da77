#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A latitude/longitude rectangle that contains every point within a radius of a centre on the sphere.
///
/// The box is exact for the sphere (the longitude half-width comes from the tangent meridians,
/// `asin(sin δ / cos φ)`), so it never drops a true hit and stays tight. Across the antimeridian it becomes
/// two longitude ranges; when a pole lies within the radius it covers every longitude.
public struct BoundingBox: Hashable, Sendable {
    public let minLatitude: Double
    public let maxLatitude: Double
    /// One range normally, two when the box crosses ±180°; each has `lowerBound <= upperBound`.
    public let longitudeRanges: [ClosedRange<Double>]

    public init(minLatitude: Double, maxLatitude: Double, longitudeRanges: [ClosedRange<Double>]) {
        self.minLatitude = minLatitude
        self.maxLatitude = maxLatitude
        self.longitudeRanges = longitudeRanges
    }

    /// The box around `centre` holding every point whose great-circle distance is at most `radius`.
    ///
    /// The radius is widened by one part in 10⁹ (plus 1 mm) before use so that points exactly on the circle
    /// are not lost to rounding; a box is a candidate filter, so a hair too wide costs nothing.
    public init(around centre: Coordinate, radius: Distance, sphereRadius: Distance = Earth.meanRadius) {
        let paddedRadius = max(0, radius.meters) * (1 + 1e-9) + 0.001
        let angular = paddedRadius / sphereRadius.meters
        let latitude = centre.latitudeRadians
        let longitude = centre.longitudeRadians
        let degrees = 180 / Double.pi

        let minLat = latitude - angular
        let maxLat = latitude + angular
        if angular >= .pi || minLat <= -.pi / 2 || maxLat >= .pi / 2 {
            // A pole is within reach: every meridian passes through it, so all longitudes qualify.
            self.init(
                minLatitude: max(-90, minLat * degrees),
                maxLatitude: min(90, maxLat * degrees),
                longitudeRanges: [-180...180]
            )
            return
        }
        let ratio = sin(angular) / cos(latitude)
        let halfWidth = ratio >= 1 ? Double.pi : asin(ratio)
        let west = (longitude - halfWidth) * degrees
        let east = (longitude + halfWidth) * degrees
        let ranges: [ClosedRange<Double>]
        if halfWidth >= .pi || east - west >= 360 {
            ranges = [-180...180]
        } else if west <= -180 {
            ranges = [(west + 360)...180, -180...east]
        } else if east >= 180 {
            ranges = [west...180, -180...(east - 360)]
        } else {
            ranges = [west...east]
        }
        self.init(minLatitude: minLat * degrees, maxLatitude: maxLat * degrees, longitudeRanges: ranges)
    }

    public func contains(_ coordinate: Coordinate) -> Bool {
        guard coordinate.latitude >= minLatitude, coordinate.latitude <= maxLatitude else { return false }
        return longitudeRanges.contains { $0.contains(coordinate.longitude) }
    }

    /// True when the box crosses the antimeridian and so is made of two longitude ranges.
    public var crossesAntimeridian: Bool { longitudeRanges.count > 1 }
}
