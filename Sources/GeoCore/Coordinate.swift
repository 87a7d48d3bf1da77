/// A position on the Earth in WGS84 decimal degrees, latitude first.
///
/// A `Coordinate` always holds finite values with latitude in [-90, 90] and longitude in [-180, 180]:
/// every way to build one validates, so code that receives a `Coordinate` never checks again.
public struct Coordinate: Hashable, Sendable {
    public let latitude: Double
    public let longitude: Double

    /// Builds a coordinate, refusing values that are not degrees on the globe.
    public init(latitude: Double, longitude: Double) throws(CoordinateError) {
        guard latitude.isFinite else { throw .latitudeNotFinite }
        guard longitude.isFinite else { throw .longitudeNotFinite }
        guard (-90.0...90.0).contains(latitude) else { throw .latitudeOutOfRange(latitude) }
        guard (-180.0...180.0).contains(longitude) else { throw .longitudeOutOfRange(longitude) }
        self.latitude = latitude
        self.longitude = longitude
    }

    /// For values already proven in range by the caller's own arithmetic (wrapping, clamping).
    init(validLatitude latitude: Double, longitude: Double) {
        precondition(latitude.isFinite && longitude.isFinite && abs(latitude) <= 90 && abs(longitude) <= 180)
        self.latitude = latitude
        self.longitude = longitude
    }

    var latitudeRadians: Double { latitude * .pi / 180 }
    var longitudeRadians: Double { longitude * .pi / 180 }
}

extension Coordinate: CustomStringConvertible {
    public var description: String { "(\(latitude), \(longitude))" }
}

/// Why a pair of numbers is not a coordinate.
public enum CoordinateError: Error, Hashable, Sendable, CustomStringConvertible {
    case latitudeNotFinite
    case longitudeNotFinite
    case latitudeOutOfRange(Double)
    case longitudeOutOfRange(Double)

    /// The coordinate field the error is about, as named on the wire.
    public var field: String {
        switch self {
        case .latitudeNotFinite, .latitudeOutOfRange: "lat"
        case .longitudeNotFinite, .longitudeOutOfRange: "lon"
        }
    }

    public var description: String {
        switch self {
        case .latitudeNotFinite: "latitude must be a finite number"
        case .longitudeNotFinite: "longitude must be a finite number"
        case .latitudeOutOfRange(let value): "latitude \(value) is outside [-90, 90]"
        case .longitudeOutOfRange(let value): "longitude \(value) is outside [-180, 180]"
        }
    }
}
