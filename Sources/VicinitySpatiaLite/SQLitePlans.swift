import Foundation
import GRDB
import VicinityCore
import VicinitySQL

/// How this store runs the shared plans (`SQLPlan`): inside one GRDB transaction, read-only ones on a reader
/// (a WAL snapshot), writing ones on the one writer, which sees the whole database alone. Locks change
/// nothing here: the writer is the lock.
extension SpatiaLiteStore: SQLPlanRunner {
    public func run<Result: Sendable>(_ plan: SQLPlan<Result>, access: SQLAccess) async throws -> Result {
        switch access {
        case .read, .snapshot:
            // A reader's transaction is one WAL snapshot: every read of the plan sees one state.
            return try await pool.read { db in try SQLitePlans.execute(plan, in: db, mayWrite: false).result }
        case .write:
            let (result, followed) = try await pool.write { db in try SQLitePlans.execute(plan, in: db, mayWrite: true) }
            // Readers of the change feed in this process are woken once the write has committed.
            if followed { changeSignal.notify() }
            return result
        }
    }

    public func forEach<Record: SQLRecord>(
        _ type: Record.Type, where condition: SQLCondition, batch: Int, _ body: @Sendable ([Record]) throws -> Void
    ) async throws {
        let statement = SQLDialect.sqlite.select(SQLQuery(Record.table, where: condition))
        try await pool.read { db in
            let rows = try Row.fetchCursor(try db.cachedStatement(sql: statement.text), arguments: SQLitePlans.arguments(statement))
            var records: [Record] = []
            records.reserveCapacity(batch)
            while let row = try rows.next() {
                records.append(try Record(row: SQLiteRow(row)))
                if records.count == batch {
                    try body(records)
                    records.removeAll(keepingCapacity: true)
                }
            }
            if !records.isEmpty { try body(records) }
        }
    }
}

/// The plan loop on one connection, for the store's calls and for the migrations run when it opens.
enum SQLitePlans {
    /// Runs the plan's steps in order; returns its result and whether it wrote to a table the change feed
    /// follows.
    static func execute<Result>(_ plan: SQLPlan<Result>, in db: Database, mayWrite: Bool) throws -> (result: Result, followed: Bool) {
        var step = plan
        var followed = false
        while true {
            switch step {
            case .done(let result):
                return (result, followed)
            case .lock(_, let next):
                step = next
            case .read(let query, let next):
                step = try next(try fetch(SQLDialect.sqlite.select(query), db))
            case .count(let query, let next):
                let rows = try fetch(SQLDialect.sqlite.count(query), db)
                step = try next(try rows.first?.whole("count") ?? 0)
            case .lastNumber(let table, let next):
                let rows = try fetch(SQLDialect.sqlite.lastNumber(table), db)
                step = try next(try rows.first?.optionalInteger("last") ?? 0)
            case .write(let writes, let next):
                step = try next(try perform(writes, db, mayWrite: mayWrite, followed: &followed))
            case .finish(let writes, let result):
                return (try result(try perform(writes, db, mayWrite: mayWrite, followed: &followed)), followed)
            }
        }
    }

    private static func perform(_ writes: [SQLWrite], _ db: Database, mayWrite: Bool, followed: inout Bool) throws -> [SQLWriteOutcome] {
        guard mayWrite || writes.isEmpty else { throw StoreError.database("a read-only plan asked to write") }
        var outcomes: [SQLWriteOutcome] = []
        for write in writes {
            outcomes.append(try perform(write, db))
            if write.table.followed { followed = true }
        }
        return outcomes
    }

    private static func perform(_ write: SQLWrite, _ db: Database) throws -> SQLWriteOutcome {
        var count = 0
        var rows: [FetchedRow] = []
        for statement in SQLDialect.sqlite.statements(write) {
            do {
                if statement.returns.isEmpty {
                    try db.cachedStatement(sql: statement.text).execute(arguments: arguments(statement))
                    count += db.changesCount
                } else {
                    let fetched = try fetch(statement, db)
                    count += fetched.count
                    rows += fetched
                }
            } catch let error as DatabaseError
                where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE || error.extendedResultCode == .SQLITE_CONSTRAINT_PRIMARYKEY
            {
                switch write {
                case .insert(_, _, .fail(let duplicate?), _), .update(_, _, let duplicate?): throw duplicate
                default: break
                }
                throw error
            }
        }
        return SQLWriteOutcome(count: count, rows: rows)
    }

    static func fetch(_ statement: SQLStatement, _ db: Database) throws -> [FetchedRow] {
        let names = ColumnNames(statement.returns)
        let cursor = try Row.fetchCursor(try db.cachedStatement(sql: statement.text), arguments: arguments(statement))
        var rows: [FetchedRow] = []
        while let row = try cursor.next() {
            rows.append(FetchedRow(names: names, values: (0..<row.count).map { SQLiteRow.value(row[$0] as DatabaseValue) }))
        }
        return rows
    }

    static func arguments(_ values: [SQLValue]) -> StatementArguments {
        arguments(SQLStatement(text: "", arguments: values.map(SQLArgument.value), returns: []))
    }

    static func arguments(_ statement: SQLStatement) -> StatementArguments {
        StatementArguments(statement.arguments.map { argument -> (any DatabaseValueConvertible)? in
            switch argument {
            case .value(.null): nil
            case .value(.integer(let value)): value
            case .value(.real(let value)): value
            case .value(.text(let value)): value
            case .value(.bytes(let value)): Data(value)
            case .value(.bool(let value)): value
            // SQLite's dialect matches lists through `json_each` of one text argument: it binds no arrays.
            case .texts, .integers: preconditionFailure("SQLite takes no array arguments")
            }
        })
    }
}

/// GRDB's row read by name, for the store's own reads that stream rows (bulk loads) without holding them.
struct SQLiteRow: SQLRow {
    let row: Row

    init(_ row: Row) { self.row = row }

    func value(_ column: String) throws(StoreError) -> SQLValue {
        guard row.hasColumn(column) else { throw .database("the statement selected no column \(column)") }
        return Self.value(row[column] as DatabaseValue)
    }

    static func value(_ value: DatabaseValue) -> SQLValue {
        switch value.storage {
        case .null: .null
        case .int64(let number): .integer(number)
        case .double(let number): .real(number)
        case .string(let text): .text(text)
        case .blob(let data): .bytes(Array(data))
        }
    }
}
