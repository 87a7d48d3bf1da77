import Logging
import PostgresNIO
import VicinityCore

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
        try await store.leased { connection in
                let session = Transaction(connection: connection, logger: logger)
                try await session.execute("SELECT pg_advisory_lock(\(Self.lockKey))")
                do {
                    // Under the lock too: IF NOT EXISTS does not stop two sessions creating the same schema at once.
                    if let schema { try await session.execute("CREATE SCHEMA IF NOT EXISTS \(unescaped: schema)") }
                    try await apply(on: session, logger: logger)
                    try await DerivedColumns.bringUpToDate(on: session, logger: logger)
                } catch {
                    try? await session.execute("SELECT pg_advisory_unlock(\(Self.lockKey))")
                    throw error
                }
                try await session.execute("SELECT pg_advisory_unlock(\(Self.lockKey))")
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
        if let unknown = applied.subtracting(known).sorted().first {
            throw StoreError.database(
                "the database was migrated by a newer Vicinity (it records the migration \"\(unknown)\", which this version does not know); run that version or newer")
        }
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

/// Columns that hold what a rule of VicinityCore computes from other columns, with the version of the rule
/// their rows were computed by, as in the SpatiaLite store: when a rule's version rises, opening the store
/// recomputes its column, so an older database never silently disagrees with the rule new rows follow.
enum DerivedColumns {
    struct Column: Sendable {
        var name: String
        var ruleVersion: Int
        /// Selects `key`, the inputs and `current`, the stored value.
        var select: String
        /// Takes the new value, then the key.
        var update: String
        var rule: @Sendable (Columns) throws -> String
    }

    static let all: [Column] = [
        Column(
            name: "place.search_text", ruleVersion: NameMatch.ruleVersion,
            select: "SELECT id AS key, \(PlaceRow.columns), search_text AS current FROM place",
            update: "UPDATE place SET search_text = $1 WHERE id = $2"
        ) { row in PlaceRow.searchText(try PlaceRow.place(row)) },
        Column(
            name: "account.name_key", ruleVersion: NameMatch.ruleVersion,
            select: "SELECT id AS key, first_name, last_name, name_key AS current FROM account",
            update: "UPDATE account SET name_key = $1 WHERE id = $2"
        ) { row in PeopleMatch.nameKey(firstName: try row.decode("first_name"), lastName: try row.decode("last_name")) },
        Column(
            name: "ballot.name_key", ruleVersion: NameMatch.ruleVersion,
            select: "SELECT id AS key, voter_name, name_key AS current FROM ballot",
            update: "UPDATE ballot SET name_key = $1 WHERE id = $2"
        ) { row in Ballot.nameKey(try row.decode("voter_name")) },
    ]

    /// Recomputes every column held by another version of its rule (or an unknown one) and records the
    /// version now held, in one transaction: all columns or none.
    static func bringUpToDate(on session: Transaction, columns: [Column] = all, logger: Logger) async throws {
        let held = Dictionary(
            try await session.rows("SELECT name, rule_version FROM derived_column").map {
                (try $0.decode("name", as: String.self), try $0.decode("rule_version", as: Int.self))
            },
            uniquingKeysWith: { first, _ in first })
        let stale = columns.filter { held[$0.name] != $0.ruleVersion }
        guard !stale.isEmpty else { return }
        try await session.execute("BEGIN")
        do {
            for column in stale {
                var changed = 0
                for row in try await session.rows(PostgresQuery(unsafeSQL: column.select)) {
                    let value = try column.rule(row)
                    guard value != (try row.decode("current", as: String.self)) else { continue }
                    var bindings = PostgresBindings()
                    bindings.append(value)
                    bindings.append(try row.decode("key", as: String.self))
                    try await session.execute(PostgresQuery(unsafeSQL: column.update, binds: bindings))
                    changed += 1
                }
                try await session.execute("""
                    INSERT INTO derived_column (name, rule_version) VALUES (\(column.name), \(column.ruleVersion))
                    ON CONFLICT (name) DO UPDATE SET rule_version = excluded.rule_version
                    """)
                logger.log(level: changed > 0 ? .info : .debug, "recomputed a derived column for its current rule", metadata: [
                    "column": "\(column.name)", "from_version": "\(held[column.name] ?? 0)",
                    "to_version": "\(column.ruleVersion)", "rows_changed": "\(changed)",
                ])
            }
            try await session.execute("COMMIT")
        } catch {
            try? await session.execute("ROLLBACK")
            throw error
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
