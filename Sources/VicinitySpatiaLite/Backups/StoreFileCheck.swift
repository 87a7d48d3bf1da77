import Foundation
import GRDB
import Logging

/// Whether a file is a sound store that this version can serve, checked in the order that keeps a bad file
/// from being written to: SQLite's `PRAGMA integrity_check` and the store's migrations on a plain connection
/// first, and only then the file opened as a store (which brings an older schema up to date) and the store's own
/// checks (`SpatiaLiteStore.integrityProblems`: spatial indexes, the name index, friendships in pairs).
public enum StoreFileCheck {
    /// What the checks saw of a sound file.
    public struct Report: Sendable, Hashable {
        /// Places in the file.
        public let places: Int
        /// Migrations applied to the file before it was opened as a store.
        public let migrations: Int
    }

    /// Checks the file at `path`; throws `BackupProblem.damaged`, `.notAStore` or `.newerVersion` for one this
    /// version must not serve. Only a sound file is opened as a store, so only a sound file changes.
    public static func check(_ path: String, logger: Logger) async throws(BackupProblem) -> Report {
        let migrations = try checkPlainFile(path)
        do {
            let store = try SpatiaLiteStore(path: path, logger: logger)
            do {
                let problems = try await store.integrityProblems()
                let places = try await store.count()
                try store.close()
                if !problems.isEmpty { throw BackupProblem.damaged(path: path, problems: problems) }
                return Report(places: places, migrations: migrations)
            } catch {
                try? store.close()
                throw error
            }
        } catch let problem as BackupProblem {
            throw problem
        } catch {
            throw .damaged(path: path, problems: ["it does not open as a store: \(error)"])
        }
    }

    /// SQLite's integrity check and the migrations, read without SpatiaLite and without writing; returns how
    /// many migrations the file has.
    private static func checkPlainFile(_ path: String) throws(BackupProblem) -> Int {
        do {
            var configuration = Configuration()
            configuration.readonly = true
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? queue.close() }
            return try queue.read { db in
                let problems = try String.fetchAll(db, sql: "PRAGMA integrity_check").filter { $0 != "ok" }
                if !problems.isEmpty { throw BackupProblem.damaged(path: path, problems: problems) }
                let migrator = Schema.migrator
                let applied = try migrator.appliedIdentifiers(db)
                if applied.isEmpty { throw BackupProblem.notAStore(path: path) }
                let unknown = applied.subtracting(migrator.migrations)
                if !unknown.isEmpty { throw BackupProblem.newerVersion(path: path, unknownMigrations: Array(unknown)) }
                return applied.count
            }
        } catch let problem as BackupProblem {
            throw problem
        } catch let error as DatabaseError {
            throw .damaged(path: path, problems: [error.message ?? "\(error.resultCode)"])
        } catch {
            throw .damaged(path: path, problems: ["\(error)"])
        }
    }
}
