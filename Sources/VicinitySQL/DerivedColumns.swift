import VicinityCore

/// Columns that hold what a rule of VicinityCore works out from a record's fields (`SQLColumn.Origin.rule`),
/// with the version of the rule their rows were made by in `derived_column`. When a rule's version rises,
/// opening the store recomputes its columns from the records themselves, so an older database never silently
/// disagrees with the rule new rows follow. Written once for both stores: a plan each runs under its
/// migration lock.
public enum DerivedColumns {
    /// One recomputation: the column, the version its rows were made by (0 when unknown) and now, and how many
    /// rows changed.
    public struct Recomputed: Sendable {
        public let column: String
        public let fromVersion: Int
        public let toVersion: Int
        public let rowsChanged: Int
    }

    /// The tables whose records carry derived columns, each with how to read its records.
    static let tables: [DerivedTable] = [
        DerivedTable(Place.self), DerivedTable(StoredAccount.self), DerivedTable(Ballot.self), DerivedTable(StoredVote.self),
        DerivedTable(Event.self),
    ]

    /// Rows recomputed per read: a page of records in memory at a time, however large the table.
    static let page = 1000

    /// Recomputes every derived column held by another version of its rule, and records the versions now held.
    public static func bringUpToDate() -> SQLPlan<[Recomputed]> {
        .select(DerivedColumnVersion.self) { versions in
            let held = Dictionary(versions.map { ($0.name, $0.ruleVersion) }) { first, _ in first }
            var stale: [(table: DerivedTable, columns: [SQLColumn])] = []
            for table in tables {
                let columns = table.table.columns.filter { column in
                    guard case .rule(let version) = column.origin else { return false }
                    return held[table.table.name + "." + column.name] != version
                }
                if !columns.isEmpty { stale.append((table, columns)) }
            }
            return recompute(stale[...], held: held, done: [])
        }
    }

    private static func recompute(
        _ stale: ArraySlice<(table: DerivedTable, columns: [SQLColumn])>, held: [String: Int], done: [Recomputed]
    ) -> SQLPlan<[Recomputed]> {
        guard let (table, columns) = stale.first else { return .done(done) }
        return table.recompute(columns.map(\.name), nil, 0) { changed in
            var versions: [SQLWrite] = []
            var report = done
            for column in columns {
                guard case .rule(let version) = column.origin else { continue }
                let name = table.table.name + "." + column.name
                versions.append(DerivedColumnVersion.upsert(DerivedColumnVersion(name: name, ruleVersion: version)))
                report.append(Recomputed(column: name, fromVersion: held[name] ?? 0, toVersion: version, rowsChanged: changed))
            }
            let recomputed = report
            return .writing(versions) { _ in recompute(stale.dropFirst(), held: held, done: recomputed) }
        }
    }
}

/// A table whose records have derived columns, with how to read them back.
struct DerivedTable: Sendable {
    let table: SQLTable
    let recompute: @Sendable (
        _ columns: [String], _ after: SQLValue?, _ changed: Int,
        _ next: @escaping @Sendable (Int) throws -> SQLPlan<[DerivedColumns.Recomputed]>
    ) -> SQLPlan<[DerivedColumns.Recomputed]>

    init<Record: SQLRecord>(_ type: Record.Type) {
        precondition(Record.table.key.count == 1, "\(Record.table) pages by a one-column key")
        table = Record.table
        recompute = { columns, after, changed, next in Self.page(type, columns, after: after, changed: changed, next) }
    }

    /// Reads the next page of records by key, writes back the derived values that differ, and goes on to the
    /// next page, or to `next` with the rows changed after the last.
    private static func page<Record: SQLRecord>(
        _ type: Record.Type, _ columns: [String], after: SQLValue?, changed: Int,
        _ next: @escaping @Sendable (Int) throws -> SQLPlan<[DerivedColumns.Recomputed]>
    ) -> SQLPlan<[DerivedColumns.Recomputed]> {
        let key = Record.table.key[0]
        let condition: SQLCondition = after.map { .compare(key, .greater, $0) } ?? .all
        return .read(SQLQuery(Record.table, where: condition, order: [.ascending(key)], limit: DerivedColumns.page)) { rows in
            var writes: [SQLWrite] = []
            var lastKey: SQLValue?
            for row in rows {
                let record = try Record(row: row)
                let keyValue = try row.value(key)
                lastKey = keyValue
                var assignments: [(column: String, value: SQLValue)] = []
                for column in columns {
                    let value = Record.schema.value(column, of: record) ?? .null
                    if !(try row.value(column)).isStored(as: value) { assignments.append((column, value)) }
                }
                if !assignments.isEmpty { writes.append(.set(Record.table, assignments, where: .equals(key, keyValue))) }
            }
            let total = changed + writes.count
            let last = lastKey
            return .writing(writes) { _ in
                guard rows.count == DerivedColumns.page, let last else { return try next(total) }
                return page(type, columns, after: last, changed: total, next)
            }
        }
    }
}

/// Which version of its rule a derived column's rows were made by.
struct DerivedColumnVersion: SQLRecord {
    var name: String
    var ruleVersion: Int

    static let schema = RecordSchema<DerivedColumnVersion>(
        "derived_column", key: ["name"],
        fields: [
            SQLField("name", .text) { .text($0.name) },
            SQLField("rule_version", .integer) { .whole($0.ruleVersion) },
        ])

    init(name: String, ruleVersion: Int) {
        self.name = name
        self.ruleVersion = ruleVersion
    }

    init(row: some SQLRow) throws(StoreError) {
        name = try row.text("name")
        ruleVersion = try row.whole("rule_version")
    }
}
