import ArgumentParser
import Foundation
import GeoCore
import VicinityCore
import VicinityHTTP
import VicinitySQL

struct Nearby: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the places within a radius, nearest first.")

    @OptionGroup var position: PositionOptions

    @Option(help: "Radius in metres, (0, 50000].")
    var radius: Double = SearchRadius.standard.distance.meters

    @OptionGroup var category: CategoryOptions

    @Option(help: "At most this many places, [1, 500].")
    var limit: Int = ResultLimit.standard.value

    @OptionGroup var output: OutputOptions
    @OptionGroup var database: DatabaseOptions

    func validate() throws { _ = try query() }

    private func query() throws -> NearbyQuery {
        do {
            return NearbyQuery(
                centre: try position.coordinate(), radius: try SearchRadius(meters: radius),
                categories: try category.categories(), limit: try ResultLimit(limit))
        } catch let error as VicinityCore.ValidationError {
            throw ValidationError(error.description)
        }
    }

    func run() async throws {
        let query = try query()
        let hits = try await database.withStore { try await $0.nearby(query) }
        if output.json {
            Output.printJSON(Wire.nearby(hits))
        } else if hits.isEmpty {
            print("No places within \(Output.metres(query.radius.distance)) of \(query.centre).")
        } else {
            Output.printTable(hits)
        }
    }
}

struct Closest: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the closest place and where the position is.")

    @OptionGroup var position: PositionOptions
    @OptionGroup var category: CategoryOptions
    @OptionGroup var output: OutputOptions
    @OptionGroup var database: DatabaseOptions

    func run() async throws {
        let centre = try position.coordinate()
        let categories = try category.categories()
        let (whereabouts, location) = try await database.withStore { store in
            (try await Self.whereabouts(of: centre, categories: categories, in: store), store.location)
        }
        guard let closest = whereabouts.closest else {
            Console.error("The database \(location) holds no places\(categories.isEmpty ? "" : " of that category"); import some first.")
            throw ExitCode(1)
        }
        if output.json, let json = Wire.closest(whereabouts) {
            Output.printJSON(json.jsonBytes)
        } else {
            print(whereabouts.label)
            Output.printTable([closest])
            if let onCampus = whereabouts.onCampus { print("on campus: \(onCampus ? "yes" : "no")") }
        }
    }
}

extension Closest {
    static func whereabouts<Record: RecordStore>(
        of centre: Coordinate, categories: Set<VicinityCore.Category>, in record: Record
    ) async throws -> Whereabouts {
        try await Locator(places: record, campuses: record).whereabouts(of: centre, categories: categories)
    }
}

enum Output {
    /// How many terminal columns text takes: one per character (a Thai letter with its marks is one), two for
    /// the wide characters of East Asian scripts (Unicode's East Asian Width W and F, main blocks).
    static func columns(_ text: String) -> Int {
        text.reduce(0) { total, character in
            let value = character.unicodeScalars.first?.value ?? 0
            let wide = (0x1100...0x115F).contains(value) || (0x2E80...0xA4CF).contains(value)
                || (0xAC00...0xD7A3).contains(value) || (0xF900...0xFAFF).contains(value)
                || (0xFE30...0xFE4F).contains(value) || (0xFF00...0xFF60).contains(value)
                || (0xFFE0...0xFFE6).contains(value) || (0x1F300...0x1F64F).contains(value)
                || (0x20000...0x3FFFD).contains(value)
            return total + (wide ? 2 : 1)
        }
    }

    /// JSON as the HTTP answers write it (`Wire`), on one line.
    static func printJSON(_ bytes: [UInt8]) {
        print(String(decoding: bytes, as: UTF8.self))
    }

    static func metres(_ distance: Distance) -> String {
        distance.meters < 10 ? String(format: "%.1f m", distance.meters) : "\(Int(distance.meters.rounded())) m"
    }

    static func printTable(_ hits: [PlaceHit]) {
        printTable(
            header: ["distance", "bearing", "name", "category", "id"],
            rows: hits.map { hit in
                [metres(hit.distance), String(format: "%03d° %@", Int(hit.bearing.degrees.rounded()) % 360, hit.bearing.compassPoint),
                 hit.place.name, hit.place.category.rawValue, hit.place.id.rawValue]
            },
            rightAligned: [0])
    }

    /// Rows under a header, each column as wide as its widest cell; trailing spaces trimmed.
    static func printTable(header: [String], rows: [[String]], rightAligned: Set<Int> = []) {
        let widths = header.indices.map { column in ([header] + rows).map { columns($0[column]) }.max() ?? 0 }
        for row in [header] + rows {
            print(row.indices.map { column in
                let cell = row[column]
                let padding = String(repeating: " ", count: widths[column] - columns(cell))
                return rightAligned.contains(column) ? padding + cell : cell + padding
            }.joined(separator: "  ").replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression))
        }
    }
}
