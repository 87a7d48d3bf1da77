import GRDB

/// Makes a store file one self-contained file: its WAL folded in and the file switched to a rollback journal.
///
/// Why: closing a store does not always fold its WAL in (GRDB closes the writer before the readers, its issue
/// 739, so once a read has run the last connection to close is a read-only reader, which may not checkpoint), so a checked file can still have commits in `-wal` that a
/// rename of the main file alone would leave behind. And a WAL-mode file can only be read where its `-shm` can
/// be created beside it, which a read-only mount or archive does not allow; a rollback-journal file opens
/// read-only anywhere. A store opened on it turns WAL on again.
enum SingleFile {
    static func fold(_ path: String) throws(BackupProblem) {
        do {
            let queue = try DatabaseQueue(path: path)
            defer { try? queue.close() }
            // Leaving WAL mode checkpoints the whole WAL into the file and deletes it.
            let mode = try queue.writeWithoutTransaction { db in try String.fetchOne(db, sql: "PRAGMA journal_mode = DELETE") }
            guard mode == "delete" else {
                throw BackupProblem.unreadable(path: path, reason: "the journal mode stayed \(mode ?? "unknown")")
            }
        } catch let problem as BackupProblem {
            throw problem
        } catch {
            throw .unreadable(path: path, reason: "\(error)")
        }
    }
}
