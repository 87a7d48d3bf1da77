import ArgumentParser
import Foundation
import GeoCore
import Logging
import VicinityCore
import VicinityRecord
import VicinitySpatiaLite
import VicinitySQL

/// Where the record lives: `--db`, else `$VICINITY_DB`, else `Data/vicinity.sqlite` under the current folder.
/// A `postgres://` URL means a PostgreSQL server with PostGIS; anything else is a SpatiaLite file.
struct DatabaseOptions: ParsableArguments {
    static let defaultPath = "Data/vicinity.sqlite"

    /// The option of every command that opens the record; `serve` lists it with its own (`ServeOptionTable`).
    static let record = EnvironmentOption<RecordLocation>(
        "db", variable: "VICINITY_DB", valueName: "path-or-url",
        abstract: "SpatiaLite database file (created when missing), or postgres://user@host:port/database for PostgreSQL with PostGIS.",
        standard: .file(path: defaultPath), shown: defaultPath,
        note: """
            A server's password comes from PGPASSWORD or the password file (PGPASSFILE, else ~/.pgpass); it is \
            never shown. URL options: sslmode=disable|prefer|require|verify-full, schema=NAME, connect_timeout=SECONDS \
            (5), statement_timeout=5s (serve's default; none for other commands), keepalives_idle=SECONDS (30) or \
            keepalives=0, prepare_threshold=RUNS (5) or none.
            """
    ) { text throws(OptionRefusal) in
        do throws(RecordLocation.Problem) { return try RecordLocation(text) } catch { throw .problem(error.description) }
    }

    @Option(Self.record) var given: String?

    /// The record named. A server's URL may hold a password, so this is never shown; stores show `location`.
    func location() throws -> RecordLocation {
        try Self.record.resolve(given: given, environment: ProcessInfo.processInfo.environment)
    }

    /// Whether the record is a server database, which the SQLite-only options do not apply to.
    var isServer: Bool {
        if case .server = try? location() { true } else { false }
    }

    func validate() throws { _ = try location() }

    /// Opens the record, runs `body` with it, then closes it (`RecordLocation.withRecord`); `serving` for
    /// `serve`, whose statements are held to a timeout (`RecordLocation.serving`).
    func withStore<Result>(
        logger: Logger = Logger(label: "vicinity"), settings: StorageSettings = .standard, serving: Bool = false,
        _ body: (any RecordStore) async throws -> Result
    ) async throws -> Result {
        let location = try location()
        return try await (serving ? location.serving() : location).withRecord(logger: logger, settings: settings, body)
    }

    /// The record `text` names; `option` says where the text came from, for messages (`copy --from`, `--to`).
    static func location(_ text: String, option: String) throws -> RecordLocation {
        do { return try RecordLocation(text) } catch { throw ValidationError("\(option): \(error)") }
    }
}

/// `--lat` and `--lon`, validated into a `Coordinate`.
struct PositionOptions: ParsableArguments {
    // Unconditional parsing lets negative values (-118.11) through instead of reading them as options.
    @Option(parsing: .unconditional, help: "Latitude in decimal degrees, [-90, 90].")
    var lat: Double

    @Option(parsing: .unconditional, help: "Longitude in decimal degrees, [-180, 180].")
    var lon: Double

    func validate() throws { _ = try coordinate() }

    func coordinate() throws -> Coordinate {
        do { return try Coordinate(latitude: lat, longitude: lon) } catch {
            throw ValidationError("\(error)")
        }
    }
}

/// `--category`, repeatable or comma-separated.
struct CategoryOptions: ParsableArguments {
    @Option(name: .customLong("category"), help: "Only places of this category (repeat or separate with commas).")
    var raw: [String] = []

    func categories() throws -> Set<VicinityCore.Category> {
        let list = VicinityCore.Category.list(raw, field: "category")
        if let problem = list.errors.first { throw ValidationError(problem.description) }
        return list.categories
    }
}

struct OutputOptions: ParsableArguments {
    @Flag(help: "Print JSON instead of a table.")
    var json = false
}

/// Writes to standard error, for progress and problems, so that standard output stays data.
enum Console {
    static func error(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    static var isTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// A progress reporter that redraws one line, or nil when standard error is not a terminal.
    static func progress(_ label: String) -> (@Sendable (Int, Int) -> Void)? {
        guard isTerminal else { return nil }
        return { done, total in
            let percent = total == 0 ? 100 : done * 100 / total
            FileHandle.standardError.write(Data("\r\(label) \(percent)% (\(done)/\(total))".utf8))
            if done == total { FileHandle.standardError.write(Data("\n".utf8)) }
        }
    }
}
