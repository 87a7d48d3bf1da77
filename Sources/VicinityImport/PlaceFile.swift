import CSV
import Foundation
import Synchronization
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
        first.reserveCapacity(entries.count)
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

    /// Reads the file, in `pieces` parallel pieces when given (for tests), else in one piece per core for a
    /// file of `parallelFrom` bytes or more.
    static func read(_ data: Data, category override: Category?, pieces count: Int? = nil) throws(ImportError) -> PlaceFile {
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
        let columns = try Columns(header: reader.headerRow ?? [], category: override)
        let pieces = CSVRecords.split(text, into: count ?? (data.count >= parallelFrom ? ProcessInfo.processInfo.activeProcessorCount : 1))
        if pieces.count > 1 {
            // Each piece is read on its own core. A file with any problem is read again as one piece, so that
            // what is reported never depends on where the file was cut.
            let results = Mutex<[Int: Piece]>([:])
            let whole = text
            DispatchQueue.concurrentPerform(iterations: pieces.count) { index in
                let text = String(whole[pieces[index].range])
                let piece = Result { try CSVReader(string: text, hasHeaderRow: index == 0) }.map { reader in
                    readPiece(reader, firstLine: index == 0 ? 2 : pieces[index].firstLine, columns: columns, category: override)
                }
                results.withLock { $0[index] = try? piece.get() }
            }
            let read = results.withLock { results in (0..<pieces.count).compactMap { results[$0] } }
            if read.count == pieces.count, read.allSatisfy({ $0.problems.isEmpty && $0.readerError == nil }) {
                let entries = read.flatMap(\.entries)
                if PlaceFileReader.duplicateProblems(entries).isEmpty { return PlaceFile(places: entries.map(\.place), warnings: []) }
            }
        }
        let whole = readPiece(reader, firstLine: 2, columns: columns, category: override)
        var problems = whole.problems
        if let error = whole.readerError {
            problems.append(ImportProblem(location: "line \(whole.nextLine)", message: "malformed CSV: \(error)"))
        }
        problems += PlaceFileReader.duplicateProblems(whole.entries)
        guard problems.isEmpty else {
            let summary = whole.projected.first.map { ProjectedCoordinates.summary(count: whole.projected.count, of: whole.rows, example: $0) }
            throw ImportError(summary: summary, problems: problems)
        }
        return PlaceFile(places: whole.entries.map(\.place), warnings: [])
    }

    /// Files from this size up are read in pieces in parallel: 1M places (54 MB) took 3.1 s to read and
    /// validate in one piece and 2.0 s in two, on 2 cores (two runs each, `vicinity-bench`).
    static let parallelFrom = 4 << 20

    /// What one piece of a file holds once read: its places, its problems, and where it ended.
    struct Piece {
        var entries: [(location: String, place: Place)] = []
        var problems: [ImportProblem] = []
        var projected: [String] = []
        var rows = 0
        var nextLine: Int
        var readerError: String?
    }

    /// Reads the records left in `reader`, the first of them on line `firstLine` of the file.
    static func readPiece(_ reader: CSVReader, firstLine: Int, columns: Columns, category override: Category?) -> Piece {
        var piece = Piece(nextLine: firstLine)
        var categoryCache: [String: Category] = [:]
        while let rawRow = reader.next() {
            let row = rawRow.map(trimmed)
            piece.rows += 1
            let location = "line \(piece.nextLine)"
            defer { piece.nextLine += 1 + row.reduce(0) { $0 + $1.filter { $0 == "\n" }.count } }
            if row.count == 1 && row[0].isEmpty { piece.rows -= 1; continue }
            guard row.count == columns.count else {
                piece.problems.append(ImportProblem(location: location, message: "has \(row.count) fields, the header has \(columns.count)"))
                continue
            }
            func value(_ index: Int?) -> String { index.map { row[$0] } ?? "" }
            var rowProblems: [String] = []
            let id = capture(&rowProblems) { () throws(ValidationError) in try PlaceID(row[columns.id]) }
            let categoryText = value(columns.category)
            let category = override ?? categoryCache[categoryText] ?? capture(&rowProblems) { () throws(ValidationError) in
                let category = try Category(categoryText)
                categoryCache[categoryText] = category
                return category
            }
            let latitudeText = row[columns.latitude], longitudeText = row[columns.longitude]
            let latitude = Double(latitudeText), longitude = Double(longitudeText)
            if latitude == nil { rowProblems.append("lat: \"\(latitudeText)\" is not a number") }
            if longitude == nil { rowProblems.append("lon: \"\(longitudeText)\" is not a number") }
            var coordinate: Coordinate?
            if let latitude, let longitude {
                if ProjectedCoordinates.looksProjected(latitude) || ProjectedCoordinates.looksProjected(longitude) {
                    piece.projected.append("(lat \(latitudeText), lon \(longitudeText))")
                }
                coordinate = capture(&rowProblems) { () throws(CoordinateError) in
                    try Coordinate(latitude: latitude, longitude: longitude)
                }
            }
            var aliases: [String] = []
            for index in columns.aliases {
                aliases += row[index].split(separator: "|").map { String($0) }
            }
            var attributes: [String: String] = [:]
            for (name, index) in columns.attributes where !row[index].isEmpty {
                attributes[name] = row[index]
            }
            let name = row[columns.name]
            if let id, let category, let coordinate {
                let place = capture(&rowProblems) { () throws(ValidationError) in
                    try Place(id: id, name: name, category: category, aliases: aliases,
                              attributes: attributes, coordinate: coordinate)
                }
                if let place, rowProblems.isEmpty { piece.entries.append((location, place)) }
            } else if name.isEmpty {
                rowProblems.append("name: must not be empty")
            }
            piece.problems += rowProblems.map { ImportProblem(location: location, message: $0) }
        }
        piece.readerError = reader.error.map { "\($0)" }
        return piece
    }

    /// Where each column of the header is, looked up once rather than by name on every row.
    struct Columns {
        var count: Int
        var id: Int, name: Int, latitude: Int, longitude: Int
        var category: Int?
        /// The `aliasColumns` present, in that order.
        var aliases: [Int]
        /// Every other column, kept as an attribute when not empty.
        var attributes: [(name: String, index: Int)]

        init(header row: [String], category override: Category?) throws(ImportError) {
            let header = row.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            var missing = required.filter { !header.contains($0) }
            if override == nil && !header.contains("category") { missing.append("category") }
            guard missing.isEmpty else {
                throw ImportError(problems: [ImportProblem(
                    location: "line 1",
                    message: "missing column(s) \(missing.joined(separator: ", ")); the header needs id,name,category,lat,lon"
                        + (missing.contains("category") ? " (or pass a category for the whole file)" : ""))])
            }
            // A repeated column name counts at its first place.
            let column = Dictionary(header.enumerated().map { ($1, $0) }) { first, _ in first }
            count = header.count
            id = column["id"] ?? 0
            name = column["name"] ?? 0
            latitude = column["lat"] ?? 0
            longitude = column["lon"] ?? 0
            category = column["category"]
            aliases = aliasColumns.compactMap { column[$0] }
            attributes = column.filter { !["id", "name", "category", "lat", "lon", "aliases"].contains($0.key) }
                .map { (name: $0.key, index: $0.value) }
        }
    }
}

