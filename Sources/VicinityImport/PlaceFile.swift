import CSV
import Foundation
import GeoCore
import VicinityCore

/// What an import file holds once it has been read and every row validated.
public struct PlaceFile: Sendable {
    public var places: [Place]
    /// Things worth telling the person importing that did not stop the import.
    public var warnings: [String]
}

/// Reads places from CSV (`id,name,category,lat,lon`, more columns kept) or GeoJSON (Points, Polygons and
/// MultiPolygons). Reading is all or nothing: any bad row makes it throw an `ImportError` listing them all.
public enum PlaceFileReader {
    public enum Format: String, Sendable, CaseIterable {
        case csv, geojson

        /// By file extension: `.csv`, or `.geojson` / `.json`, each also with `.gz` after it.
        public init?(path: String) {
            let name = Self.isCompressed(path) ? (path as NSString).deletingPathExtension : path
            switch (name as NSString).pathExtension.lowercased() {
            case "csv": self = .csv
            case "geojson", "json": self = .geojson
            default: return nil
            }
        }

        /// Whether the name says gzip: `places.csv.gz`.
        public static func isCompressed(_ path: String) -> Bool {
            (path as NSString).pathExtension.lowercased() == "gz"
        }
    }

    /// Reads a file. `category`, when given, is the category of every place in the file.
    public static func read(path: String, category: Category? = nil) throws(ImportError) -> PlaceFile {
        guard let format = Format(path: path) else {
            throw ImportError(problems: [ImportProblem(
                location: path, message: "unknown file type; use a .csv, .geojson or .json file, or one of them .gz")])
        }
        var data = try contents(of: path)
        if Format.isCompressed(path) {
            do { data = try Gzip.decompress(data) } catch {
                throw ImportError(problems: [ImportProblem(location: path, message: "is not a readable gzip file: \(error)")])
            }
        }
        return try read(data: data, format: format, category: category)
    }

    public static func read(data: Data, format: Format, category: Category? = nil) throws(ImportError) -> PlaceFile {
        switch format {
        case .csv: try CSVPlaces.read(data, category: category)
        case .geojson: try GeoJSONPlaces.read(data, category: category)
        }
    }

    /// The bytes of a file, or an `ImportError` that says why they cannot be read.
    static func contents(of path: String) throws(ImportError) -> Data {
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ImportError(problems: [ImportProblem(location: path, message: "cannot read the file: \(error.localizedDescription)")])
        }
    }

    /// Ids must be unique within a file; every repeat is reported with the location of the first.
    static func duplicateProblems(_ entries: [(location: String, place: Place)]) -> [ImportProblem] {
        var first: [PlaceID: String] = [:]
        var problems: [ImportProblem] = []
        for entry in entries {
            if let earlier = first[entry.place.id] {
                problems.append(ImportProblem(location: entry.location, message: "id \"\(entry.place.id)\" repeats \(earlier)"))
            } else {
                first[entry.place.id] = entry.location
            }
        }
        return problems
    }
}

/// CSV place files.
enum CSVPlaces {
    static let required = ["id", "name", "lat", "lon"]
    /// Columns read into `aliases`: `aliases` holds `|`-separated names; `code` is a building code people
    /// search by (it stays an attribute too).
    static let aliasColumns = ["aliases", "code"]

