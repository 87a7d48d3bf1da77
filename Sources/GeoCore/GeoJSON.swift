/// GeoJSON (RFC 7946) geometry. Positions are `[longitude, latitude]` on the wire and `Coordinate` here;
/// this file is the one place that swaps the order.
///
/// Decoding validates as it goes and throws `DecodingError.dataCorrupted` whose coding path says where the
/// problem is; `GeoJSONError(_:)` turns that into a one-line message such as
/// `features[3].geometry.coordinates[0]: ring 0 is not closed: its first and last positions differ`.
public enum GeoJSONGeometry: Hashable, Sendable {
    case point(Coordinate)
    case multiPoint([Coordinate])
    case lineString([Coordinate])
    case multiLineString([[Coordinate]])
    case polygon(Polygon)
    case multiPolygon(MultiPolygon)
    case geometryCollection([GeoJSONGeometry])

    public var typeName: String {
        switch self {
        case .point: "Point"
        case .multiPoint: "MultiPoint"
        case .lineString: "LineString"
        case .multiLineString: "MultiLineString"
        case .polygon: "Polygon"
        case .multiPolygon: "MultiPolygon"
        case .geometryCollection: "GeometryCollection"
        }
    }
}

extension GeoJSONGeometry: Codable {
    private enum CodingKeys: String, CodingKey { case type, coordinates, geometries }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let type = try container.decode(String.self, forKey: .type)
        switch type {
        case "Point":
            self = .point(try container.decode(Position.self, forKey: .coordinates).coordinate)
        case "MultiPoint":
            self = .multiPoint(try container.decode([Position].self, forKey: .coordinates).map(\.coordinate))
        case "LineString":
            let line = try container.decode([Position].self, forKey: .coordinates).map(\.coordinate)
            guard line.count >= 2 else {
                throw Self.corrupted(container, .coordinates, "a LineString needs at least 2 positions, found \(line.count)")
            }
            self = .lineString(line)
        case "MultiLineString":
            self = .multiLineString(try container.decode([[Position]].self, forKey: .coordinates).map { $0.map(\.coordinate) })
        case "Polygon":
            let rings = try container.decode([[Position]].self, forKey: .coordinates)
            self = .polygon(try Self.polygon(rings, container: container))
        case "MultiPolygon":
            let polygons = try container.decode([[[Position]]].self, forKey: .coordinates)
            do {
                self = .multiPolygon(try MultiPolygon(polygons.map { try Self.polygon($0, container: container) }))
            } catch let error as PolygonError {
                throw Self.corrupted(container, .coordinates, error.description)
            }
        case "GeometryCollection":
            self = .geometryCollection(try container.decode([GeoJSONGeometry].self, forKey: .geometries))
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .type, in: container, debugDescription: "unknown geometry type \"\(type)\"")
        }
    }

    private static func polygon(_ rings: [[Position]], container: KeyedDecodingContainer<CodingKeys>) throws -> Polygon {
        guard let exterior = rings.first else {
            throw corrupted(container, .coordinates, "a Polygon needs at least one ring")
        }
        do {
            return try Polygon(exterior: exterior.map(\.coordinate), holes: rings.dropFirst().map { $0.map(\.coordinate) })
        } catch {
            throw corrupted(container, .coordinates, error.description)
        }
    }

    private static func corrupted(
        _ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys, _ message: String
    ) -> DecodingError {
        DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: message)
    }

    public func encode(to encoder: any Encoder) throws { try jsonValue.encode(to: encoder) }

    /// The geometry as JSON, for writers that skip `Encoder` (`JSONValue.jsonBytes`).
    public var jsonValue: JSONValue {
        let coordinates: JSONValue
        switch self {
        case .point(let point): coordinates = Position(point).jsonValue
        case .multiPoint(let points): coordinates = Position.array(points)
        case .lineString(let line): coordinates = Position.array(line)
        case .multiLineString(let lines): coordinates = .array(lines.map(Position.array))
        case .polygon(let polygon): coordinates = Self.positions(polygon)
        case .multiPolygon(let multi): coordinates = .array(multi.polygons.map(Self.positions))
        case .geometryCollection(let geometries):
            return .object(["type": .string(typeName), "geometries": .array(geometries.map(\.jsonValue))])
        }
        return .object(["type": .string(typeName), "coordinates": coordinates])
    }

    private static func positions(_ polygon: Polygon) -> JSONValue {
        .array(polygon.rings.map(Position.array))
    }
}

