import Foundation
import Logging
import Testing
import VicinityCore
import PostgresNIO
@testable import VicinityPostGIS
import VicinitySQL

/// The PostgreSQL server the PostGIS cases run against: `VICINITY_TEST_POSTGRES_URL`, which `Scripts/test.sh`
/// sets after starting one with `Scripts/postgres.sh`. Without it those cases are left out and one skipped
/// test says how to run them.
enum TestPostGIS {
    static let url = ProcessInfo.processInfo.environment["VICINITY_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }

    static let howToRun = "no PostgreSQL for the PostGIS store contracts: run Scripts/test.sh, or Scripts/postgres.sh start and set VICINITY_TEST_POSTGRES_URL to the URL it prints"

    /// A configuration on a schema no other test uses.
    static func configuration(schema: String) throws -> PostGISConfiguration {
        guard let url else { throw StoreError.unavailable(howToRun) }
        var configuration = try PostGISConfiguration(url: url + (url.contains("?") ? "&" : "?") + "schema=\(schema)")
        // Tests run side by side, each with its own pools: four connections each stay under the server's cap.
        configuration.maximumConnections = 4
        // Fifty racers share those four connections on a machine that may be busy with other tests: the wait
        // for a connection is a guard against a dead server, not a timing under test here.
        configuration.connectionWait = .seconds(120)
        return configuration
    }

    /// Opens a store with `configuration` (on a schema of its own), runs `body`, then drops the schema and closes
    /// the store whether or not `body` threw.
    static func withStore(_ configuration: PostGISConfiguration, _ body: (PostGISStore) async throws -> Void) async throws {
        let store = try await PostGISStore.open(configuration, logger: Logger(label: "test"))
        do {
            try await body(store)
        } catch {
            try? await store.dropSchema()
            await store.close()
            throw error
        }
        try await store.dropSchema()
        await store.close()
    }

    static func freshSchemaName() -> String {
        "test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
    }
}

/// One test's schema on the test server, with two stores on it, each with its own pool: two processes, as
/// far as the database can tell. The schema is dropped when the test lets go of it.
final class PostGISSchema: Sendable {
    let name: String
    let store: PostGISStore
    let peer: PostGISStore

    /// `logger` for both stores, for a test that reads what they log.
    init(logger: Logger? = nil) async throws {
        name = TestPostGIS.freshSchemaName()
        let configuration = try TestPostGIS.configuration(schema: name)
        store = try await PostGISStore.open(configuration, logger: logger ?? Logger(label: "test"))
        do {
            peer = try await PostGISStore.open(configuration, logger: logger ?? Logger(label: "peer"))
        } catch {
            await store.close()
            throw error
        }
    }

    deinit {
        let store = store, peer = peer
        Task {
            await peer.close()
            try? await store.dropSchema()
            await store.close()
        }
    }
}

@Suite("PostGIS store")
struct PostGISStoreTests {
    @Test("the PostGIS contracts have a server to run against", .enabled(if: TestPostGIS.url != nil, Comment(rawValue: TestPostGIS.howToRun)))
    func serverAnswers() async throws {
        let schema = try await PostGISSchema()
        #expect(try await schema.store.serverVersion().hasPrefix("3."))
    }

    @Test("a statement past the statement timeout is ended by the server and told as the database unavailable, the session goes on, and a maintenance lease runs past it with the timeout back after",
          .enabled(if: TestPostGIS.url != nil, Comment(rawValue: TestPostGIS.howToRun)))
    func statementTimeout() async throws {
        let name = TestPostGIS.freshSchemaName()
        var configuration = try TestPostGIS.configuration(schema: name)
        configuration.statementTimeout = .milliseconds(200)
        configuration.maximumConnections = 1
        try await TestPostGIS.withStore(configuration) { store in
            // A second of sleep against a fifth of a second: far past it, however busy the server.
            await #expect(throws: StoreError.self) { try await store.execute("SELECT pg_sleep(1)") }
            do { try await store.execute("SELECT pg_sleep(1)") } catch StoreError.unavailable {} catch {
                Issue.record("a statement ended at its timeout is the database unavailable (503), not \(error)")
            }
            // One connection in the pool: the same session answers the next statement.
            let shown: String? = try await store.rows("SHOW statement_timeout").first?.decode("statement_timeout")
            #expect(shown == "200ms")
            try await store.leased(maintenance: true) { connection in
                _ = try await connection.query("SELECT pg_sleep(0.5)", logger: Logger(label: "test")).collect()
            }
            let after: String? = try await store.rows("SHOW statement_timeout").first?.decode("statement_timeout")
            #expect(after == "200ms", "the maintenance lease gave the session back as it found it")
        }
    }

