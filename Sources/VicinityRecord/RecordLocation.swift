import Foundation
import Logging
import VicinityCore
import VicinitySQL
import VicinityPostGIS
import VicinitySpatiaLite

/// Where a record lives, as `--db` and `VICINITY_DB` name it: a `postgres://` URL for PostgreSQL with PostGIS,
/// anything else a SpatiaLite file. The one place that turns that text into a store; every program of the
/// package opens its record here and works on it generically.
public enum RecordLocation: Sendable, CustomStringConvertible {
    case file(path: String)
    case server(PostGISConfiguration)

    /// Text that names no usable record, said in words.
    public struct Problem: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    public init(_ text: String) throws(Problem) {
        if PostGISConfiguration.isURL(text) {
            do { self = .server(try PostGISConfiguration(url: text)) } catch { throw Problem(description: error.description) }
        } else {
            guard !text.isEmpty else { throw Problem(description: "the database path is empty") }
            self = .file(path: text)
        }
    }

    /// The record as `serve` opens it: a server's statements held to
    /// `PostGISConfiguration.servingStatementTimeout` unless the URL gives a `statement_timeout` of its own, so
    /// that a request never waits on the database for longer than a client would.
    public func serving() -> RecordLocation {
        guard case .server(var configuration) = self else { return self }
        if configuration.statementTimeout == nil { configuration.statementTimeout = PostGISConfiguration.servingStatementTimeout }
        return .server(configuration)
    }

    /// What may be shown: the path, or the URL without its password.
    public var description: String {
        switch self {
        case .file(let path): path
        case .server(let configuration): configuration.location
        }
    }

    /// Opens the record, runs `body` with it, then closes it explicitly: a SpatiaLite file's write-ahead log is
    /// checkpointed into it, and a server's connections are closed, before the caller reports success.
    /// `settings` tune a SpatiaLite file only.
    public func withRecord<Result>(
        logger: Logger, settings: StorageSettings = .standard, _ body: (any RecordStore) async throws -> Result
    ) async throws -> Result {
        switch self {
        case .server(let configuration):
            return try await PostGISStore.withStore(configuration, logger: logger) { try await body($0) }
        case .file(let path):
            let folder = (path as NSString).deletingLastPathComponent
            if !folder.isEmpty, !FileManager.default.fileExists(atPath: folder) {
                throw Problem(description: "the folder of the database \(path) does not exist")
            }
            let store = try SpatiaLiteStore(path: path, logger: logger, settings: settings)
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
}
