import GRDB
import Logging
import VicinityCore

/// Columns that hold what a rule of VicinityCore computes from other columns, each with the version of the
/// rule its rows were computed by. When the rule changes (its version rises), opening the store recomputes
/// the column, so an older database never silently disagrees with the rule the code applies to new rows.
enum DerivedColumns {
    struct Column: Sendable {
        /// `table.column`, as recorded in `derived_column`.
        var name: String
        var ruleVersion: Int
        /// Recomputes every row; returns how many changed.
        var recompute: @Sendable (Database) throws -> Int
    }

    static let all: [Column] = [
        Column(name: "place.search_text", ruleVersion: NameMatch.ruleVersion) { db in
            try recompute(db, select: "SELECT \(PlaceRow.columns), search_text, rowid AS key FROM place",
                          update: "UPDATE place SET search_text = ? WHERE rowid = ?", current: "search_text") { row in
                PlaceRow.searchText(try PlaceRow.place(row))
            }
        },
        Column(name: "account.name_key", ruleVersion: NameMatch.ruleVersion) { db in
            try recompute(db, select: "SELECT rowid AS key, first_name, last_name, name_key AS search_text FROM account",
                          update: "UPDATE account SET name_key = ? WHERE rowid = ?", current: "search_text") { row in
                PeopleMatch.nameKey(firstName: row["first_name"], lastName: row["last_name"])
            }
        },
        Column(name: "ballot.name_key", ruleVersion: NameMatch.ruleVersion) { db in
            try recompute(db, select: "SELECT rowid AS key, voter_name, name_key AS search_text FROM ballot",
                          update: "UPDATE ballot SET name_key = ? WHERE rowid = ?", current: "search_text") { row in
                Ballot.nameKey(row["voter_name"])
            }
        },
    ]

    /// Recomputes every column whose rows were made by another version of its rule (or an unknown one), and
    /// records the version now held. Runs in the caller's transaction: all columns or none.
    static func bringUpToDate(_ db: Database, columns: [Column] = all, logger: Logger) throws {
        let held = Dictionary(
            try Row.fetchAll(db, sql: "SELECT name, rule_version FROM derived_column").map { ($0[0] as String, $0[1] as Int) },
            uniquingKeysWith: { first, _ in first })
        for column in columns where held[column.name] != column.ruleVersion {
            let changed = try column.recompute(db)
            try db.execute(
                sql: "INSERT INTO derived_column (name, rule_version) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET rule_version = excluded.rule_version",
                arguments: [column.name, column.ruleVersion])
            // A new or already current database changes no row: only a real recomputation is news.
            logger.log(level: changed > 0 ? .info : .debug, "recomputed a derived column for its current rule", metadata: [
                "column": "\(column.name)", "from_version": "\(held[column.name] ?? 0)",
                "to_version": "\(column.ruleVersion)", "rows_changed": "\(changed)",
            ])
        }
    }

    /// Reads each row with `select` (which names the row `key` and the stored value as `current`), and writes
    /// the rule's value back where it differs.
    private static func recompute(
        _ db: Database, select: String, update: String, current: String, rule: (Row) throws -> String
    ) throws -> Int {
        let rows = try Row.fetchCursor(db, sql: select)
        var changes: [(key: Int64, value: String)] = []
        while let row = try rows.next() {
            let value = try rule(row)
            if value != (row[current] as String) { changes.append((row["key"], value)) }
        }
        let statement = try db.makeStatement(sql: update)
        for change in changes { try statement.execute(arguments: [change.value, change.key]) }
        return changes.count
    }
}
