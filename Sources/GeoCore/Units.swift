/// A length on the Earth's surface. Metres inside; build it from any unit, read it in any unit.
public struct Distance: Hashable, Comparable, Sendable {
    public let meters: Double

    public init(meters: Double) { self.meters = meters }

    public static func meters(_ value: Double) -> Distance { Distance(meters: value) }
    public static func kilometers(_ value: Double) -> Distance { Distance(meters: value * 1000) }

    public var kilometers: Double { meters / 1000 }

    public static let zero = Distance(meters: 0)

    public static func < (lhs: Distance, rhs: Distance) -> Bool { lhs.meters < rhs.meters }
    public static func + (lhs: Distance, rhs: Distance) -> Distance { Distance(meters: lhs.meters + rhs.meters) }
    public static func * (lhs: Distance, rhs: Double) -> Distance { Distance(meters: lhs.meters * rhs) }
}

extension Distance: CustomStringConvertible {
    public var description: String { "\(meters) m" }
}

/// A direction as degrees clockwise from true north, always in [0, 360).
public struct Bearing: Hashable, Sendable {
    public let degrees: Double

    /// Normalises any finite angle into [0, 360).
    public init(degrees: Double) {
        precondition(degrees.isFinite, "a bearing must be finite")
        var value = degrees.truncatingRemainder(dividingBy: 360)
        if value < 0 { value += 360 }
        // -1e-15 + 360 rounds to 360 in floating point; that is north.
        self.degrees = value >= 360 ? 0 : value
    }

    /// The eight-wind compass point nearest to the bearing ("N", "NE", ...).
    public var compassPoint: String {
        let points = ["N", "NE", "E", "SE", "S", "SW", "W", "NW"]
        return points[Int((degrees / 45).rounded()) % 8]
    }
}