/// Cutting CSV text into pieces of whole records, for reading them in parallel.
enum CSVRecords {
    struct Piece: Sendable {
        var range: Range<String.Index>
        /// The file's line number of the piece's first line.
        var firstLine: Int
    }

    /// Up to `count` pieces of about equal size, each ending after a line break that ends a record: one
    /// outside any quoted field (RFC 4180: a quote opens a field only at its start; inside, `""` is a quote).
    static func split(_ text: String, into count: Int) -> [Piece] {
        let utf8 = text.utf8
        guard count > 1 else { return [Piece(range: text.startIndex..<text.endIndex, firstLine: 1)] }
        let target = utf8.count / count
        var pieces: [Piece] = []
        var start = utf8.startIndex
        var firstLine = 1
        var line = 1
        var offset = 0
        var nextCut = target
        enum State { case fieldStart, unquoted, quoted, quoteInQuoted }
        var state = State.fieldStart
        var index = utf8.startIndex
        while index != utf8.endIndex {
            let byte = utf8[index]
            utf8.formIndex(after: &index)
            offset += 1
            switch (state, byte) {
            case (.quoted, UInt8(ascii: "\"")): state = .quoteInQuoted
            case (.quoted, _): if byte == UInt8(ascii: "\n") { line += 1 }
            case (.quoteInQuoted, UInt8(ascii: "\"")): state = .quoted
            case (.fieldStart, UInt8(ascii: "\"")): state = .quoted
            case (_, UInt8(ascii: ",")): state = .fieldStart
            case (_, UInt8(ascii: "\n")):
                line += 1
                state = .fieldStart
                if offset >= nextCut, pieces.count < count - 1 {
                    pieces.append(Piece(range: start..<index, firstLine: firstLine))
                    start = index
                    firstLine = line
                    nextCut = offset + target
                }
            case (_, _): state = .unquoted
            }
        }
        pieces.append(Piece(range: start..<text.endIndex, firstLine: firstLine))
        return pieces
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