/// A GeoJSON position: `[longitude, latitude]` with an optional altitude that Vicinity ignores. The one place
/// that turns Vicinity's latitude-first coordinates into GeoJSON's order and back.
struct Position: Decodable {
    let coordinate: Coordinate

    init(_ coordinate: Coordinate) { self.coordinate = coordinate }

    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        var numbers: [Double] = []
        while !container.isAtEnd { numbers.append(try container.decode(Double.self)) }
        guard numbers.count == 2 || numbers.count == 3 else {
            throw DecodingError.dataCorrupted(.init(
                codingPath: decoder.codingPath,
                debugDescription: "a position has 2 or 3 numbers ([longitude, latitude, altitude?]), found \(numbers.count)"))
        }
        do {
            coordinate = try Coordinate(latitude: numbers[1], longitude: numbers[0])
        } catch {
            throw DecodingError.dataCorrupted(.init(
                codingPath: decoder.codingPath,
                debugDescription: "\(error) (positions are [longitude, latitude] in WGS84 degrees)",
                underlyingError: error))
        }
    }

    var jsonValue: JSONValue { .array([.number(coordinate.longitude), .number(coordinate.latitude)]) }

    static func array(_ coordinates: [Coordinate]) -> JSONValue { .array(coordinates.map { Position($0).jsonValue }) }
}

/// A GeoJSON Feature. `id` is kept as text whether the file wrote a string or a number.
public struct GeoJSONFeature: Hashable, Sendable, Codable {
    public var id: String?
    public var geometry: GeoJSONGeometry?
    public var properties: [String: JSONValue]

    public init(id: String?, geometry: GeoJSONGeometry?, properties: [String: JSONValue]) {
        self.id = id
        self.geometry = geometry
        self.properties = properties
    }

    private enum CodingKeys: String, CodingKey { case type, id, geometry, properties }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let type = try container.decode(String.self, forKey: .type)
        guard type == "Feature" else {
            throw DecodingError.dataCorruptedError(
                forKey: .type, in: container, debugDescription: "expected \"Feature\", found \"\(type)\"")
        }
        switch try container.decodeIfPresent(JSONValue.self, forKey: .id) {
        case nil, .null: id = nil
        case .string(let text): id = text
        case .number(let number): id = JSONValue.number(number).text
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .id, in: container, debugDescription: "a feature id must be a string or a number")
        }
        geometry = try container.decodeIfPresent(GeoJSONGeometry.self, forKey: .geometry)
        properties = try container.decodeIfPresent([String: JSONValue].self, forKey: .properties) ?? [:]
    }

    public func encode(to encoder: any Encoder) throws { try jsonValue.encode(to: encoder) }

    /// The feature as JSON: `geometry` is null when absent, as RFC 7946 requires; `id` only when there is one.
    public var jsonValue: JSONValue {
        var members: [String: JSONValue] = [
            "type": .string("Feature"), "geometry": geometry?.jsonValue ?? .null, "properties": .object(properties),
        ]
        if let id { members["id"] = .string(id) }
        return .object(members)
    }
}

/// A GeoJSON FeatureCollection.
public struct GeoJSONFeatureCollection: Hashable, Sendable, Codable {
    public var features: [GeoJSONFeature]

    public init(features: [GeoJSONFeature]) { self.features = features }

    private enum CodingKeys: String, CodingKey { case type, features }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let type = try container.decode(String.self, forKey: .type)
        guard type == "FeatureCollection" else {
            throw DecodingError.dataCorruptedError(
                forKey: .type, in: container, debugDescription: "expected \"FeatureCollection\", found \"\(type)\"")
        }
        try GeoJSONCRS.check(decoder)
        features = try container.decode([GeoJSONFeature].self, forKey: .features)
    }

    public func encode(to encoder: any Encoder) throws { try jsonValue.encode(to: encoder) }

    public var jsonValue: JSONValue {
        .object(["type": .string("FeatureCollection"), "features": .array(features.map(\.jsonValue))])
    }
}

/// A GeoJSON document read feature by feature, so that one bad feature does not hide the others: each entry
/// is the feature or the reason it was refused. A top-level problem (not GeoJSON, a foreign CRS) still throws.
public struct GeoJSONDocument: Sendable, Decodable {
    public var features: [Result<GeoJSONFeature, GeoJSONError>]

