import Foundation
import GeoCore
import Logging
import NIOCore
import PostgresNIO
import Synchronization
import VicinityCore
import VicinitySQL
import _ConnectionPoolModule

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
    /// Wakes this process's readers of the change feed (`ChangeFeed`).
    let changeSignal = ChangeSignal()
    public let positionWrites = GroupCommit.moves()
    let changeNotices = NoticeRequests()
    /// When this process last removed guessing states that hold nothing any more.
    let guessingPruning = Pruning(every: .seconds(60))
    let windowPruning = Pruning(every: .seconds(60))
    /// The connection listening for other processes' notices, from the first wait on.
    let changeListener: Mutex<Task<Void, Never>?> = Mutex(nil)
    /// The statements of the shared plans that run prepared (`PreparedStatements`); nil for none.
    let preparedStatements: PreparedStatements?

    private init(configuration: PostGISConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        preparedStatements = configuration.prepareThreshold.map { PreparedStatements(threshold: $0) }
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
        if let listener = changeListener.withLock({ listener in defer { listener = nil }; return listener }) {
            listener.cancel()
            await listener.value
        }
        task.cancel()
        await task.value
    }

    /// Whether `close` has begun.
    var isClosed: Bool { running.withLock { $0 == nil } }

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
    public var isRemote: Bool { true }

    // MARK: - Running statements

    /// The rows of one statement, collected, each read by column name.
    func rows(_ query: PostgresQuery, constraints: [String: any Error] = [:]) async throws -> [Columns] {
        let logger = logger
        return try await leased(constraints: constraints) { connection in
            try await Transaction(connection: connection, logger: logger).rows(query)
        }
    }

    /// Runs a statement for its effect; a violation of a constraint named in `constraints` throws the error
    /// given for it.
    func execute(_ query: PostgresQuery, constraints: [String: any Error] = [:]) async throws {
        _ = try await rows(query, constraints: constraints)
    }

    /// Runs `body` in one transaction on one connection, committed when it returns and rolled back when it
    /// throws, or always when `rollback` is set (a plan that changes nothing). A serialization failure or a
    /// deadlock, which PostgreSQL resolves by failing one party, runs the whole body again.
    func transaction<Result: Sendable>(
        rollback: Bool = false, readOnlySnapshot: Bool = false, maintenance: Bool = false,
        _ body: @escaping @Sendable (Transaction) async throws -> Result
    ) async throws -> Result {
        let logger = logger, prepared = maintenance ? nil : preparedStatements
        var attempt = 1
        while true {
            do {
                return try await leased(maintenance: maintenance) { connection in
                    let transaction = Transaction(connection: connection, logger: logger, prepared: prepared)
                    // A snapshot: every statement reads the database as of the first one.
                    try await transaction.execute(readOnlySnapshot ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN")
                    do {
                        let result = try await body(transaction)
                        try await transaction.execute(rollback ? "ROLLBACK" : "COMMIT")
                        return result
                    } catch {
                        try? await transaction.execute("ROLLBACK")
                        throw error
                    }
                }
            } catch let conflict as Conflict where attempt < Self.attempts {
                attempt += 1
                logger.debug("transaction retried", metadata: ["attempt": "\(attempt)", "sqlstate": "\(conflict.sqlState)"])
            } catch let conflict as Conflict {
                throw StoreError.database("PostgreSQL \(conflict.sqlState) \(Self.attempts) times in a row: \(conflict.message)")
            }
        }
    }

    /// Runs `body` with a connection of the pool; whichever comes first ends the wait: `body`'s end, no
    /// connection within `connectionWait` (the pool itself would wait for ever while the server is down), or
    /// the connection closing under `body` without `body` ending. The last one needs a watch of its own:
    /// postgres-nio writes a statement to its channel without a promise, so a statement sent on a connection
    /// that closed a moment before is never answered and never fails. Such a statement is abandoned (its
    /// task and lease with it) and the caller told the database is unavailable, instead of waiting for ever.
    ///
    /// A statement that goes unanswered past `answerDeadline` (`StatementClock`) closes its connection and tells
    /// the caller the database is unavailable: the server would have ended it at its statement timeout and said
    /// so, so a silence that long is a network gone, not a slow statement.
    ///
    /// A `maintenance` lease (migrations, loads and index builds, reads of whole tables) runs without the
    /// statement timeout, which it turns off for its session and back on after, and without the watch on
    /// answers: its statements may take minutes.
    func leased<Value: Sendable>(
        constraints: [String: any Error] = [:], maintenance: Bool = false,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Value
    ) async throws -> Value {
        let client = client, wait = configuration.connectionWait, logger = logger
        let timeout = configuration.statementTimeout
        let answerDeadline = maintenance ? nil : configuration.answerDeadline
        let clock = StatementClock()
        let call = LeasedCall<Value>()
        return try await translatingErrors(constraints: constraints) {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    call.begin(continuation)
                    let work = Task {
                        do {
                            let value = try await client.withConnection { connection in
                                // Too late when the caller was already told the database is unavailable: a
                                // write made now would commit behind an answer that said it did not.
                                guard call.connected(connection) else { throw StoreError.unavailable("the connection came too late") }
                                // The pool may hand over a connection whose close it has not yet seen.
                                if connection.isClosed { throw StoreError.unavailable("the PostgreSQL connection was closed") }
                                guard maintenance, timeout != nil else {
                                    return try await StatementClock.$current.withValue(answerDeadline == nil ? nil : clock) {
                                        try await body(connection)
                                    }
                                }
                                return try await Self.withoutStatementTimeout(on: connection, logger: logger) {
                                    try await body(connection)
                                }
                            }
                            call.finish(.success(value))
                        } catch {
                            call.finish(.failure(error))
                        }
                    }
                    call.watch(work: work, Task {
                        let deadline = ContinuousClock.now + wait
                        while true {
                            if let connection = call.connection {
                                if let answerDeadline, let since = clock.since, ContinuousClock.now - since >= answerDeadline {
                                    Self.close(connection)
                                    if call.finish(.failure(StoreError.unavailable("no answer from PostgreSQL within \(answerDeadline)"))) {
                                        logger.debug("closed a PostgreSQL connection whose statement went unanswered")
                                    }
                                    work.cancel()
                                    return
                                }
                                if connection.isClosed {
                                    try await Task.sleep(for: LeasedCall<Value>.grace)
                                    if call.finish(.failure(StoreError.unavailable("the PostgreSQL connection closed under a statement"))) {
                                        logger.warning("abandoned a statement whose PostgreSQL connection closed without answering it")
                                    }
                                    return
                                }
                                var next = ContinuousClock.now + LeasedCall<Value>.closedCheck
                                if let answerDeadline, let since = clock.since { next = min(next, since + answerDeadline) }
                                try await Task.sleep(until: next)
                            } else if ContinuousClock.now >= deadline {
                                call.finish(.failure(StoreError.unavailable("no PostgreSQL connection within \(wait)")))
                                work.cancel()
                                return
                            } else {
                                try await Task.sleep(until: min(deadline, ContinuousClock.now + LeasedCall<Value>.closedCheck))
                            }
                        }
                    })
                }
            } onCancel: {
                call.cancel()
            }
        }
    }

    /// Runs `body` with the session's statement timeout off, and puts it back after (`RESET` returns to the
    /// start-up message's value); a connection whose setting could not be put back is closed, so that no later
    /// lease gets a session without the timeout.
    private static func withoutStatementTimeout<Value>(
        on connection: PostgresConnection, logger: Logger, _ body: () async throws -> Value
    ) async throws -> Value {
        _ = try await connection.query("SET statement_timeout = 0", logger: logger).collect()
        let value: Value
        do {
            value = try await body()
        } catch {
            if (try? await connection.query("RESET statement_timeout", logger: logger).collect()) == nil { close(connection) }
            throw error
        }
        do {
            _ = try await connection.query("RESET statement_timeout", logger: logger).collect()
        } catch {
            close(connection)
            throw error
        }
        return value
    }

    /// Closes the connection's channel; the pool sees it go and makes another when one is wanted.
    private static func close(_ connection: PostgresConnection) {
        (connection as any PooledConnection).close()
    }

    /// Five attempts: a retried transaction waits for the one it lost to, which has committed by then, so a
    /// second loss needs a third writer on the same rows; five is far past what the contract tests' 50-way
    /// races produce.
    private static let attempts = 5

    /// A serialization failure or a deadlock: the transaction that got it runs again.
    private struct Conflict: Error {
        var sqlState: String
        var message: String
    }

    /// Runs `body` and turns what postgres-nio throws into the store's own errors, so that nothing typed by
    /// postgres-nio leaves the module: a failure to reach the server is `StoreError.unavailable`, a
    /// serialization failure or deadlock a `Conflict` for `transaction` to retry, the pool's refusals
    /// `StoreError.unavailable` too, a violation of a constraint named in `constraints` the error given for
    /// it, and any other refusal `StoreError.database` with its SQLSTATE. (A value the domain cannot read is `StoreError.corrupt`, from `Columns.decode`.)
    func translatingErrors<Result>(
        constraints: [String: any Error] = [:], _ body: () async throws -> Result
    ) async throws -> Result {
        do {
            return try await body()
        } catch let error as PSQLError {
            if let unavailable = Self.unavailable(error) { throw unavailable }
            let state = error.sqlState ?? "", message = error.serverInfo?[.message] ?? "\(error.code)"
            if state == "40001" || state == "40P01" { throw Conflict(sqlState: state, message: message) }
            if let constraint = error.constraint, let mapped = constraints[constraint] { throw mapped }
            throw StoreError.database("PostgreSQL \(state): \(message)")
        } catch let error as ConnectionPoolError {
            // The pool gave up making connections for now (its circuit breaker), or is shutting down.
            throw StoreError.unavailable("PostgreSQL connection pool: \(error)")
        }
    }

    /// Connection failures, and the server's own "not now" answers (SQLSTATE classes 08 and 57P, 53300, too
    /// many connections, and 57014, a statement ended at its `statement_timeout`), as `StoreError.unavailable`:
    /// the client is told to come back, as for any database that cannot answer in time.
    static func unavailable(_ error: PSQLError) -> StoreError? {
        switch error.code {
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .poolClosed, .uncleanShutdown:
            return .unavailable("PostgreSQL connection: \(error.code)")
        case .server:
            let state = error.sqlState ?? ""
            guard state.hasPrefix("08") || state.hasPrefix("57P") || state == "53300" || state == "57014" else { return nil }
            return .unavailable("PostgreSQL \(state): \(error.serverInfo?[.message] ?? "")")
        default:
            return nil
        }
    }
}

