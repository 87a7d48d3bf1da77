import Foundation
import Logging
import NIOCore
import PostgresNIO
import VicinityCore
import VicinitySQL

/// How this store runs the shared plans (`SQLPlan`): a plan that may write runs in one transaction, its reads
/// locking what they name (`FOR UPDATE`, `SKIP LOCKED`, advisory keys) and retried whole after a serialization
/// failure or deadlock (its decisions are pure functions of what it read); a plan that is one write of one
/// statement runs without a transaction around it, and a read of the latest state without one too.
extension PostGISStore: SQLPlanRunner {
    public func run<Result: Sendable>(_ plan: SQLPlan<Result>, access: SQLAccess) async throws -> Result {
        let (result, followed): (Result, Bool)
        switch access {
        case .read:
            (result, followed) = try await leased { connection in
                try await PostgresPlans.execute(plan, on: Transaction(connection: connection, logger: self.logger, prepared: self.preparedStatements), mayWrite: false)
            }
        case .snapshot:
            (result, followed) = try await transaction(readOnlySnapshot: true) { try await PostgresPlans.execute(plan, on: $0, mayWrite: false) }
        case .write:
            if case .finish(let writes, let finish) = plan, writes.count == 1, SQLDialect.postgres.statements(writes[0]).count == 1 {
                // One statement commits alone, two round trips fewer than inside BEGIN and COMMIT.
                (result, followed) = try await leased { connection in
                    let outcomes = try await PostgresPlans.perform(writes, on: Transaction(connection: connection, logger: self.logger, prepared: self.preparedStatements))
                    return (try finish(outcomes), writes[0].table.followed)
                }
            } else {
                (result, followed) = try await transaction { try await PostgresPlans.execute(plan, on: $0, mayWrite: true) }
            }
        }
        if followed { changesCommitted() }
        return result
    }

    public func forEach<Record: SQLRecord>(
        _ type: Record.Type, where condition: SQLCondition, batch: Int, _ body: @Sendable ([Record]) throws -> Void
    ) async throws {
        let statement = SQLDialect.postgres.select(SQLQuery(Record.table, where: condition))
        try await forEachBatch(try BoundStatement(statement).query, decode: { try Record(row: $0) }, body)
    }
}

/// The plan loop on one connection: the store's calls, and the migrations' own session.
enum PostgresPlans {
    static func execute<Result>(_ plan: SQLPlan<Result>, on transaction: Transaction, mayWrite: Bool) async throws -> (Result, Bool) {
        var step = plan
        var followed = false
        while true {
            switch step {
            case .done(let result):
                return (result, followed)
            case .lock(let keys, let next):
                _ = try await fetch(SQLDialect.postgres.advisoryLocks(keys), on: transaction)
                step = next
            case .read(let query, let next):
                step = try next(try await fetch(SQLDialect.postgres.select(query), on: transaction))
            case .count(let query, let next):
                step = try next(try await fetch(SQLDialect.postgres.count(query), on: transaction).first?.whole("count") ?? 0)
            case .lastNumber(let table, let next):
                step = try next(try await fetch(SQLDialect.postgres.lastNumber(table), on: transaction).first?.optionalInteger("last") ?? 0)
            case .write(let writes, let next):
                guard mayWrite || writes.isEmpty else { throw StoreError.database("a read-only plan asked to write") }
                if writes.contains(where: \.table.followed) { followed = true }
                step = try next(try await perform(writes, on: transaction))
            case .finish(let writes, let result):
                guard mayWrite || writes.isEmpty else { throw StoreError.database("a read-only plan asked to write") }
                if writes.contains(where: \.table.followed) { followed = true }
                return (try result(try await perform(writes, on: transaction)), followed)
            }
        }
    }

    static func perform(_ writes: [SQLWrite], on transaction: Transaction) async throws -> [SQLWriteOutcome] {
        var outcomes: [SQLWriteOutcome] = []
        for write in writes {
            var count = 0
            var rows: [FetchedRow] = []
            for statement in SQLDialect.postgres.statements(write) {
                do {
                    let fetched = try await fetch(statement, on: transaction)
                    count += fetched.count
                    if !statement.returns.isEmpty { rows += fetched }
                } catch let error as PSQLError where error.sqlState == "23505" {
                    // A unique violation: what the plan named for a duplicate, else the database's refusal.
                    switch write {
                case .insert(_, _, .fail(let duplicate?), _), .update(_, _, let duplicate?): throw duplicate
                default: break
                }
                    throw error
                }
            }
            outcomes.append(SQLWriteOutcome(count: count, rows: rows))
        }
        return outcomes
    }

    static func fetch(_ statement: SQLStatement, on transaction: Transaction) async throws -> [FetchedRow] {
        let names = ColumnNames(statement.returns)
        return try await transaction.rows(try BoundStatement(statement)).map { row in
            FetchedRow(names: names, values: try statement.returns.map { try row.value($0) })
        }
    }
}

/// postgres-nio's row read by name: each value as the column's type gives it.
extension Columns: SQLRow {
    func value(_ column: String) throws(StoreError) -> SQLValue {
        guard row.contains(column) else { throw .database("the statement selected no column \(column)") }
        let cell = row[column]
        guard cell.bytes != nil else { return .null }
        do {
            switch cell.dataType {
            case .bool: return .bool(try cell.decode(Bool.self))
            case .int2, .int4, .int8: return .integer(try cell.decode(Int64.self))
            case .float4, .float8: return .real(try cell.decode(Double.self))
            case .bytea: return .bytes(Array(try cell.decode(ByteBuffer.self).readableBytesView))
            default: return .text(try cell.decode(String.self))
            }
        } catch {
            throw .corrupt("column \(column) holds a \(cell.dataType) that is not readable: \(error)")
        }
    }
}
