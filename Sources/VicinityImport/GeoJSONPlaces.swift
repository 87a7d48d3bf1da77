import Foundation
import GeoCore
import VicinityCore

/// GeoJSON place files: each Feature becomes a place. A Point is the place's position; a Polygon or
/// MultiPolygon is kept as its footprint and a point inside it is the position.
enum GeoJSONPlaces {
    /// Property names read as other names of the place (OpenStreetMap's conventions among them).
    static let aliasKeys = ["aliases", "alt_name", "short_name", "official_name", "old_name"]
    /// Properties with a meaning of their own, not kept as attributes.
    static let reservedKeys: Set<String> = ["id", "name", "category"]

    /// OpenStreetMap's main tags, in the order a feature without a `category` property takes its category from
    /// them: what the place is for (`amenity`, `tourism`, `shop`, `leisure`, `office`, `healthcare`, `craft`),
    /// what it is (`historic`, `man_made`, `railway`, `aeroway`, `natural`), then the kind of structure
    /// (`building`). OpenStreetMap exports often lack a category on some features: 3 of the 161 in a UCSB
    /// buildings export. The value is the category (`university`, `police`); `yes`, which says only that the
    /// tag applies, gives the tag's own name (`building`).
    static let categoryTags = [
        "amenity", "tourism", "shop", "leisure", "office", "healthcare", "craft",
        "historic", "man_made", "railway", "aeroway", "natural", "building",
    ]

    /// The category OpenStreetMap tags give a feature, nil when it has none of them.
    static func categoryFromTags(_ properties: [String: JSONValue]) -> String? {
        for tag in categoryTags {
            guard let value = properties[tag]?.text?.trimmingCharacters(in: .whitespaces), !value.isEmpty,
                value != "no"
            else { continue }
            return value == "yes" ? tag : value
        }
        return nil
    }

    static func read(_ data: Data, category override: Category?) throws(ImportError) -> PlaceFile {
        let document = try decodeDocument(data)
        var entries: [(location: String, place: Place)] = []
        var problems: [ImportProblem] = []
        var projected: [String] = []
        var unnamed = 0
        var categorisedByTags = 0
        for (index, result) in document.features.enumerated() {
            let location = "feature \(index)"
            let feature: GeoJSONFeature
            switch result {
            case .failure(let error):
                if case .longitudeOutOfRange(let value)? = error.coordinateError, ProjectedCoordinates.looksProjected(value) {
                    projected.append(String(value))
                } else if case .latitudeOutOfRange(let value)? = error.coordinateError, ProjectedCoordinates.looksProjected(value) {
                    projected.append(String(value))
                }
                problems.append(ImportProblem(location: location, message: error.description))
                continue
            case .success(let decoded):
                feature = decoded
            }
            var rowProblems: [String] = []
            let rawID = feature.id ?? feature.properties["id"]?.text ?? feature.properties["@id"]?.text
            let id = rawID.flatMap { raw in capture(&rowProblems) { () throws(ValidationError) in try PlaceID(raw) } }
            if rawID == nil { rowProblems.append("id: missing (give the feature an \"id\" or an \"id\" property)") }
            let category = override ?? {
                var text = feature.properties["category"]?.text
                if text == nil, let tagged = categoryFromTags(feature.properties) {
                    text = tagged
                    categorisedByTags += 1
                }
                guard let text else {
                    rowProblems.append(
                        "category: missing (add a \"category\" property, an OpenStreetMap tag such as amenity or building, or pass a category for the whole file)")
                    return nil
                }
                return capture(&rowProblems) { () throws(ValidationError) in try Category(text) }
            }()
            var name = feature.properties["name"]?.text ?? ""
            if name.trimmingCharacters(in: .whitespaces).isEmpty, let rawID {
                name = rawID
                unnamed += 1
            }
            let shape = shape(of: feature.geometry, problems: &rowProblems)
            var aliases = aliasKeys.flatMap { key -> [String] in
                switch feature.properties[key] {
                case .array(let values)?: values.compactMap(\.text)
                case let value?: value.text.map { $0.split(separator: key == "aliases" ? "|" : ";").map(String.init) } ?? []
                case nil: []
                }
            }
            aliases += feature.properties.keys.sorted().filter { $0.hasPrefix("name:") }.compactMap { feature.properties[$0]?.text }
            var attributes: [String: String] = [:]
            for (key, value) in feature.properties where !reservedKeys.contains(key) {
                if let text = value.text { attributes[key] = text }
            }
            if let id, let category, let shape, rowProblems.isEmpty {
                if let place = capture(&rowProblems, { () throws(ValidationError) in
                    try Place(id: id, name: name, category: category, aliases: aliases, attributes: attributes,
                              coordinate: shape.point, footprint: shape.footprint)
                }) {
                    entries.append((location, place))
                }
            }
            problems += rowProblems.map { ImportProblem(location: location, message: $0) }
        }
        problems += PlaceFileReader.duplicateProblems(entries)
        guard problems.isEmpty else {
            let summary = projected.first.map {
                ProjectedCoordinates.summary(count: projected.count, of: document.features.count, example: $0)
            }
            throw ImportError(summary: summary, problems: problems)
        }
        var warnings = unnamed == 0 ? [] : ["\(unnamed) feature(s) have no name; their id is used as the name"]
        if categorisedByTags > 0 {
            warnings.append("\(categorisedByTags) feature(s) have no category; it is taken from their OpenStreetMap tags (\(categoryTags.joined(separator: ", ")), first found)")
        }
        return PlaceFile(places: entries.map(\.place), warnings: warnings)
    }

