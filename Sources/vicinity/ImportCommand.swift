import ArgumentParser
import Foundation
import VicinityCore
import VicinityImport
import VicinitySQL

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Load places or campus boundaries from a file.",
        subcommands: [Places.self, CampusBoundary.self]
    )

    /// Exit status for a file with bad rows: EX_DATAERR from sysexits(3).
    static let dataError = ExitCode(65)
    /// Exit status for a URL that could not be downloaded: EX_NOINPUT from sysexits(3).
    static let noInput = ExitCode(66)

    struct Places: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "places",
            abstract: "Import places from CSV (id,name,category,lat,lon, more columns kept) or GeoJSON.",
            discussion: """
                The import is all or nothing: any bad row is reported with its line (CSV) or feature index \
                (GeoJSON) and nothing changes. Places are matched by id, so re-importing a file changes nothing. \
                FILE may end in .gz, and may be an http(s):// URL: the file is downloaded first (with progress on \
                a terminal); a failed download changes nothing and exits with status 66.
                """
        )

        @Argument(help: "A .csv, .geojson or .json file (or .csv.gz, .geojson.gz), or an http(s):// URL of one.")
        var file: String

        @Option(help: "Category of every place in the file (overrides the file's own).")
        var category: String?

        @Flag(help: "Check the file and report what would change, without writing.")
        var dryRun = false

        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let override = try category.map { text in
                do { return try VicinityCore.Category(text) } catch { throw ValidationError("\(error)") }
            }
            let started = ContinuousClock.now
            var path = file
            var downloads: URL?
            defer { if let downloads { try? FileManager.default.removeItem(at: downloads) } }
            if Download.isURL(file) {
                let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vicinity-download-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                downloads = folder
                do {
                    path = try await Download.fetch(file, into: folder, progress: Console.progress("downloading"))
                } catch {
                    Console.error("\(file): not imported, nothing changed: cannot download it: \(error)")
                    throw Import.noInput
                }
            }
            let parsed: PlaceFile
            do {
                parsed = try PlaceFileReader.read(path: path, category: override)
            } catch {
                Console.error("\(file): not imported, nothing changed.")
                if let summary = error.summary { Console.error(summary) }
                for problem in error.problems { Console.error("\(file): \(problem)") }
                Console.error("\(error.problems.count) problem(s).")
                throw Import.dataError
            }
            for warning in parsed.warnings { Console.error("\(file): note: \(warning)") }
            let (summary, location) = try await database.withStore { store in
                let summary = dryRun
                    ? try await store.plannedUpsert(parsed.places)
                    : try await store.upsert(parsed.places, progress: Console.progress("importing"))
                return (summary, store.location)
            }
            let seconds = (ContinuousClock.now - started).formatted(.units(allowed: [.seconds], fractionalPart: .show(length: 2)))
            print("""
                \(dryRun ? "would import" : "imported") \(parsed.places.count) places from \(file) into \(location): \
                \(summary.inserted) new, \(summary.updated) updated, \(summary.unchanged) unchanged (\(seconds))
                """)
        }
    }

    struct CampusBoundary: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "campus",
            abstract: "Import campus boundaries from GeoJSON (Polygon or MultiPolygon features)."
        )

        @Argument(help: "A .geojson or .json file.")
        var file: String

        @Option(help: "Campus id, for a file with a single feature without one.")
        var id: String?

        @Option(help: "Campus name, for a file with a single feature.")
        var name: String?

        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let campuses: [Campus]
            do {
                campuses = try CampusFileReader.read(path: file, id: id, name: name)
            } catch {
                Console.error("\(file): not imported, nothing changed.")
                for problem in error.problems { Console.error("\(file): \(problem)") }
                throw Import.dataError
            }
            let (summary, location) = try await database.withStore { store in (try await store.upsert(campuses), store.location) }
            print("""
                imported \(campuses.count) campus boundaries from \(file) into \(location): \
                \(summary.inserted) new, \(summary.updated) updated, \(summary.unchanged) unchanged
                """)
        }
    }
}
