import GeoCore

/// One thing wrong with one row or feature of an import file.
public struct ImportProblem: Hashable, Sendable, CustomStringConvertible {
    /// Where: `line 12` of a CSV file (the header is line 1) or `feature 3` (0-based, as in `features[3]`).
    public var location: String
    public var message: String

    public init(location: String, message: String) {
        self.location = location
        self.message = message
    }

    public var description: String { "\(location): \(message)" }
}

/// An import file that cannot be loaded. Nothing was written; every problem found is listed.
public struct ImportError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A sentence about the file as a whole, when the problems have one cause (projected coordinates, say).
    public var summary: String?
    public var problems: [ImportProblem]

    public init(summary: String? = nil, problems: [ImportProblem]) {
        self.summary = summary
        self.problems = problems
    }

    public var description: String {
        ([summary].compactMap { $0 } + problems.map(\.description)).joined(separator: "\n")
    }
}

/// Recognises coordinates that are plainly not degrees: projected metres (UTM, Web Mercator) are in the
/// thousands to millions, far outside ±180.
enum ProjectedCoordinates {
    /// No WGS84 degree is above 180 in magnitude, but mistyped degrees (181.2, 95.0) are in the hundreds;
    /// projected eastings and northings in metres are in the tens of thousands and up.
    static let threshold = 1000.0

    static func looksProjected(_ value: Double) -> Bool { value.isFinite && abs(value) > threshold }

    static func summary(count: Int, of total: Int, example: String) -> String {
        "refused: \(count) of \(total) rows have coordinates like \(example), which look like projected metres "
            + "(UTM or similar), not WGS84 degrees. Vicinity reads longitude/latitude in degrees (RFC 7946); "
            + "reproject the file to EPSG:4326 first, e.g. `ogr2ogr -t_srs EPSG:4326 out.geojson in.geojson`."
    }
}
