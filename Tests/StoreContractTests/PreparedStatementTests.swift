import Foundation
import Logging
import PostgresNIO
import Testing
import VicinityCore
@testable import VicinityPostGIS
import VicinitySQL

@Suite("Prepared statements")
struct PreparedStatementTests {
    private static func shape(_ text: String, _ types: [PostgresDataType] = [.text]) -> PreparedStatements.Shape {
        PreparedStatements.Shape(text: text, types: types)
    }

    @Test("a shape gets a name at its threshold'th run and keeps it; other shapes get names of their own")
    func namesAtTheThreshold() {
        let prepared = PreparedStatements(threshold: 3, capacity: 10)
        let first = Self.shape("SELECT 1"), second = Self.shape("SELECT 2")
        #expect(prepared.name(for: first) == nil)
        #expect(prepared.name(for: second) == nil)
        #expect(prepared.name(for: first) == nil)
        let named = prepared.name(for: first)
        #expect(named != nil)
        #expect(prepared.name(for: first) == named, "the name holds")
        #expect(prepared.name(for: second) == nil)
        let other = prepared.name(for: second)
        #expect(other != nil && other != named)
        #expect(prepared.named == 2)
    }

    @Test("the same text with other argument types, a null among them, is another shape")
    func typesAreTheShape() throws {
        let prepared = PreparedStatements(threshold: 1, capacity: 10)
        let text = "SELECT coalesce($1, 0) + 1 AS n"
        let null = try BoundStatement(SQLStatement(text: text, arguments: [.value(.null)], returns: ["n"]))
        let value = try BoundStatement(SQLStatement(text: text, arguments: [.value(.integer(41))], returns: ["n"]))
        #expect(null.shape != value.shape)
        #expect(null.shape.types == [.null] && value.shape.types == [.int8])
        #expect(prepared.name(for: null.shape) != prepared.name(for: value.shape))
    }

    @Test("no more shapes get names than the capacity; those named keep theirs")
    func capacityHolds() {
        let prepared = PreparedStatements(threshold: 1, capacity: 3)
        let names = (0..<10).map { prepared.name(for: Self.shape("SELECT \($0)")) }
        #expect(names.prefix(3).allSatisfy { $0 != nil })
        #expect(names.dropFirst(3).allSatisfy { $0 == nil })
        #expect(Set(names.compactMap { $0 }).count == 3)
        #expect(prepared.name(for: Self.shape("SELECT 1")) == names[1])
        #expect(prepared.named == 3)
    }

    @Test("runs are counted in a bounded table: a shape seen once before the table filled starts again")
    func sightingsAreBounded() {
        let prepared = PreparedStatements(threshold: 2, capacity: 2)
        let early = Self.shape("SELECT 'early'")
        #expect(prepared.name(for: early) == nil)
        // Four times the capacity of other shapes, each run once, fill the table, which the next one clears.
        for index in 0..<8 { #expect(prepared.name(for: Self.shape("SELECT \(index)")) == nil) }
        #expect(prepared.name(for: early) == nil, "its first run was forgotten with the table")
        #expect(prepared.name(for: early) != nil)
    }
}

@Suite("Prepared statements on PostgreSQL")
struct PostgresPreparedStatementTests {
    /// A configuration over a schema of its own with one connection, so that every statement runs in one session.
    private static func configuration(threshold: Int?) throws -> PostGISConfiguration {
        var configuration = try TestPostGIS.configuration(schema: TestPostGIS.freshSchemaName())
        configuration.maximumConnections = 1
        configuration.prepareThreshold = threshold
        return configuration
    }

    /// The statements prepared in the session, by name.
    private static func prepared(in store: PostGISStore) async throws -> [String: String] {
        let rows = try await store.rows("SELECT name, statement FROM pg_prepared_statements")
        return Dictionary(uniqueKeysWithValues: try rows.map { (try $0.decode("name", as: String.self), try $0.decode("statement", as: String.self)) })
    }

    private static func withStore(threshold: Int?, _ body: (PostGISStore) async throws -> Void) async throws {
        try await TestPostGIS.withStore(try configuration(threshold: threshold), body)
    }

