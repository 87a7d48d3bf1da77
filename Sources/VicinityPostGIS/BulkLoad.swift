import Foundation
import Logging
import PostgresNIO
import Synchronization
import VicinityCore

/// Loading a batch large against the table: the secondary indexes (location, name search, category), and for an
/// empty table the key too, are dropped inside the transaction and built again from every row once at the end,
/// rather than updated row by row. 100,000 places into an empty table took 4.2 s to apply with the indexes in
/// place; without them the insert took 0.8 s and building the three 1.8 s. 1M rows: a plain insert took 4.8 s
/// with the key and 2.7 s without it, the key then 0.8 s (one run each, 2 cores, release build). Readers of
/// the table wait for the transaction meanwhile; the servers read places from memory. An empty table takes
/// the rows by COPY straight in: 1M rows then took 2.3 s to COPY into staging and 2.8 s to insert from it
/// (one run each), the speculative insertion of `ON CONFLICT` 12.0 s. An empty table is loaded beside it
/// first (`SideLoad`); this path is for the rest, and for when that one gives way.
enum BulkLoad {
    /// The smallest batch loaded in bulk, as SpatiaLite's `shouldRebuildIndex` has it.
    static let minimumBatch = 1000

    /// SpatiaLite's rule for the same choice (`shouldRebuildIndex`): a thousand rows or more, and at least a
    /// quarter of what the table holds.
    static func shouldSetIndexesAside(batch: Int, existing: Int) -> Bool {
        batch >= minimumBatch && batch * 4 >= existing
    }

    /// Drops every index of `place` but its key (and the key too with `keyToo`, for an empty table) and returns
    /// the statements that build them again, from their definitions as the database holds them, so that what is
    /// built is exactly what the migrations made. Index builds get 512 MiB of working memory for the rest of
    /// the transaction (PostgreSQL's default is 64 MiB), so that a million points' indexes sort in memory.
    static func setIndexesAside(in transaction: Transaction, keyToo: Bool) async throws -> [String] {
        var rebuild: [String] = []
        try await transaction.execute("SET LOCAL maintenance_work_mem = '512MB'")
        if keyToo, let key = try await transaction.rows("""
            SELECT conname, pg_get_constraintdef(oid) AS definition FROM pg_constraint
            WHERE conrelid = 'place'::regclass AND contype = 'p'
            """).first {
            let name: String = try key.decode("conname"), definition: String = try key.decode("definition")
            try await transaction.execute("ALTER TABLE place DROP CONSTRAINT \(unescaped: quoted(name))")
            rebuild.append("ALTER TABLE place ADD CONSTRAINT \(quoted(name)) \(definition)")
        }
        let indexes = try await transaction.rows("""
            SELECT indexname, indexdef FROM pg_indexes
            WHERE schemaname = current_schema() AND tablename = 'place' AND indexname <> 'place_pkey'
            """).map { (name: try $0.decode("indexname", as: String.self), definition: try $0.decode("indexdef", as: String.self)) }
        for index in indexes { try await transaction.execute("DROP INDEX \(unescaped: quoted(index.name))") }
        return rebuild + indexes.map(\.definition)
    }

    /// An identifier quoted for SQL, as PostgreSQL's `quote_ident` does.
    static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

/// A large batch into an empty `place` table, loaded beside it: the rows are copied into a new table made like
/// `place` and committed there, its indexes are built on two connections at once, and one short transaction
/// then puts it in `place`'s stead. Inside one transaction the four index builds run one after another on one
/// core; beside it, the GiST build of the locations (6.7 s for 1M points) runs while the other three (key,
/// category, name search: 4.2 s together) run on a second connection (one run each, 2 cores).
///
/// All or nothing as the ordinary load is: until the swap commits, nobody reads the new table, and a load that
/// fails or dies leaves `place` as it was (the next load drops the table it left). The swap happens only when
/// `place` is still empty and still has the shape it had when the load began (columns, constraints, indexes,
/// triggers, privileges, as `shape` reads them), and only when the result has that same shape; otherwise the
/// load returns nil and the batch goes the ordinary way. Privileges granted on `place` are granted on the new
/// table before the swap. One side load runs at a time per schema, under a session advisory lock.
enum SideLoad {
    /// The table the rows go into; its indexes are `place_load_0`, `place_load_1`, … until the swap names them.
    static let table = "place_load"

