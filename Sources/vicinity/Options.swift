import ArgumentParser
import Foundation
import GeoCore
import Logging
import VicinityCore
import VicinitySpatiaLite

/// Where the database lives: `--db`, else `$VICINITY_DB`, else `Data/vicinity.sqlite` under the current folder.
struct DatabaseOptions: ParsableArguments {
    static let defaultPath = "Data/vicinity.sqlite"

    @Option(name: .customLong("db"), help: ArgumentHelp(
        "SQLite/SpatiaLite database file, created when missing.",
        discussion: "Default: $VICINITY_DB, else \(defaultPath).", valueName: "path"))
    var path: String?

    var resolvedPath: String {
        path ?? ProcessInfo.processInfo.environment["VICINITY_DB"] ?? Self.defaultPath
    }

    func openStore(logger: Logger = Logger(label: "vicinity"), settings: StorageSettings = .standard) throws -> SpatiaLiteStore {
        let path = resolvedPath
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty, !FileManager.default.fileExists(atPath: folder) {
            throw ValidationError("the folder of the database \(path) does not exist")
        }
        return try SpatiaLiteStore(path: path, logger: logger, settings: settings)
    }

    /// Runs `body` with the store open, then closes it explicitly: the write-ahead log is checkpointed into the
    /// database file before the command reports success, and a failure to do so is an error, not a silent deinit.
    func withStore<Result>(
        logger: Logger = Logger(label: "vicinity"), _ body: (SpatiaLiteStore) async throws -> Result
    ) async throws -> Result {
        let store = try openStore(logger: logger)
        let result: Result
        do {
            result = try await body(store)
        } catch {
            try? store.close()
            throw error
        }
        try store.close()
        return result
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
