import GRDB
import VicinityCore
import VicinitySQL

extension SpatiaLiteStore: ChangeFeed {
    /// The number of the last change read. SQLite writes one transaction at a time, so numbers are taken in
    /// commit order and a number says "everything before me is read". Pruned numbers count as read.
    public func changeCursor() async throws -> Int64 {
        try await pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT max(coalesce((SELECT max(id) FROM change), 0), through) FROM change_pruned") ?? 0
        }
    }

    public func changes(after cursor: Int64) async throws -> ChangeRead<Int64> {
        try await pool.read { db in
            let pruned = try Int64.fetchOne(db, sql: "SELECT through FROM change_pruned") ?? 0
            guard pruned <= cursor else { return .expired }
            let rows = try Row.fetchAll(
                db, sql: "SELECT id, kind, key, event_id, alert_id, alert_inside, alert_told_at FROM change WHERE id > ? ORDER BY id", arguments: [cursor])
            let changes = try rows.map(ChangeRow.change)
            return .changes(changes, next: try rows.last.map { try SQLiteRow($0).integer("id") } ?? cursor)
        }
    }

    public func waitForChanges(timeout: Duration) async throws {
        await changeSignal.wait(timeout: timeout)
    }

    public func pruneChanges(olderThan age: Duration) async throws -> Int {
        try await pool.write { db in
            guard let last = try Int64.fetchOne(
                db, sql: "SELECT max(id) FROM change WHERE created_at < CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) - ?",
                arguments: [age.wholeMilliseconds])
            else { return 0 }
            try db.execute(sql: "DELETE FROM change WHERE id <= ?", arguments: [last])
            let count = db.changesCount
            try db.execute(sql: "UPDATE change_pruned SET through = max(through, ?)", arguments: [last])
            return count
        }
    }
}

/// The mapping between `Change` and a row of the `change` table.
enum ChangeRow {
    static func change(_ row: Row) throws -> Change {
        let columns = SQLiteRow(row)
        return try Change(
            storedKind: try columns.text("kind"), key: try columns.text("key"), eventID: try columns.optionalInteger("event_id"),
            movedAlert: try columns.optionalText("alert_id"), inside: try columns.optionalBool("alert_inside"),
            toldAt: try columns.optionalTime("alert_told_at"))
    }
}