    /// Everything about `place` that a swap must keep, as one text: columns with their types, defaults and
    /// generation, constraints, indexes, triggers, row security, privileges (of the table and of columns),
    /// owner, storage options, replica identity, comment and publications. What the new table does not
    /// copy (all but the table's privileges, which the swap grants again) makes the shapes differ, and the
    /// load gives way.
    static let shape = """
        (SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
                    || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END
                    || coalesce(' ' || a.attgenerated::text || ' ' || pg_get_expr(d.adbin, d.adrelid), ''),
                ', ' ORDER BY a.attnum)
            FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
            WHERE a.attrelid = 'place'::regclass AND a.attnum > 0 AND NOT a.attisdropped)
        || ' | ' || coalesce((SELECT string_agg(conname || ' ' || pg_get_constraintdef(oid), ', ' ORDER BY conname)
            FROM pg_constraint WHERE conrelid = 'place'::regclass), '')
        || ' | ' || coalesce((SELECT string_agg(indexdef, ', ' ORDER BY indexname)
            FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'place'), '')
        || ' | ' || coalesce((SELECT string_agg(pg_get_triggerdef(oid), ', ' ORDER BY tgname)
            FROM pg_trigger WHERE tgrelid = 'place'::regclass AND NOT tgisinternal), '')
        || ' | ' || coalesce((SELECT string_agg(polname, ', ' ORDER BY polname) FROM pg_policy WHERE polrelid = 'place'::regclass), '')
        || ' | ' || (SELECT relrowsecurity::text || ' ' || coalesce(relacl::text, '') || ' ' || relowner::regrole::text
                || ' ' || coalesce(reloptions::text, '') || ' ' || relreplident::text || ' ' || coalesce(obj_description(oid, 'pg_class'), '')
            FROM pg_class WHERE oid = 'place'::regclass)
        || ' | ' || coalesce((SELECT string_agg(attname || ' ' || attacl::text, ', ' ORDER BY attnum)
            FROM pg_attribute WHERE attrelid = 'place'::regclass AND attacl IS NOT NULL), '')
        || ' | ' || coalesce((SELECT string_agg(pubname, ', ' ORDER BY pubname)
            FROM pg_publication_rel JOIN pg_publication p ON p.oid = prpubid WHERE prrelid = 'place'::regclass), '')
        AS shape
        """

    /// Grants on the new table what `place` grants to others than its owner.
    static let copyPrivileges = """
        DO $$
        DECLARE g record;
        BEGIN
            FOR g IN SELECT a.privilege_type, a.grantee, a.is_grantable
                FROM pg_class c, aclexplode(c.relacl) a WHERE c.oid = 'place'::regclass AND a.grantee <> c.relowner
            LOOP
                EXECUTE format('GRANT %s ON place_load TO %s%s', g.privilege_type,
                    CASE WHEN g.grantee = 0 THEN 'PUBLIC' ELSE g.grantee::regrole::text END,
                    CASE WHEN g.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
            END LOOP;
        END
        $$
        """

    /// One index of `place`: its name, the statement that builds its twin on the new table, and the constraint
    /// it backs (the key), if any.
    struct Index: Sendable {
        var name: String
        var build: String
        var key: String?
    }

