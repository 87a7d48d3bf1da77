import GRDB
import VicinityCore
import VicinitySQL

/// Accounts, sessions, positions, friendships, events and votes: the shared SQL stores' statements and rules
/// (`SQLRecordStore`), run on this file's one writer.
extension SpatiaLiteStore: RecordStore {
    public var location: String { path }

    public var places: SpatiaLiteStore { self }
    public var campuses: SpatiaLiteStore { self }
    public var accounts: SpatiaLiteStore { self }
    public var positions: SpatiaLiteStore { self }
    public var friends: SpatiaLiteStore { self }
    public var events: SpatiaLiteStore { self }
    public var changes: SpatiaLiteStore { self }
    public var votes: SpatiaLiteStore { self }
    public var outbox: SpatiaLiteStore { self }
    public var devices: SpatiaLiteStore { self }
    public var push: SpatiaLiteStore { self }

    /// Once a deletion commits, the write-ahead log, which still holds the pages as they were, is copied into
    /// the file and emptied; `secure_delete` (set on every connection) has already zeroed what was freed.
    public func scrubDeleted() async throws {
        try await pool.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
    }
}