    @Test("eight stores opening one new database at the same moment migrate it once",
          .enabled(if: TestPostGIS.url != nil, Comment(rawValue: TestPostGIS.howToRun)))
    func concurrentMigrationsApplyOnce() async throws {
        let name = TestPostGIS.freshSchemaName()
        let configuration = try TestPostGIS.configuration(schema: name)
        let stores = try await withThrowingTaskGroup(of: PostGISStore.self) { group in
            for _ in 0..<8 { group.addTask { try await PostGISStore.open(configuration, logger: Logger(label: "test")) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let applied = try await stores[0].migrationRecords()
        #expect(applied == Dictionary(uniqueKeysWithValues: Schema.migrations.map { ($0.name, 1) }))
        for store in stores.dropFirst() { await store.close() }
        try await stores[0].dropSchema()
        await stores[0].close()
    }

    @Test("a bulk load into an empty table, and one over it, leave the key and every index as the migrations made them",
          .enabled(if: TestPostGIS.url != nil, Comment(rawValue: TestPostGIS.howToRun)))
    func bulkLoadRestoresIndexes() async throws {
        let schema = try await PostGISSchema()
        let store = schema.store
        let made = try await store.definitions(of: "place")
        #expect(made.contains { $0.hasPrefix("place_pkey PRIMARY KEY (id)") }, "\(made)")
        #expect(made.filter { $0.hasPrefix("CREATE INDEX") || $0.hasPrefix("CREATE UNIQUE INDEX") }.count == 4, "key, location, category and name search: \(made)")
        let places = Array(Fixture.geonames.prefix(1500))
        #expect(try await store.upsert(places) == UpsertSummary(inserted: 1500))
        #expect(try await store.definitions(of: "place") == made)
        #expect(try await store.upsert(places) == UpsertSummary(unchanged: 1500))
        #expect(try await store.definitions(of: "place") == made)
        #expect(try await store.plannedUpsert(places) == UpsertSummary(unchanged: 1500))
        #expect(try await store.definitions(of: "place") == made)
    }

    @Test("a large load into an empty table puts a table of the same shape, privileges included, in its place",
          .enabled(if: TestPostGIS.url != nil, Comment(rawValue: TestPostGIS.howToRun)))
    func sideLoadKeepsTheShape() async throws {
        let schema = try await PostGISSchema()
        let store = schema.store
        try await store.execute("GRANT SELECT ON place TO PUBLIC")
        let before = try await store.placeTable()
        #expect(before.shape?.contains("=r/") == true, "the grant shows in the shape: \(before.shape ?? "")")
        let places = Array(Fixture.geonames.prefix(1500))
        #expect(try await store.upsert(places) == UpsertSummary(inserted: 1500))
        let after = try await store.placeTable()
        #expect(after.oid != before.oid, "loaded beside the table")
        #expect(after.shape == before.shape)
        #expect(try await store.count() == 1500)
        #expect(try await store.place(id: places[700].id) == places[700])
        #expect(try await store.revision() == 1)
        #expect(try await store.upsert(places) == UpsertSummary(unchanged: 1500))
    }

    @Test("a view on the place table makes a large load go the ordinary way, with the same result",
          .enabled(if: TestPostGIS.url != nil, Comment(rawValue: TestPostGIS.howToRun)))
    func sideLoadGivesWayToDependents() async throws {
        let schema = try await PostGISSchema()
        let store = schema.store
        try await store.execute("CREATE VIEW place_names AS SELECT id, name FROM place")
        let before = try await store.placeTable()
        let places = Array(Fixture.geonames.prefix(1500))
        #expect(try await store.upsert(places) == UpsertSummary(inserted: 1500))
        let after = try await store.placeTable()
        #expect(after.oid == before.oid)
        #expect(after.shape == before.shape)
        let named: Int64? = try await store.rows("SELECT count(*) AS count FROM place_names").first?.decode("count")
        #expect(named == 1500)
        #expect(try await store.revision() == 1)
    }

    @Test("a URL gives host, port, user, database, TLS mode and schema; its password never shows")
    func urls() throws {
        let configuration = try PostGISConfiguration(
            url: "postgres://ana:secret@db.example.org:6543/vicinity?sslmode=require&schema=campus_a", environment: [:])
        #expect(configuration.host == "db.example.org")
        #expect(configuration.port == 6543)
        #expect(configuration.username == "ana")
        #expect(configuration.database == "vicinity")
        #expect(configuration.tls == .require)
        #expect(configuration.schema == "campus_a")
        #expect(configuration.password == "secret")
        #expect(configuration.location == "postgres://ana@db.example.org:6543/vicinity?sslmode=require&schema=campus_a")
        #expect(!"\(configuration)".contains("secret"))
        let plain = try PostGISConfiguration(url: "postgresql://ana@localhost/vicinity", environment: ["PGPASSWORD": "from-env"])
        #expect(plain.port == 5432 && plain.password == "from-env" && plain.tls == .prefer)
        for bad in ["postgres://localhost/vicinity", "postgres://ana@/vicinity", "postgres://ana@localhost/",
                    "postgres://ana@localhost/v?sslmode=maybe", "postgres://ana@localhost/v?schema=Robert';--",
                    "postgres://ana@localhost/v?colour=blue", "mysql://ana@localhost/v"] {
            #expect(throws: PostGISConfiguration.Problem.self, "\(bad)") { try PostGISConfiguration(url: bad, environment: [:]) }
        }
    }

    @Test("a URL sets the connect timeout and keep-alive in libpq's words and the statement timeout in PostgreSQL's; each shows in the location, and the defaults are 5 s, none and 30 s")
    func timeouts() throws {
        let standard = try PostGISConfiguration(url: "postgres://ana@localhost/vicinity", environment: [:])
        #expect(standard.connectTimeout == .seconds(5))
        #expect(standard.statementTimeout == nil)
        #expect(standard.answerDeadline == nil, "no statement timeout: statements run as long as they need")
        #expect(standard.keepAliveIdle == .seconds(30))
        #expect(standard.client.options.connectTimeout == .seconds(5))
        #expect(standard.client.options.keepAliveBehavior?.frequency == .seconds(30))
        #expect(!standard.client.options.additionalStartupParameters.contains { $0.0 == "statement_timeout" })

        let tuned = try PostGISConfiguration(
            url: "postgres://ana@localhost/vicinity?connect_timeout=3&statement_timeout=2s&keepalives_idle=10", environment: [:])
        #expect(tuned.connectTimeout == .seconds(3))
        #expect(tuned.statementTimeout == .seconds(2))
        #expect(tuned.answerDeadline == .seconds(5), "the statement timeout, and a connect timeout's worth for the answer")
        #expect(tuned.keepAliveIdle == .seconds(10))
        #expect(tuned.client.options.additionalStartupParameters.contains { $0 == ("statement_timeout", "2000") })
        #expect(tuned.location == "postgres://ana@localhost:5432/vicinity?connect_timeout=3&statement_timeout=2000ms&keepalives_idle=10")
        #expect(try PostGISConfiguration(url: tuned.location, environment: [:]).statementTimeout == .seconds(2), "the location reads back")

        for (text, duration) in [("250", Duration.milliseconds(250)), ("250ms", .milliseconds(250)), ("1min", .seconds(60)), ("0", .zero)] {
            let parsed = try PostGISConfiguration(url: "postgres://ana@localhost/v?statement_timeout=\(text)", environment: [:])
            #expect(parsed.statementTimeout == duration, "\(text)")
        }
        #expect(try PostGISConfiguration(url: "postgres://ana@localhost/v?statement_timeout=0", environment: [:]).answerDeadline == nil)
        let quiet = try PostGISConfiguration(url: "postgres://ana@localhost/v?keepalives=0", environment: [:])
        #expect(quiet.keepAliveIdle == nil && quiet.client.options.keepAliveBehavior == nil)
        #expect(quiet.location.hasSuffix("?keepalives=0"))
        for bad in ["connect_timeout=0", "connect_timeout=soon", "statement_timeout=5x", "statement_timeout=-1",
                    "statement_timeout=", "keepalives_idle=0", "keepalives=2", "connect_timeout=99999"] {
            #expect(throws: PostGISConfiguration.Problem.self, "\(bad)") {
                try PostGISConfiguration(url: "postgres://ana@localhost/v?\(bad)", environment: [:])
            }
        }
    }

    @Test("a URL sets when statements run prepared in psycopg's words, 5 runs unless it says otherwise or none; it shows in the location and reads back")
    func prepareThreshold() throws {
        #expect(try PostGISConfiguration(url: "postgres://ana@localhost/v", environment: [:]).prepareThreshold == 5)
        for (text, runs) in [("0", Optional(0)), ("1", 1), ("20", 20), ("none", nil)] {
            let parsed = try PostGISConfiguration(url: "postgres://ana@localhost/v?prepare_threshold=\(text)", environment: [:])
            #expect(parsed.prepareThreshold == runs, "\(text)")
            #expect(parsed.location.hasSuffix("?prepare_threshold=\(text)"))
            #expect(try PostGISConfiguration(url: parsed.location, environment: [:]).prepareThreshold == runs)
        }
        for bad in ["prepare_threshold=-1", "prepare_threshold=soon", "prepare_threshold=1001", "prepare_threshold="] {
            #expect(throws: PostGISConfiguration.Problem.self, "\(bad)") {
                try PostGISConfiguration(url: "postgres://ana@localhost/v?\(bad)", environment: [:])
            }
        }
    }

    @Test("a password file gives the password of the first line that matches, with * and escapes as libpq reads them")
    func passwordFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("pgpass-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try """
            # comment
            other.example.org:5432:*:ana:wrong
            db.example.org:*:vicinity:ana:pa\\:ss\\\\word
            *:*:*:*:fallback
            """.write(toFile: path, atomically: true, encoding: .utf8)
        let matched = try PostGISConfiguration(url: "postgres://ana@db.example.org:6543/vicinity", environment: ["PGPASSFILE": path])
        #expect(matched.password == "pa:ss\\word")
        let fallback = try PostGISConfiguration(url: "postgres://bo@elsewhere/vicinity", environment: ["PGPASSFILE": path])
        #expect(fallback.password == "fallback")
        let environmentFirst = try PostGISConfiguration(
            url: "postgres://ana@db.example.org/vicinity", environment: ["PGPASSFILE": path, "PGPASSWORD": "env"])
        #expect(environmentFirst.password == "env")
    }
}
