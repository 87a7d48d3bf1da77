import Logging
import PostgresNIO
import Synchronization
import VicinityCore

/// Where a reader of the `change` table stands. Identity values are taken in call order, not commit order, so
/// a number cannot say "everything before me is read". A transaction id can, with a snapshot: every
/// transaction older than a snapshot's `xmin` has ended, so a read takes every visible change of a transaction
/// from `horizon` on, and remembers the transactions it took that are not yet older than the new horizon
/// (`taken`), since the next read sees those again.
public struct PostGISChangeCursor: Hashable, Sendable {
    /// Every transaction before it has ended, and its changes have been read.
    var horizon: Int64
    /// Transactions from `horizon` on whose changes have been read.
    var taken: Set<Int64>
    /// The prunings seen: a later one may have removed changes not yet read.
    var prunings: Int64
}

extension PostGISStore: ChangeFeed {
    /// The channel writers notify after committing changes, and readers listen on.
    static let changeChannel = "vicinity_change"

    public func changeCursor() async throws -> PostGISChangeCursor {
        // Everything visible now counts as read: the transactions from the horizon on that have committed.
        let rows = try await rows("""
            WITH snapshot AS (SELECT pg_current_snapshot() AS taken)
            SELECT pg_snapshot_xmin(taken)::text AS horizon, (SELECT generation FROM change_pruned) AS prunings,
                c.xid::text AS xid
            FROM snapshot LEFT JOIN change c ON c.xid >= pg_snapshot_xmin(taken) AND pg_visible_in_snapshot(c.xid, taken)
            """)
        guard let first = rows.first else { throw StoreError.database("no snapshot for a change cursor") }
        return PostGISChangeCursor(
            horizon: try Self.transaction(first, "horizon"),
            taken: Set(try rows.compactMap { try Self.optionalTransaction($0, "xid") }),
            prunings: try first.decode("prunings"))
    }

    public func changes(after cursor: PostGISChangeCursor) async throws -> ChangeRead<PostGISChangeCursor> {
        let rows = try await rows("""
            WITH snapshot AS (SELECT pg_current_snapshot() AS taken)
            SELECT pg_snapshot_xmin(taken)::text AS horizon, (SELECT through::text FROM change_pruned) AS pruned,
                (SELECT generation FROM change_pruned) AS prunings, c.xid::text AS xid, c.kind, c.key, c.event_id,
                c.alert_id, c.alert_inside, c.alert_told_at
            FROM snapshot LEFT JOIN change c ON c.xid >= \(String(cursor.horizon))::xid8 AND pg_visible_in_snapshot(c.xid, taken)
            ORDER BY c.id
            """)
        guard let first = rows.first else { throw StoreError.database("no snapshot for reading changes") }
        // A pruning since the cursor was taken that reached a transaction not older than its horizon may have
        // removed changes it has not read.
        let prunings: Int64 = try first.decode("prunings")
        if prunings != cursor.prunings, try Self.transaction(first, "pruned") >= cursor.horizon { return .expired }
        let horizon = try Self.transaction(first, "horizon")
        var taken = cursor.taken
        var changes: [Change] = []
        for row in rows {
            guard let xid = try Self.optionalTransaction(row, "xid") else { continue }
            if cursor.taken.contains(xid) { continue }
            taken.insert(xid)
            changes.append(try ChangeRow.change(row))
        }
        return .changes(changes, next: PostGISChangeCursor(horizon: horizon, taken: taken.filter { $0 >= horizon }, prunings: prunings))
    }

    public func waitForChanges(timeout: Duration) async throws {
        startListening()
        await changeSignal.wait(timeout: timeout)
    }

