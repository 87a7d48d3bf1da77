import Logging
import PostgresNIO
import VicinityCore
import VicinitySQL

/// Brings a database's schema up to date, once however many processes start at the same moment: each takes
/// the same session advisory lock first, so the second finds the first's work recorded and applies nothing.
/// Each migration commits with its record in `vicinity_migration`, all of it or none.
struct Migrator: Sendable {
    let store: PostGISStore

    /// The advisory lock every Vicinity process takes to migrate: the bytes of "vicinity" read as one 64-bit number.
    static let lockKey: Int64 = 8_532_460_273_505_236_089

    func migrate() async throws {
        let logger = store.logger
        let schema = store.configuration.schema
        try await store.leased(maintenance: true) { connection in
                let session = Transaction(connection: connection, logger: logger)
                try await session.execute("SELECT pg_advisory_lock(\(Self.lockKey))")
                do {
                    // Under the lock too: IF NOT EXISTS does not stop two sessions creating the same schema at once.
                    if let schema { try await session.execute("CREATE SCHEMA IF NOT EXISTS \(unescaped: schema)") }
                    try await apply(on: session, logger: logger)
                    try await bringDerivedColumnsUpToDate(on: session, logger: logger)
                } catch {
                    try? await session.execute("SELECT pg_advisory_unlock(\(Self.lockKey))")
                    throw error
                }
                try await session.execute("SELECT pg_advisory_unlock(\(Self.lockKey))")
        }
    }

    /// Recomputes the derived columns held by another version of their rule (`DerivedColumns`), in one
    /// transaction under the migration lock: all columns or none.
    private func bringDerivedColumnsUpToDate(on session: Transaction, logger: Logger) async throws {
        try await session.execute("BEGIN")
        let recomputed: [DerivedColumns.Recomputed]
        do {
            recomputed = try await PostgresPlans.execute(DerivedColumns.bringUpToDate(), on: session, mayWrite: true).0
            try await session.execute("COMMIT")
        } catch {
            try? await session.execute("ROLLBACK")
            throw error
        }
        for column in recomputed {
            logger.log(level: column.rowsChanged > 0 ? .info : .debug, "recomputed a derived column for its current rule", metadata: [
                "column": "\(column.column)", "from_version": "\(column.fromVersion)", "to_version": "\(column.toVersion)",
                "rows_changed": "\(column.rowsChanged)",
            ])
        }
    }

    private func apply(on session: Transaction, logger: Logger) async throws {
        try await session.execute("""
            CREATE TABLE IF NOT EXISTS vicinity_migration (
                name text NOT NULL PRIMARY KEY,
                applied_at timestamptz NOT NULL DEFAULT now()
            )
            """)
        let applied = Set(try await session.rows("SELECT name FROM vicinity_migration").map { try $0.decode("name", as: String.self) })
        let known = Set(Schema.migrations.map(\.name))
        if let unknown = applied.subtracting(known).sorted().first { throw StoreError.migratedByNewerVersion(recording: unknown) }
        for migration in Schema.migrations where !applied.contains(migration.name) {
            try await session.execute("BEGIN")
            do {
                for statement in migration.statements { try await session.execute(PostgresQuery(unsafeSQL: statement)) }
                try await session.execute("INSERT INTO vicinity_migration (name) VALUES (\(migration.name))")
                try await session.execute("COMMIT")
            } catch {
                try? await session.execute("ROLLBACK")
                throw error
            }
            logger.info("applied a database migration", metadata: ["migration": "\(migration.name)"])
        }
    }
}

extension PostGISStore {
    /// How many times each migration is recorded: once each, in a healthy database.
    func migrationRecords() async throws -> [String: Int] {
        var result: [String: Int] = [:]
        for row in try await rows("SELECT name, count(*) AS times FROM vicinity_migration GROUP BY name") {
            result[try row.decode("name")] = try row.decode("times")
        }
        return result
    }

    /// Removes the configured schema and everything in it: for test databases that give each test a schema.
    func dropSchema() async throws {
        guard let schema = configuration.schema else { throw StoreError.database("no schema of its own to drop") }
        try await execute("DROP SCHEMA \(unescaped: schema) CASCADE")
    }
}

extension PostGISStore {
    /// Every index and constraint of `table` as the database defines it, sorted: what a bulk load must give
    /// back as it found it.
    func definitions(of table: String) async throws -> [String] {
        try await rows("""
            SELECT indexdef AS definition FROM pg_indexes WHERE schemaname = current_schema() AND tablename = \(table)
            UNION ALL
            SELECT conname || ' ' || pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = \(table)::regclass
            ORDER BY definition
            """).map { try $0.decode("definition", as: String.self) }
    }
}
