import Foundation
import GeoCore
import Logging
import NIOCore
import PostgresNIO
import Synchronization
import VicinityCore

/// Places, campuses, accounts, positions, friendships, events and votes in a PostgreSQL database with
/// PostGIS: the record for deployments that outgrow one file on one machine, with several writers in several
/// processes at once.
///
/// Every protocol's guarantee under concurrency is kept by the database: row locks (`FOR UPDATE` on the vote a
/// ballot counts in), transaction-scoped advisory locks (one per friend pair, one per event recipient),
/// unique constraints as a backstop, and `SKIP LOCKED` claims. Candidates come from GiST indexes; GeoCore
/// measures and `Ranking` orders, as in every store, so the answers are SpatiaLite's to the last bit.
public final class PostGISStore: Sendable {
    public let configuration: PostGISConfiguration
    let client: PostgresClient
    let logger: Logger
    /// The pool's `run()`, from `open` until `close`.
    private let running: Mutex<Task<Void, Never>?> = Mutex(nil)

    private init(configuration: PostGISConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        client = PostgresClient(configuration: configuration.client, backgroundLogger: logger)
    }

    /// Starts the connection pool and brings the schema up to date. Every store opened must be closed.
    public static func open(_ configuration: PostGISConfiguration, logger: Logger) async throws -> PostGISStore {
        let store = PostGISStore(configuration: configuration, logger: logger)
        let client = store.client
        // The pool warns when asked for a connection before `run()` began: the first query waits for the run
        // task's start. The task reaches the pool's own start without suspending once it says it began.
        let (began, beginning) = AsyncStream<Void>.makeStream()
        store.running.withLock {
            $0 = Task {
                beginning.finish()
                await client.run()
            }
        }
        for await _ in began {}
        do {
            try await store.prepare()
        } catch {
            await store.close()
            throw error
        }
        return store
    }

    /// Closes every connection, waiting for the pool to stop. Later calls do nothing; work still waiting for a
    /// connection fails.
    public func close() async {
        guard let task = running.withLock({ task in defer { task = nil }; return task }) else { return }
        task.cancel()
        await task.value
    }

    /// Opens the store, runs `body` with it and closes it whether or not `body` throws: the pool runs for
    /// exactly the life of the work that uses it.
    public static func withStore<Result>(
        _ configuration: PostGISConfiguration, logger: Logger, _ body: (PostGISStore) async throws -> Result
    ) async throws -> Result {
        let store = try await open(configuration, logger: logger)
        do {
            let result = try await body(store)
            await store.close()
            return result
        } catch {
            await store.close()
            throw error
        }
    }

    /// Migrations under a lock held by one process at a time, then derived columns.
    private func prepare() async throws {
        try await Migrator(store: self).migrate()
        let version = try await serverVersion()
        logger.debug("opened PostGIS database", metadata: ["location": "\(configuration.location)", "postgis": "\(version)"])
    }

    /// PostGIS's version, as the extension reports it.
    public func serverVersion() async throws -> String {
        let rows = try await rows("SELECT postgis_lib_version() AS version")
        return try rows.first.map { try $0.decode("version", as: String.self) } ?? "unknown"
    }

    public var location: String { configuration.location }

    // MARK: - Running statements

    /// The rows of one statement, collected, each read by column name.
    func rows(_ query: PostgresQuery) async throws -> [Columns] {
        let logger = logger
        return try await leased { connection in
            try await connection.query(query, logger: logger).collect().map { Columns($0.makeRandomAccess()) }
        }
    }

    func execute(_ query: PostgresQuery) async throws {
        _ = try await rows(query)
    }

    /// Runs `body` in one transaction on one connection, committed when it returns and rolled back when it
    /// throws, or always when `rollback` is set (a plan that changes nothing). A serialization failure or a
    /// deadlock, which PostgreSQL resolves by failing one party, runs the whole body again.
    func transaction<Result: Sendable>(
        rollback: Bool = false, _ body: @escaping @Sendable (Transaction) async throws -> Result
    ) async throws -> Result {
        let logger = logger
        var attempt = 1
        while true {
            do {
                return try await leased { connection in
                    let transaction = Transaction(connection: connection, logger: logger)
                    try await transaction.execute("BEGIN")
                    do {
                        let result = try await body(transaction)
                        try await transaction.execute(rollback ? "ROLLBACK" : "COMMIT")
                        return result
                    } catch {
                        try? await transaction.execute("ROLLBACK")
                        throw error
                    }
                }
            } catch let error as PSQLError where Self.isRetryable(error) && attempt < Self.attempts {
                attempt += 1
                logger.debug("transaction retried", metadata: ["attempt": "\(attempt)", "sqlstate": "\(error.sqlState ?? "")"])
            }
        }
    }