    private enum CodingKeys: String, CodingKey { case type, features, geometry }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let type = try container.decode(String.self, forKey: .type)
        try GeoJSONCRS.check(decoder)
        switch type {
        case "FeatureCollection":
            var list = try container.nestedUnkeyedContainer(forKey: .features)
            var results: [Result<GeoJSONFeature, GeoJSONError>] = []
            while !list.isAtEnd {
                let index = list.currentIndex
                do {
                    results.append(.success(try list.decode(GeoJSONFeature.self)))
                } catch let error as DecodingError {
                    results.append(.failure(GeoJSONError(error)))
                    // A failed decode leaves the cursor on the element; step over it to reach the next one.
                    if list.currentIndex == index { _ = try list.decode(JSONValue.self) }
                }
            }
            features = results
        case "Feature":
            features = [Result { try GeoJSONFeature(from: decoder) }.mapError { GeoJSONError($0) }]
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .type, in: container,
                debugDescription: "expected a FeatureCollection or a Feature, found \"\(type)\"")
        }
    }
}

/// The only CRS RFC 7946 allows is WGS84 longitude/latitude. Files written to the 2008 specification may say
/// so with a `crs` member; any other CRS is refused rather than read as degrees.
enum GeoJSONCRS {
    private enum Keys: String, CodingKey { case crs }
    private struct Member: Decodable {
        struct Properties: Decodable { let name: String? }
        let properties: Properties?
    }

    static let accepted: Set<String> = [
        "urn:ogc:def:crs:OGC:1.3:CRS84", "urn:ogc:def:crs:EPSG::4326", "EPSG:4326", "urn:ogc:def:crs:OGC::CRS84",
    ]

    static func check(_ decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        guard let member = try? container.decodeIfPresent(Member.self, forKey: .crs),
            let name = member.properties?.name
        else { return }
        guard accepted.contains(name) else {
            throw DecodingError.dataCorruptedError(
                forKey: .crs, in: container,
                debugDescription: "the file declares the CRS \(name); only WGS84 longitude/latitude (RFC 7946) is read. Reproject it to EPSG:4326 first")
        }
    }
}

/// A GeoJSON decoding problem as one readable line: where, then what.
public struct GeoJSONError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Dotted path into the document, such as `features[3].geometry.coordinates[0]`; empty for the root.
    public let path: String
    public let message: String
    /// The feature the problem is in, when it is inside the `features` array.
    public let featureIndex: Int?
    /// The coordinate rule a position broke, when that is the problem.
    public let coordinateError: CoordinateError?

    public init(path: String, message: String, featureIndex: Int? = nil, coordinateError: CoordinateError? = nil) {
        self.path = path
        self.message = message
        self.featureIndex = featureIndex
        self.coordinateError = coordinateError
    }

    public init(_ error: any Error) {
        guard let error = error as? DecodingError else {
            self.init(path: "", message: "not valid JSON: \(error)")
            return
        }
        var coordinateError: CoordinateError?
        let (codingPath, message): ([any CodingKey], String) =
            switch error {
            case .dataCorrupted(let context):
                {
                    coordinateError = context.underlyingError as? CoordinateError
                    return (context.codingPath, context.debugDescription)
                }()
            case .keyNotFound(let key, let context):
                (context.codingPath + [key], "required member \"\(key.stringValue)\" is missing")
            case .typeMismatch(let type, let context):
                (context.codingPath, "expected \(Self.jsonName(of: type))")
            case .valueNotFound(let type, let context):
                (context.codingPath, "expected \(Self.jsonName(of: type)), found null")
            @unknown default:
                ([], "\(error)")
            }
        var path = ""
        var featureIndex: Int?
        var previous: String?
        for key in codingPath {
            if let index = key.intValue {
                path += "[\(index)]"
                if previous == "features", featureIndex == nil { featureIndex = index }
            } else {
                path += path.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
            previous = key.stringValue
        }
        let readable = message.hasPrefix("The given data was not valid JSON") ? "not valid JSON" : message
        self.init(path: path, message: readable, featureIndex: featureIndex, coordinateError: coordinateError)
    }

    private static func jsonName(of type: Any.Type) -> String {
        switch type {
        case is Double.Type, is Int.Type: "a number"
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        default: type == [String: JSONValue].self ? "an object" : "an array or object of the right shape"
        }
    }

    public var description: String { path.isEmpty ? message : "\(path): \(message)" }
}
