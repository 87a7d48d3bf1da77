import Foundation
import GRDB
import GRDBSQLite

/// Copies one moment of a SQLite database, which a server may go on writing, into a new file with SQLite's
/// online backup API (`sqlite3_backup_init`, `_step`, `_finish`), a bounded number of pages at a time.
///
/// The copy is one snapshot: a read transaction is opened on the source before the first step and held until
/// the last, so every page comes from the same commit, and commits made meanwhile are not in the copy.
/// In WAL mode (every store file is: `SpatiaLiteStore` opens a `DatabasePool`) a reader never blocks the
/// writer, so the server goes on committing throughout; the price is that its checkpoints cannot move past
/// the snapshot, so its `-wal` file grows by what is written during the copy (to 74 MiB in the benchmark
/// below, 4 MiB without a backup), and SQLite keeps the file at that size and reuses it afterwards.
///
/// Why not SQLite's default, a read transaction per step: the backup then restarts from page 1 whenever
/// another connection commits between two steps, and a served database is committed to many times a second.
/// `Scripts/bench/backup.sh` at 1M places (254.5 MiB), 8 connections sending positions: the restarting backup
/// restarted 1,673 times and was unfinished after 60 s; the snapshot copy took 1.34 s while the server went on
/// writing (figures in `docs/BENCHMARKS.md`, "Backups").
public enum SnapshotCopy {
    /// Pages copied by one `sqlite3_backup_step`: between steps the copy reports progress and looks for an
    /// interrupt. With the snapshot held the step size does not change the copy's time: at 1M places the
    /// median of five copies was 1.02–1.24 s for every size from 16 pages (4,291 steps) to the whole file in
    /// one (`Scripts/bench/backup.sh`). So the number only sets how often progress and interrupts are looked
    /// at: 1024 pages are 4 MiB at the store's 4096-byte pages, a few milliseconds each, 68 steps at 1M places.
    public static let pagesPerStep: CInt = 1024

    /// What was copied.
    public struct Summary: Sendable, Hashable {
        public let pages: Int
        public let pageSize: Int
        public var bytes: Int { pages * pageSize }
    }

    /// Copies the database at `source` into a new file at `destination`, reporting copied and total pages to
    /// `progress` after each step, and stopping with `BackupProblem.interrupted` when `stopRequested` says so.
    /// The source is opened read-only: the copy never writes to it.
    public static func copy(
        from source: String, to destination: String,
        progress: ((_ copied: Int, _ total: Int) -> Void)? = nil,
        stopRequested: @escaping @Sendable () -> Bool = { false }
    ) throws(BackupProblem) -> Summary {
        guard FileManager.default.fileExists(atPath: source) else { throw .missing(path: source) }
        var configuration = Configuration()
        configuration.readonly = true
        // As long as the store's writer waits for readers: a moment of WAL recovery by another connection is
        // waited for, not reported as a failure.
        configuration.busyMode = .timeout(10)
        configuration.label = "backup source"
        let reader: DatabaseQueue, writer: DatabaseQueue
        do { reader = try DatabaseQueue(path: source, configuration: configuration) } catch {
            throw problem(error, source: source, destination: destination)
        }
        defer { try? reader.close() }
        do { writer = try DatabaseQueue(path: destination) } catch {
            throw .unwritable(path: destination, reason: (error as? DatabaseError)?.message ?? "\(error)")
        }
        defer { try? writer.close() }
        do {
            return try reader.read { db in
                try holdSnapshot(db, of: source)
                let pageSize = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 0
                var pages = 0
                try writer.writeWithoutTransaction { target in
                    try db.backup(to: target, pagesPerStep: pagesPerStep) { step in
                        pages = step.totalPageCount
                        progress?(step.completedPageCount, step.totalPageCount)
                        if !step.isCompleted, stopRequested() { throw BackupProblem.interrupted }
                    }
                }
                return Summary(pages: pages, pageSize: pageSize)
            }
        } catch {
            throw problem(error, source: source, destination: destination)
        }
    }

    /// What went wrong, said of the file it concerns: a full disk is the destination's; anything else SQLite
    /// reports while reading is the source's.
    private static func problem(_ error: any Error, source: String, destination: String) -> BackupProblem {
        if let problem = error as? BackupProblem { return problem }
        guard let error = error as? DatabaseError else { return .unreadable(path: source, reason: "\(error)") }
        let reason = error.message ?? "\(error.resultCode)"
        switch error.resultCode {
        case .SQLITE_CORRUPT: return .damaged(path: source, problems: [reason])
        case .SQLITE_FULL: return .unwritable(path: destination, reason: reason)
        default: return .unreadable(path: source, reason: reason)
        }
    }

    /// Starts the read transaction that pins the snapshot: a deferred transaction reads nothing until its first
    /// statement, and a backup step that finds none open opens (and closes) its own, which is the restarting
    /// mode. The schema table is read to start it, and SQLite is asked whether it did.
    private static func holdSnapshot(_ db: Database, of path: String) throws {
        _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_schema")
        guard sqlite3_txn_state(db.sqliteConnection, "main") == SQLITE_TXN_READ else {
            throw BackupProblem.unreadable(path: path, reason: "no read transaction could be held for the copy")
        }
    }
}