    /// The indexes of `place`, each with the statement that builds it on the new table; nil when one is not
    /// of a form this load rebuilds (an index backing a constraint other than the key).
    static func indexes(on session: Transaction) async throws -> [Index]? {
        let rows = try await session.rows("""
            SELECT ic.relname AS name, pg_get_indexdef(ix.indexrelid) AS definition, con.conname AS constraint_name,
                con.contype::text AS constraint_type
            FROM pg_index ix JOIN pg_class ic ON ic.oid = ix.indexrelid
            LEFT JOIN pg_constraint con ON con.conindid = ix.indexrelid AND con.conrelid = ix.indrelid
            WHERE ix.indrelid = 'place'::regclass
            ORDER BY ic.relname
            """)
        var indexes: [Index] = []
        for (number, row) in rows.enumerated() {
            let definition: String = try row.decode("definition")
            let constraint: String? = try row.decode("constraint_name"), type: String? = try row.decode("constraint_type")
            guard type == nil || type == "p", let using = definition.range(of: " USING ") else { return nil }
            let head: String
            if definition.hasPrefix("CREATE UNIQUE INDEX ") {
                head = "CREATE UNIQUE INDEX"
            } else if definition.hasPrefix("CREATE INDEX ") {
                head = "CREATE INDEX"
            } else {
                return nil
            }
            indexes.append(Index(
                name: try row.decode("name"), build: "\(head) \(table)_\(number) ON \(table)\(definition[using.lowerBound...])",
                key: constraint))
        }
        return indexes
    }

    /// Builds the indexes on two connections, each taking the next statement when it finishes one: with four
    /// builds, the longest (GiST) runs alone on one while the others follow each other on the second. Each
    /// build has 512 MiB of working memory, as in `BulkLoad`.
    static func build(_ indexes: [Index], on session: Transaction, store: PostGISStore) async throws {
        let queue = Queue(indexes.map(\.build))
        @Sendable func work(on session: Transaction) async throws {
            while let statement = queue.next() {
                try await session.execute("BEGIN")
                do {
                    try await session.execute("SET LOCAL maintenance_work_mem = '512MB'")
                    try await session.execute(PostgresQuery(unsafeSQL: statement))
                    try await session.execute("COMMIT")
                } catch {
                    try? await session.execute("ROLLBACK")
                    throw error
                }
            }
        }
        let logger = session.logger
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await work(on: session) }
            group.addTask { try await store.leased(maintenance: true) { try await work(on: Transaction(connection: $0, logger: logger)) } }
            try await group.waitForAll()
        }
    }

    /// Statements handed out one at a time to whichever connection asks first.
    private final class Queue: Sendable {
        private let statements: Mutex<ArraySlice<String>>
        init(_ statements: [String]) { self.statements = Mutex(statements[...]) }
        func next() -> String? { statements.withLock { $0.popFirst() } }
    }

    /// Puts the loaded table in `place`'s stead, in one transaction; false (and nothing changed) when `place`
    /// is no longer empty or its shape changed, or the swap could not keep that shape. The places' revision is
    /// raised first, as every write of places does, so that a concurrent upsert waits at the same row and never
    /// holds it while waiting for `place`.
    static func swap(_ indexes: [Index], expecting shapeBefore: String, on session: Transaction) async throws -> Bool {
        try await session.execute("BEGIN")
        do {
            try await session.execute("UPDATE data_revision SET revision = revision + 1 WHERE name = 'places'")
            try await session.execute("LOCK TABLE place IN ACCESS EXCLUSIVE MODE")
            guard let now = try await session.rows("SELECT NOT EXISTS (SELECT FROM place) AS empty, \(unescaped: shape)").first,
                try now.decode("empty", as: Bool.self), try now.decode("shape", as: String?.self) == shapeBefore
            else {
                try await session.execute("ROLLBACK")
                return false
            }
            try await session.execute(PostgresQuery(unsafeSQL: copyPrivileges))
            try await session.execute("DROP TABLE place")
            try await session.execute("ALTER TABLE \(unescaped: table) RENAME TO place")
            for (number, index) in indexes.enumerated() {
                let built = "\(table)_\(number)"
                if let key = index.key {
                    try await session.execute("ALTER TABLE place ADD CONSTRAINT \(unescaped: BulkLoad.quoted(key)) PRIMARY KEY USING INDEX \(unescaped: built)")
                } else {
                    try await session.execute("ALTER INDEX \(unescaped: built) RENAME TO \(unescaped: BulkLoad.quoted(index.name))")
                }
            }
            guard try await session.rows("SELECT \(unescaped: shape)").first?.decode("shape", as: String?.self) == shapeBefore else {
                try await session.execute("ROLLBACK")
                return false
            }
            try await session.execute("COMMIT")
            return true
        } catch let error as PSQLError where PostGISStore.unavailable(error) == nil {
            // Refused by the database (a view that depends on `place`, a table this role does not own): the
            // ordinary load will do.
            try? await session.execute("ROLLBACK")
            session.logger.info("loading places the ordinary way: the new table could not replace place", metadata: [
                "sqlstate": "\(error.sqlState ?? "")",
            ])
            return false
        } catch {
            try? await session.execute("ROLLBACK")
            throw error
        }
    }
}