    static func decodeDocument(_ data: Data) throws(ImportError) -> GeoJSONDocument {
        do {
            return try JSONDecoder().decode(GeoJSONDocument.self, from: data)
        } catch {
            throw ImportError(problems: [ImportProblem(location: "file", message: GeoJSONError(error).description)])
        }
    }

    private static func shape(
        of geometry: GeoJSONGeometry?, problems: inout [String]
    ) -> (point: Coordinate, footprint: MultiPolygon?)? {
        switch geometry {
        case .point(let point)?: return (point, nil)
        case .polygon(let polygon)?:
            let footprint = MultiPolygon(polygon)
            return (footprint.representativePoint, footprint)
        case .multiPolygon(let footprint)?: return (footprint.representativePoint, footprint)
        case let other?:
            problems.append("geometry: a place needs a Point, Polygon or MultiPolygon, not a \(other.typeName)")
            return nil
        case nil:
            problems.append("geometry: missing; a place needs a Point, Polygon or MultiPolygon")
            return nil
        }
    }
}

/// Campus boundary files: GeoJSON Features with a Polygon or MultiPolygon each.
public enum CampusFileReader {
    /// Reads every campus in the file. `id` and `name` override the feature's own when the file holds one.
    public static func read(path: String, id: String? = nil, name: String? = nil) throws(ImportError) -> [Campus] {
        try read(data: PlaceFileReader.contents(of: path), id: id, name: name)
    }

    public static func read(data: Data, id: String? = nil, name: String? = nil) throws(ImportError) -> [Campus] {
        let document = try GeoJSONPlaces.decodeDocument(data)
        if (id != nil || name != nil) && document.features.count != 1 {
            throw ImportError(problems: [ImportProblem(
                location: "file", message: "an id or name can be given only for a file with one feature; this one has \(document.features.count)")])
        }
        var campuses: [Campus] = []
        var problems: [ImportProblem] = []
        for (index, result) in document.features.enumerated() {
            let location = "feature \(index)"
            switch result {
            case .failure(let error):
                problems.append(ImportProblem(location: location, message: error.description))
            case .success(let feature):
                var rowProblems: [String] = []
                let rawID = id ?? feature.id ?? feature.properties["id"]?.text
                let boundary: MultiPolygon?
                switch feature.geometry {
                case .polygon(let polygon)?: boundary = MultiPolygon(polygon)
                case .multiPolygon(let multi)?: boundary = multi
                default:
                    boundary = nil
                    rowProblems.append("geometry: a campus boundary must be a Polygon or MultiPolygon")
                }
                if rawID == nil { rowProblems.append("id: missing") }
                let campusName = name ?? feature.properties["name"]?.text ?? rawID ?? ""
                if let rawID, let boundary, rowProblems.isEmpty,
                    let campus = capture(&rowProblems, { () throws(ValidationError) in
                        try Campus(id: PlaceID(rawID), name: campusName, boundary: boundary)
                    })
                {
                    campuses.append(campus)
                }
                problems += rowProblems.map { ImportProblem(location: location, message: $0) }
            }
        }
        if campuses.isEmpty && problems.isEmpty {
            problems.append(ImportProblem(location: "file", message: "holds no features"))
        }
        guard problems.isEmpty else { throw ImportError(problems: problems) }
        return campuses
    }
}
