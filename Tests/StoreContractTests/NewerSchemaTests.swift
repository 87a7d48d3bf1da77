import GRDB
import Logging
import PostgresNIO
import Testing
import VicinityCore
@testable import VicinityPostGIS
import VicinitySpatiaLite

/// A database that a newer version of the service migrated is refused by an older one, on either store, before
/// the older one reads or migrates anything: downgrading means restoring the backup taken before the upgrade.
@Suite("A database a newer version migrated")
struct NewerSchemaTests {
    static let future = "v99 from the future"

    @Test("SpatiaLite refuses a file that records a migration this version does not know, naming it, and migrates nothing")
    func spatiaLiteRefusesNewer() throws {
        let file = TemporaryFile()
        try SpatiaLiteStore(path: file.path, logger: Logger(label: "test")).close()
        let queue = try DatabaseQueue(path: file.path)
        try queue.write { db in
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES (?)", arguments: [Self.future])
            // A migration of this version not yet applied: the refusal must come before any is.
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = (SELECT max(identifier) FROM grdb_migrations WHERE identifier <> ?)", arguments: [Self.future])
        }
        let before = try queue.read { db in try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier") }
        try queue.close()

        #expect {
            try SpatiaLiteStore(path: file.path, logger: Logger(label: "test")).close()
        } throws: { error in
            "\(error)".contains("migrated by a newer Vicinity") && "\(error)".contains(Self.future)
        }
        let after = try DatabaseQueue(path: file.path).read { db in
            try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier")
        }
        #expect(after == before)
    }

    @Test("PostGIS refuses a schema that records a migration this version does not know, naming it, and migrates nothing",
          .enabled(if: TestPostGIS.url != nil, Comment(rawValue: TestPostGIS.howToRun)))
    func postGISRefusesNewer() async throws {
        let schema = try await PostGISSchema()
        let last = try #require(Schema.migrations.last?.name)
        try await schema.store.execute("INSERT INTO vicinity_migration (name) VALUES (\(Self.future))")
        try await schema.store.execute("DELETE FROM vicinity_migration WHERE name = \(last)")
        let names = { @Sendable in
            try await schema.store.rows("SELECT name FROM vicinity_migration ORDER BY name").map { try $0.decode("name", as: String.self) }
        }
        let before = try await names()

        await #expect {
            let store = try await PostGISStore.open(try TestPostGIS.configuration(schema: schema.name), logger: Logger(label: "test"))
            await store.close()
        } throws: { error in
            "\(error)".contains("migrated by a newer Vicinity") && "\(error)".contains(Self.future)
        }
        #expect(try await names() == before)
    }
}