/// One call of `leased`: the caller's continuation, resumed once by whichever of the work and its watch ends
/// first, and the connection the work got.
private final class LeasedCall<Value: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Value, any Error>?
        var connection: PostgresConnection?
        var work: Task<Void, Never>?
        var watch: Task<Void, any Error>?
        var finished = false
        var cancelled = false
    }

    /// How often the watch looks whether the connection closed: a statement stuck on a closed connection is
    /// given up within about this, and a quick statement never sees the watch wake.
    static var closedCheck: Duration { .seconds(1) }
    /// How long a statement whose connection closed may still take to fail by itself, before it is abandoned.
    static var grace: Duration { .seconds(1) }

    private let state = Mutex(State())

    var connection: PostgresConnection? { state.withLock { $0.connection } }

    func begin(_ continuation: CheckedContinuation<Value, any Error>) {
        state.withLock { $0.continuation = continuation }
    }

    /// Records the work's connection; false when the caller has already been answered, and the work must not
    /// go on.
    func connected(_ connection: PostgresConnection) -> Bool {
        state.withLock { state in
            guard !state.finished else { return false }
            state.connection = connection
            return true
        }
    }

    func watch(work: Task<Void, Never>, _ watch: Task<Void, any Error>) {
        let (finished, cancelled) = state.withLock { state in
            state.work = work
            state.watch = watch
            return (state.finished, state.cancelled)
        }
        if finished { watch.cancel() }
        if cancelled { work.cancel() }
    }

    /// Resumes the caller unless someone already did, and stops the watch; true when this call resumed it.
    @discardableResult
    func finish(_ result: Result<Value, any Error>) -> Bool {
        let (continuation, watch) = state.withLock { state in
            defer { state.continuation = nil; state.finished = true }
            return (state.continuation, state.watch)
        }
        watch?.cancel()
        guard let continuation else { return false }
        continuation.resume(with: result)
        return true
    }

    /// The caller was cancelled: the work is told, now or once it is known, and ends with its own error.
    func cancel() {
        state.withLock { state in
            state.cancelled = true
            return state.work
        }?.cancel()
    }
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
    /// Which statements run prepared; nil runs every one unnamed (migrations, loads).
    var prepared: PreparedStatements? = nil

    func rows(_ query: PostgresQuery) async throws -> [Columns] {
        let connection = connection, logger = logger
        return try await StatementClock.timing {
            try await connection.query(query, logger: logger).collect().map { Columns($0.makeRandomAccess()) }
        }
    }

    /// The rows of a statement, prepared when `prepared` names its shape.
    func rows(_ statement: BoundStatement) async throws -> [Columns] {
        guard let name = prepared?.name(for: statement.shape) else { return try await rows(statement.query) }
        let connection = connection, logger = logger
        do {
            return try await StatementClock.timing {
                try await NamedStatement.rows(statement, named: name, on: connection, logger: logger).map { Columns($0.makeRandomAccess()) }
            }
        } catch let error as PSQLError where error.sqlState.map(Self.mayHaveFailedPreparation) ?? false {
            // postgres-nio keeps a failed preparation's error for the connection's life, and answers every later
            // run of the name with it: a preparation that failed for a passing reason would fail that statement on
            // this connection for good. The connection goes instead, at the cost of one new connection.
            try? await connection.close()
            throw error
        }
    }

    /// Whether an error with this SQLSTATE may have come from preparing a statement for a passing reason: not a
    /// data exception, an integrity violation or a PL/pgSQL raise (classes 22, 23, P0: only running raises them),
    /// nor a syntax error or an unknown name (class 42: it would recur on any connection). What is left is the
    /// transaction's state (25P02, a transaction that already failed: the store sends nothing but ROLLBACK after
    /// a failure), a lock the parse waited for (40P01 deadlock, 55P03, 57014 statement timeout, while another
    /// front migrates or loads) and the server's resources or shutdown.
    static func mayHaveFailedPreparation(_ sqlState: String) -> Bool {
        !["22", "23", "P0", "42"].contains(String(sqlState.prefix(2)))
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
        do {
            return try row[column].decode(Value.self)
        } catch let error as PostgresDecodingError {
            throw StoreError.corrupt("column \(column) holds a \(error.postgresType) that is not \(error.targetType)")
        }
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