    /// Runs `body` with a connection of the pool, giving up with `StoreError.unavailable` when none comes
    /// within `connectionWait`: the pool itself would wait for ever while the server is down, and a request
    /// should be answered 503 instead of hanging. Once `body` has its connection, it runs to its end.
    func leased<Result: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> Result) async throws -> Result {
        let client = client, wait = configuration.connectionWait
        let gotConnection = LeaseFlag()
        return try await translatingErrors {
            try await withThrowingTaskGroup(of: Result?.self) { group in
                group.addTask {
                    try await client.withConnection { connection in
                        gotConnection.value.store(true, ordering: .sequentiallyConsistent)
                        return try await body(connection)
                    }
                }
                group.addTask {
                    try await Task.sleep(for: wait)
                    guard gotConnection.value.load(ordering: .sequentiallyConsistent) else {
                        throw StoreError.unavailable("no PostgreSQL connection within \(wait)")
                    }
                    return nil
                }
                while let finished = try await group.next() {
                    if let result = finished {
                        group.cancelAll()
                        return result
                    }
                }
                throw CancellationError()
            }
        }
    }

    /// Five attempts: a retried transaction waits for the one it lost to, which has committed by then, so a
    /// second loss needs a third writer on the same rows; five is far past what the contract tests' 50-way
    /// races produce.
    private static let attempts = 5

    /// Serialization failure and deadlock detected.
    private static func isRetryable(_ error: PSQLError) -> Bool {
        error.sqlState == "40001" || error.sqlState == "40P01"
    }

    /// Runs `body`, turning a failure to reach the server into `StoreError.unavailable` and a value the
    /// domain cannot read into `StoreError.corrupt`; a server's refusal (a constraint, a deadlock) stays a
    /// `PSQLError` for the caller that expects it, and is a `StoreError.database` for one that does not.
    func translatingErrors<Result>(_ body: () async throws -> Result) async throws -> Result {
        do {
            return try await body()
        } catch let error as PSQLError {
            if let unavailable = Self.unavailable(error) { throw unavailable }
            throw error
        } catch let error as PostgresDecodingError {
            throw StoreError.corrupt("column \(error.columnName) holds a \(error.postgresType) that is not \(error.targetType)")
        }
    }

    /// Connection failures, and the server's own "not now" answers (SQLSTATE classes 08 and 57P, and 53300,
    /// too many connections), as `StoreError.unavailable`.
    static func unavailable(_ error: PSQLError) -> StoreError? {
        switch error.code {
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .poolClosed, .uncleanShutdown:
            return .unavailable("PostgreSQL connection: \(error.code)")
        case .server:
            let state = error.sqlState ?? ""
            guard state.hasPrefix("08") || state.hasPrefix("57P") || state == "53300" else { return nil }
            return .unavailable("PostgreSQL \(state): \(error.serverInfo?[.message] ?? "")")
        default:
            return nil
        }
    }
}

/// Whether a lease got its connection, shared by the lease and its timer.
private final class LeaseFlag: Sendable {
    let value = Atomic(false)
}

extension PSQLError {
    /// The server's SQLSTATE, when the server answered with an error.
    var sqlState: String? { serverInfo?[.sqlState] }
    /// The constraint a server error names, when it names one.
    var constraint: String? { serverInfo?[.constraintName] }
}

/// One connection inside `PostGISStore.transaction`: statements run in order on it.
struct Transaction: Sendable {
    let connection: PostgresConnection
    let logger: Logger

    func rows(_ query: PostgresQuery) async throws -> [Columns] {
        try await connection.query(query, logger: logger).collect().map { Columns($0.makeRandomAccess()) }
    }

    func execute(_ query: PostgresQuery) async throws {
        _ = try await rows(query)
    }
}

/// A row read by column name, never by position; a column the statement did not select is a `StoreError`,
/// not a crash.
struct Columns: Sendable {
    let row: PostgresRandomAccessRow

    init(_ row: PostgresRandomAccessRow) { self.row = row }

    func decode<Value: PostgresDecodable>(_ column: String, as type: Value.Type = Value.self) throws -> Value {
        guard row.contains(column) else { throw StoreError.database("the statement selected no column \(column)") }
        return try row[column].decode(Value.self)
    }

    /// A `bigint` of milliseconds as a `Timestamp`.
    func timestamp(_ column: String) throws -> Timestamp {
        Timestamp(millisecondsSince1970: try decode(column, as: Int64.self))
    }

    func optionalTimestamp(_ column: String) throws -> Timestamp? {
        try decode(column, as: Int64?.self).map(Timestamp.init(millisecondsSince1970:))
    }

    /// A `bytea` as bytes.
    func bytes(_ column: String) throws -> [UInt8]? {
        try decode(column, as: ByteBuffer?.self).map { Array($0.readableBytesView) }
    }
}