    static func read(_ data: Data, category override: Category?) throws(ImportError) -> PlaceFile {
        guard var text = String(data: data, encoding: .utf8) else {
            throw ImportError(problems: [ImportProblem(location: "file", message: "is not UTF-8 text")])
        }
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        let reader: CSVReader
        do {
            reader = try CSVReader(string: text, hasHeaderRow: true)
        } catch {
            throw ImportError(problems: [ImportProblem(location: "line 1", message: "cannot read the header row")])
        }
        let header = (reader.headerRow ?? []).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        var missing = required.filter { !header.contains($0) }
        if override == nil && !header.contains("category") { missing.append("category") }
        guard missing.isEmpty else {
            throw ImportError(problems: [ImportProblem(
                location: "line 1",
                message: "missing column(s) \(missing.joined(separator: ", ")); the header needs id,name,category,lat,lon"
                    + (missing.contains("category") ? " (or pass a category for the whole file)" : ""))])
        }
        let column = Dictionary(header.enumerated().map { ($1, $0) }) { first, _ in first }

        var entries: [(location: String, place: Place)] = []
        var problems: [ImportProblem] = []
        var projected: [String] = []
        var line = 2
        var rows = 0
        var categoryCache: [String: Category] = [:]
        while let rawRow = reader.next() {
            let row = rawRow.map(trimmed)
            rows += 1
            let location = "line \(line)"
            defer { line += 1 + row.reduce(0) { $0 + $1.filter { $0 == "\n" }.count } }
            if row.count == 1 && row[0].isEmpty { rows -= 1; continue }
            guard row.count == header.count else {
                problems.append(ImportProblem(location: location, message: "has \(row.count) fields, the header has \(header.count)"))
                continue
            }
            func value(_ name: String) -> String { column[name].map { row[$0] } ?? "" }
            var rowProblems: [String] = []
            let id = capture(&rowProblems) { () throws(ValidationError) in try PlaceID(value("id")) }
            let categoryText = value("category")
            let category = override ?? categoryCache[categoryText] ?? capture(&rowProblems) { () throws(ValidationError) in
                let category = try Category(categoryText)
                categoryCache[categoryText] = category
                return category
            }
            let latitude = Double(value("lat")), longitude = Double(value("lon"))
            if latitude == nil { rowProblems.append("lat: \"\(value("lat"))\" is not a number") }
            if longitude == nil { rowProblems.append("lon: \"\(value("lon"))\" is not a number") }
            var coordinate: Coordinate?
            if let latitude, let longitude {
                if ProjectedCoordinates.looksProjected(latitude) || ProjectedCoordinates.looksProjected(longitude) {
                    projected.append("(lat \(value("lat")), lon \(value("lon")))")
                }
                coordinate = capture(&rowProblems) { () throws(CoordinateError) in
                    try Coordinate(latitude: latitude, longitude: longitude)
                }
            }
            var aliases: [String] = []
            for name in aliasColumns where column[name] != nil {
                aliases += value(name).split(separator: "|").map { String($0) }
            }
            var attributes: [String: String] = [:]
            for (name, index) in column where !["id", "name", "category", "lat", "lon", "aliases"].contains(name) {
                if !row[index].isEmpty { attributes[name] = row[index] }
            }
            if let id, let category, let coordinate {
                let place = capture(&rowProblems) { () throws(ValidationError) in
                    try Place(id: id, name: value("name"), category: category, aliases: aliases,
                              attributes: attributes, coordinate: coordinate)
                }
                if let place, rowProblems.isEmpty { entries.append((location, place)) }
            } else if value("name").isEmpty {
                rowProblems.append("name: must not be empty")
            }
            problems += rowProblems.map { ImportProblem(location: location, message: $0) }
        }
        if let error = reader.error {
            problems.append(ImportProblem(location: "line \(line)", message: "malformed CSV: \(error)"))
        }
        problems += PlaceFileReader.duplicateProblems(entries)
        guard problems.isEmpty else {
            let summary = projected.first.map { ProjectedCoordinates.summary(count: projected.count, of: rows, example: $0) }
            throw ImportError(summary: summary, problems: problems)
        }
        return PlaceFile(places: entries.map(\.place), warnings: [])
    }
}

/// Trims spaces and tabs around a field; most fields have none, so they are returned without copying.
func trimmed(_ field: String) -> String {
    guard let first = field.unicodeScalars.first, let last = field.unicodeScalars.last,
        first == " " || first == "\t" || last == " " || last == "\t"
    else { return field }
    return field.trimmingCharacters(in: .whitespaces)
}

/// Runs a validating initialiser, turning its error into a row problem.
func capture<T, E: Error & CustomStringConvertible>(_ problems: inout [String], _ body: () throws(E) -> T) -> T? {
    do { return try body() } catch { problems.append(error.description); return nil }
}