extension PostGISStore {
    /// Loads a large batch into an empty `place` beside it (`SideLoad`); nil when the table is not empty or the
    /// load cannot keep its shape, and the caller loads the ordinary way.
    func sideLoad(_ places: [Place], progress: (@Sendable (Int, Int) -> Void)?) async throws -> UpsertSummary? {
        let logger = logger
        return try await leased(maintenance: true) { connection in
            let session = Transaction(connection: connection, logger: logger)
            let lock = "(\(LockSpace.placeLoad), hashtext(current_schema()))"
            try await session.execute(PostgresQuery(unsafeSQL: "SELECT pg_advisory_lock\(lock)"))
            let loaded: Bool
            do {
                loaded = try await self.loadBeside(places, on: session, progress: progress)
            } catch {
                try? await session.execute("DROP TABLE IF EXISTS \(unescaped: SideLoad.table)")
                try? await session.execute(PostgresQuery(unsafeSQL: "SELECT pg_advisory_unlock\(lock)"))
                throw error
            }
            // The lock is a session's: it must go whatever else fails, or every later side load would wait for it.
            if !loaded { try? await session.execute("DROP TABLE IF EXISTS \(unescaped: SideLoad.table)") }
            try await session.execute(PostgresQuery(unsafeSQL: "SELECT pg_advisory_unlock\(lock)"))
            return loaded ? UpsertSummary(inserted: places.count) : nil
        }
    }

    private func loadBeside(_ places: [Place], on session: Transaction, progress: (@Sendable (Int, Int) -> Void)?) async throws -> Bool {
        guard let before = try await session.rows("SELECT NOT EXISTS (SELECT FROM place) AS empty, \(unescaped: SideLoad.shape)").first,
            try before.decode("empty", as: Bool.self), let shape = try before.decode("shape", as: String?.self),
            let indexes = try await SideLoad.indexes(on: session)
        else { return false }
        // A table left by a load that died: nobody else loads now (the lock), so it is nobody's.
        try await session.execute("DROP TABLE IF EXISTS \(unescaped: SideLoad.table)")
        try await session.execute("CREATE TABLE \(unescaped: SideLoad.table) (LIKE place INCLUDING ALL EXCLUDING INDEXES)")
        try await Staging.copy(places, into: SideLoad.table, direct: true, on: session.connection, logger: session.logger, progress: progress)
        try await SideLoad.build(indexes, on: session, store: self)
        return try await SideLoad.swap(indexes, expecting: shape, on: session)
    }
}

extension PostGISStore {
    /// `place`'s shape as `SideLoad` compares it, and the table's identity: for tests of the side load.
    func placeTable() async throws -> (shape: String?, oid: Int64) {
        guard let row = try await rows("SELECT \(unescaped: SideLoad.shape), 'place'::regclass::oid::bigint AS oid").first else {
            throw StoreError.database("no answer about the place table")
        }
        return (try row.decode("shape"), try row.decode("oid"))
    }
}
