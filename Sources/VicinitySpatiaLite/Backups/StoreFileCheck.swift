import Foundation
import GRDB
import Logging

/// Whether a file is a sound store that this version can serve, checked in the order that keeps a bad file
/// from being written to: SQLite's `PRAGMA quick_check` and the store's migrations on a plain read-only
/// connection first, and only then the file opened as a store (which brings an older schema up to date) and the
/// store's own checks (`SpatiaLiteStore.integrityProblems`: SQLite's full `PRAGMA integrity_check`, then the
/// spatial indexes, the name index and friendships in pairs).
///
/// Why `quick_check` first and not `integrity_check` twice: the gate only has to show that the file's pages
/// and b-trees are sound enough to open; `quick_check` does that without comparing indexes with their tables,
/// which the full check inside `integrityProblems` does next. At 1M places the two took 0.6 s and 1.6 s.
public enum StoreFileCheck {
    /// What the checks saw of a sound file.
    public struct Report: Sendable, Hashable {
        /// Places in the file.
        public let places: Int
        /// Migrations applied to the file before it was opened as a store.
        public let migrations: Int
    }

    /// Checks the file at `path`; throws `BackupProblem.damaged`, `.notAStore` or `.newerVersion` for one this
    /// version must not serve, naming it `name` (the file it is a copy of). Only a sound file is opened as a
    /// store, so only a sound file changes. The store's checks take seconds at 1M places (figures in
    /// `docs/BENCHMARKS.md`, "Backups"), so `stopRequested` is asked every `interruptCheckInterval` meanwhile,
    /// and a stop interrupts them (`BackupProblem.interrupted`).
    public static func check(
        _ path: String, reportingAs name: String, logger: Logger, stopRequested: @escaping @Sendable () -> Bool = { false }
    ) async throws(BackupProblem) -> Report {
        let migrations = try checkPlainFile(path, reportingAs: name)
        do {
            let store = try SpatiaLiteStore(path: path, logger: logger)
            let pool = store.pool
            let watcher = Task {
                while !Task.isCancelled, !stopRequested() { try? await Task.sleep(for: interruptCheckInterval) }
                if !Task.isCancelled { pool.interrupt() }
            }
            defer { watcher.cancel() }
            do {
                let problems = try await store.integrityProblems()
                let places = try await store.count()
                try store.close()
                // An interrupted check can read as a problem (the name index's check reports any error as one).
                if stopRequested() { throw BackupProblem.interrupted }
                if !problems.isEmpty { throw BackupProblem.damaged(path: name, problems: problems) }
                return Report(places: places, migrations: migrations)
            } catch {
                try? store.close()
                throw error
            }
        } catch let problem as BackupProblem {
            throw problem
        } catch {
            if stopRequested() { throw .interrupted }
            throw .damaged(path: name, problems: ["it does not open as a store: \(error)"])
        }
    }

    /// How often a running check looks for a stop: a tenth of a second, quicker than a person notices.
    static let interruptCheckInterval = Duration.milliseconds(100)

    /// SQLite's quick check and the migrations, read without SpatiaLite and without writing; returns how many
    /// migrations the file has.
    private static func checkPlainFile(_ path: String, reportingAs name: String) throws(BackupProblem) -> Int {
        do {
            var configuration = Configuration()
            configuration.readonly = true
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? queue.close() }
            return try queue.read { db in
                let problems = try String.fetchAll(db, sql: "PRAGMA quick_check").filter { $0 != "ok" }
                if !problems.isEmpty { throw BackupProblem.damaged(path: name, problems: problems) }
                let (applied, unknown) = try Schema.recordedMigrations(db)
                if applied.isEmpty { throw BackupProblem.notAStore(path: name) }
                if !unknown.isEmpty { throw BackupProblem.newerVersion(path: name, unknownMigrations: Array(unknown)) }
                return applied.count
            }
        } catch let problem as BackupProblem {
            throw problem
        } catch let error as DatabaseError {
            throw .damaged(path: name, problems: [error.message ?? "\(error.resultCode)"])
        } catch {
            throw .damaged(path: name, problems: ["\(error)"])
        }
    }
}