    @Test("a plan's statement runs unnamed for its first four runs and prepared from the fifth, with the same answers",
          .enabled(if: TestPostGIS.url != nil, Comment(rawValue: TestPostGIS.howToRun)))
    func preparedFromTheFifthRun() async throws {
        try await Self.withStore(threshold: PreparedStatements.defaultThreshold) { store in
            let account = try account("pim")
            try await store.createAccount(account, passwordHash: someHash)
            for run in 1...7 {
                #expect(try await store.account(id: account.id) == account, "run \(run)")
                let named = try await Self.prepared(in: store).filter { $0.value.contains("FROM account") }
                #expect(named.count == (run < 5 ? 0 : 1), "run \(run): \(named)")
                #expect(named.keys.allSatisfy { $0.hasPrefix("vicinity_") })
            }
        }
    }

    @Test("prepare_threshold=none runs every statement unnamed",
          .enabled(if: TestPostGIS.url != nil, Comment(rawValue: TestPostGIS.howToRun)))
    func noneRunsUnnamed() async throws {
        try await Self.withStore(threshold: nil) { store in
            let account = try account("pim")
            try await store.createAccount(account, passwordHash: someHash)
            for _ in 1...10 { #expect(try await store.account(id: account.id) == account) }
            #expect(try await Self.prepared(in: store).isEmpty)
        }
    }

    @Test("a statement whose argument is null, then a value, runs as two prepared statements, each answering right",
          .enabled(if: TestPostGIS.url != nil, Comment(rawValue: TestPostGIS.howToRun)))
    func nullThenValue() async throws {
        try await Self.withStore(threshold: 1) { store in
            // Left to the server, a null's parameter is an int4 here; the value is bound as an int8, which an int4
            // parameter would refuse.
            let text = "SELECT coalesce($1, 0) + 1 AS n"
            for (argument, answer) in [(SQLValue.null, 1), (.integer(41), 42), (.null, 1), (.integer(6_000_000_000), 6_000_000_001)] {
                let rows = try await store.leased { connection in
                    try await PostgresPlans.fetch(
                        SQLStatement(text: text, arguments: [.value(argument)], returns: ["n"]),
                        on: Transaction(connection: connection, logger: Logger(label: "test"), prepared: store.preparedStatements))
                }
                #expect(try rows.first?.whole("n") == answer, "\(argument)")
            }
            #expect(try await Self.prepared(in: store).values.filter { $0 == text }.count == 2)
        }
    }

    @Test("sets of one shape run as one prepared statement whatever their number, each writing its values as given, quotes, backslashes, non-Latin text and nulls included",
          .enabled(if: TestPostGIS.url != nil, Comment(rawValue: TestPostGIS.howToRun)))
    func setsOfAnyNumberAreOneStatement() async throws {
        try await Self.withStore(threshold: PreparedStatements.defaultThreshold) { store in
            let names = ["Pim", #"O'Neil "Q" \ back\"#, "สมชาย", "Zoë 🙂", #"{"g1":1}"#, "Ann", "Bo"]
            var people: [Account] = []
            for index in names.indices {
                let person = try account("person\(index)")
                try await store.createAccount(person, passwordHash: someHash)
                people.append(person)
            }
            for count in 1...names.count {
                let given = (0..<count).map { (id: people[$0].id.rawValue, name: names[($0 + count) % names.count], mail: $0 % 2 == 0 ? nil : "p\($0)@example.org") }
                let sets = given.map { person in
                    SQLSet(
                        [("first_name", .text(person.name)), ("pending_email", person.mail.map(SQLValue.text) ?? .null), ("privacy_mode", .bool(count % 2 == 0))],
                        where: .equals("id", .text(person.id)))
                }
                let changed = try await store.run(
                    .finish([.setEach(StoredAccount.table, sets, returning: "id")]) { try $0.flatMap(\.rows).map { try $0.text("id") } },
                    access: .write)
                #expect(Set(changed) == Set(given.map(\.id)), "\(count) sets")
                let rows = try await store.rows("SELECT id, first_name, pending_email, privacy_mode FROM account")
                let stored = Dictionary(uniqueKeysWithValues: try rows.map {
                    (try $0.decode("id", as: String.self),
                     (try $0.decode("first_name", as: String.self), try $0.decode("pending_email", as: String?.self), try $0.decode("privacy_mode", as: Bool.self)))
                })
                for person in given {
                    #expect(stored[person.id]?.0 == person.name && stored[person.id]?.1 == person.mail && stored[person.id]?.2 == (count % 2 == 0), "\(count) sets: \(person)")
                }
            }
            let named = try await Self.prepared(in: store).values.filter { $0.contains("UPDATE account") }
            #expect(named.count == 1, "\(named)")
        }
    }

    @Test("events appended in groups of any size take ascending numbers in the order given, through one prepared statement",
          .enabled(if: TestPostGIS.url != nil, Comment(rawValue: TestPostGIS.howToRun)))
    func eventGroupsAreOneStatement() async throws {
        try await Self.withStore(threshold: PreparedStatements.defaultThreshold) { store in
            let ana = try account("ana"), ben = try account("ben")
            try await store.createAccount(ana, passwordHash: someHash)
            try await store.createAccount(ben, passwordHash: someHash)
            var numbered: [Event] = []
            for size in 1...7 {
                let drafts = try (0..<size).map { try poke(to: $0 % 2 == 0 ? ana.id : ben.id, number: 10 * size + $0, from: $0 % 2 == 0 ? ben : ana) }
                let events = try await store.appendEvents(drafts)
                #expect(events.map { EventDraft(recipient: $0.recipient, payload: $0.payload, createdAt: $0.createdAt) } == drafts, "\(size) events")
                #expect(events.map(\.id) == events.map(\.id).sorted() && Set(events.map(\.id)).count == size, "\(size) events")
                #expect(events.first.map { first in numbered.allSatisfy { $0.id < first.id } } ?? false, "after the earlier groups")
                numbered += events
            }
            let stored = try await store.events(ids: numbered.map(\.id))
            #expect(stored == numbered)
            let named = try await Self.prepared(in: store).values.filter { $0.contains("INSERT INTO event") }
            #expect(named.count == 1, "\(named)")
        }
    }

    @Test("the errors that may have failed a preparation for a passing reason are told from those of the statement or its data")
    func passingFailures() {
        for state in ["25P02", "40P01", "40001", "55P03", "57014", "57P01", "53300", "08006"] {
            #expect(Transaction.mayHaveFailedPreparation(state), "\(state)")
        }
        for state in ["22P03", "22003", "23505", "23503", "P0001", "42601", "42P01"] {
            #expect(!Transaction.mayHaveFailedPreparation(state), "\(state)")
        }
    }

    @Test("a preparation that waits past the statement timeout for a table another session locked fails that request only: the connection goes, and the statement runs once the lock is gone",
          .enabled(if: TestPostGIS.url != nil, Comment(rawValue: TestPostGIS.howToRun)))
    func preparationBehindALock() async throws {
        var configuration = try Self.configuration(threshold: 1)
        configuration.statementTimeout = .milliseconds(200)
        var holding = configuration
        holding.statementTimeout = nil
        try await TestPostGIS.withStore(configuration) { store in
            let holder = try await PostGISStore.open(holding, logger: Logger(label: "holder"))
            do {
                let pim = try account("pim")
                try await store.createAccount(pim, passwordHash: someHash)
                try await holder.leased { connection in
                    _ = try await connection.query("BEGIN", logger: Logger(label: "holder")).collect()
                    _ = try await connection.query("LOCK TABLE account IN ACCESS EXCLUSIVE MODE", logger: Logger(label: "holder")).collect()
                    do {
                        _ = try await store.account(id: pim.id)
                        Issue.record("the read waited past its timeout behind the lock, yet answered")
                    } catch StoreError.unavailable {}
                    _ = try await connection.query("ROLLBACK", logger: Logger(label: "holder")).collect()
                }
                for _ in 1...3 { #expect(try await store.account(id: pim.id) == pim) }
            } catch {
                await holder.close()
                throw error
            }
            await holder.close()
        }
    }

    @Test("a statement first prepared inside a transaction that already failed closes its connection, and the next statement gets a new one",
          .enabled(if: TestPostGIS.url != nil, Comment(rawValue: TestPostGIS.howToRun)))
    func failedTransactionClosesTheConnection() async throws {
        try await Self.withStore(threshold: 1) { store in
            let before: Int32? = try await store.rows("SELECT pg_backend_pid() AS pid").first?.decode("pid")
            let prepared = PreparedStatements(threshold: 1)
            await #expect(throws: StoreError.self) {
                try await store.leased { connection in
                    let transaction = Transaction(connection: connection, logger: Logger(label: "test"), prepared: prepared)
                    try await transaction.execute("BEGIN")
                    _ = try? await transaction.execute("SELECT 1 / 0")
                    _ = try await transaction.rows(BoundStatement(SQLStatement(text: "SELECT $1::int8 AS n", arguments: [.value(.integer(1))], returns: ["n"])))
                }
            }
            let after: Int32? = try await store.rows("SELECT pg_backend_pid() AS pid").first?.decode("pid")
            #expect(before != nil && after != nil && before != after, "a new session")
            #expect(try await Self.prepared(in: store).isEmpty)
        }
    }
}