    /// Only changes of transactions older than every one still open: a transaction left open for longer than
    /// the retention holds every reader's horizon back, and pruning past it would tell them all to reload.
    public func pruneChanges(olderThan age: Duration) async throws -> Int {
        let rows = try await rows("""
            WITH gone AS (
                DELETE FROM change
                WHERE created_at < (extract(epoch FROM clock_timestamp()) * 1000)::bigint - \(age.wholeMilliseconds)
                    AND xid < pg_snapshot_xmin(pg_current_snapshot())
                RETURNING xid
            ),
            marked AS (
                UPDATE change_pruned SET through = greatest(through, (SELECT max(xid) FROM gone)), generation = generation + 1
                WHERE EXISTS (SELECT FROM gone) RETURNING 1
            )
            SELECT count(*) AS count FROM gone
            """)
        return try rows.first?.decode("count", as: Int.self) ?? 0
    }

    /// A transaction id, which PostgreSQL's `xid8` carries as 64 bits but postgres-nio reads only as text.
    private static func transaction(_ row: Columns, _ column: String) throws -> Int64 {
        guard let id = try optionalTransaction(row, column) else { throw StoreError.corrupt("no transaction id in \(column)") }
        return id
    }

    private static func optionalTransaction(_ row: Columns, _ column: String) throws -> Int64? {
        guard let text = try row.decode(column, as: String?.self) else { return nil }
        guard let id = Int64(text) else { throw StoreError.corrupt("\(column) holds \(text), not a transaction id") }
        return id
    }

    // MARK: - Notices

    /// Tells readers in this process at once, and those of other processes with `NOTIFY` after the commit:
    /// in the writing transaction it would hold PostgreSQL's notification lock through the commit, making
    /// every writer's commit wait for the one before. One notice is sent at a time; writes meanwhile are told by
    /// one more when it is done.
    func changesCommitted() {
        changeSignal.notify()
        guard changeNotices.request() else { return }
        Task {
            repeat {
                do {
                    try await execute("NOTIFY \(unescaped: Self.changeChannel)")
                } catch {
                    // Readers elsewhere read again within their wait's timeout anyway.
                    logger.debug("could not notify other processes of changes", metadata: ["error": "\(error)"])
                }
            } while changeNotices.sentShouldRepeat()
        }
    }

    /// Listens for other processes' notices on one connection of its own, from the first wait until the store
    /// closes, connecting again after a failure.
    private func startListening() {
        changeListener.withLock { listener in
            guard listener == nil, !isClosed else { return }
            let signal = changeSignal, logger = logger, client = client
            listener = Task {
                while !Task.isCancelled {
                    do {
                        try await client.withConnection { connection in
                            try await connection.listen(on: Self.changeChannel) { notices in
                                // Anything committed while not listening is read now.
                                signal.notify()
                                for try await _ in notices { signal.notify() }
                            }
                        }
                    } catch is CancellationError {
                        return
                    } catch {
                        if Task.isCancelled { return }
                        logger.info("listening for changes again after an error", metadata: ["error": "\(error)"])
                    }
                    signal.notify()
                    try? await Task.sleep(for: .seconds(1))
                }
            }
        }
    }
}

/// Whether a notice is being sent, and whether another is wanted after it.
final class NoticeRequests: Sendable {
    private let state = Mutex((sending: false, again: false))

    /// True when the caller must send one (none under way); otherwise the one under way will send again.
    func request() -> Bool {
        state.withLock { state in
            if state.sending {
                state.again = true
                return false
            }
            state.sending = true
            return true
        }
    }

    /// After a send: true when another was asked for meanwhile.
    func sentShouldRepeat() -> Bool {
        state.withLock { state in
            if state.again {
                state.again = false
                return true
            }
            state.sending = false
            return false
        }
    }
}

/// The mapping between `Change` and a row of the `change` table.
enum ChangeRow {
    static func change(_ row: Columns) throws -> Change {
        let told: Int64? = try row.decode("alert_told_at")
        return try Change(
            storedKind: try row.decode("kind"), key: try row.decode("key"), eventID: try row.decode("event_id"),
            movedAlert: try row.decode("alert_id"), inside: try row.decode("alert_inside"),
            toldAt: told.map(Timestamp.init(millisecondsSince1970:)))
    }
}
