import GeoCore
import VicinityCore

/// Which rows a query or a write touches.
public indirect enum SQLCondition: Sendable {
    /// Every row.
    case all
    /// `column = value`; `IS NULL` for `.null`.
    case equals(String, SQLValue)
    case notEquals(String, SQLValue)
    case isNull(String)
    /// The column holds this value, null being the same as null (`IS NOT DISTINCT FROM`; SQLite's `IS`): one
    /// statement's text for a value or its absence, where `equals` writes `IS NULL` for a null.
    case same(String, SQLValue)
    case notNull(String)
    case compare(String, SQLComparison, SQLValue)
    /// The column's value is one of these (text or integers, all of one kind).
    case among(String, [SQLValue])
    /// Text that starts with `prefix` (`LIKE`, with the prefix's own `%`, `_` and `\` taken literally).
    case startsWith(String, String)
    /// Text that contains `part` anywhere (`LIKE`, escaped as `startsWith`).
    case contains(String, String)
    case and([SQLCondition])
    case or([SQLCondition])
    /// A located row whose point may lie within `radius` of `centre`: candidates from the table's spatial index,
    /// a few beyond the radius among them, which `Ranking` measures exactly and removes.
    case near(Coordinate, within: Distance)
    /// Some row of `table` meets the condition (`EXISTS`), whose columns are `table`'s: what a write expects of
    /// rows other than its own.
    case exists(SQLTable, SQLCondition)
}

public enum SQLComparison: String, Sendable {
    case less = "<"
    case atMost = "<="
    case greater = ">"
    case atLeast = ">="
}

/// One key of an ordering: by a column, ascending unless `descending`. Text orders by its bytes in both
/// stores (PostgreSQL's `C` collation, SQLite's default), so that ties break alike.
public struct SQLOrder: Sendable {
    public let column: String
    public let descending: Bool

    public static func ascending(_ column: String) -> SQLOrder { SQLOrder(column: column, descending: false) }
    public static func descending(_ column: String) -> SQLOrder { SQLOrder(column: column, descending: true) }
}

/// What a read locks until its transaction ends. SQLite has one writer at a time, so every write transaction
/// holds the whole database and these change nothing there; PostgreSQL locks the rows read.
public enum SQLLock: Sendable {
    case none
    /// `FOR UPDATE`: writers of the same rows wait for this transaction.
    case forUpdate
    /// `FOR UPDATE SKIP LOCKED`: rows another transaction holds are left out, as claims across fronts need.
    case skipLocked
}

/// A read of one table's records.
public struct SQLQuery: Sendable {
    public var table: SQLTable
    public var condition: SQLCondition
    public var order: [SQLOrder]
    public var limit: Int?
    public var lock: SQLLock

    public init(_ table: SQLTable, where condition: SQLCondition = .all, order: [SQLOrder] = [], limit: Int? = nil, lock: SQLLock = .none) {
        self.table = table
        self.condition = condition
        self.order = order
        self.limit = limit
        self.lock = lock
    }
}

/// What an insert does when a row with the same key (or another unique value) is there.
public enum SQLConflict: Sendable {
    /// Fails; a unique violation throws `duplicate` when given, else a store error.
    case fail(duplicate: (any Error & Sendable)?)
    /// Changes nothing (the outcome counts 0 rows).
    case ignore
    /// Replaces the row's other columns.
    case replace
}

/// A change of rows.
public enum SQLWrite: Sendable {
    /// Inserts a row with values in the order of `table.columns`; `returning` names columns to read back.
    case insert(SQLTable, [SQLValue], conflict: SQLConflict = .fail(duplicate: nil), returning: [String] = [])
    /// Writes every column but the key's of the row whose key the values hold; a unique violation throws
    /// `duplicate` when given.
    case update(SQLTable, [SQLValue], duplicate: (any Error & Sendable)? = nil)
    /// Sets some columns of the rows that meet the condition.
    case set(SQLTable, [(column: String, value: SQLValue)], where: SQLCondition)
    /// Several sets of one table, each on rows no other touches, as few statements as the database allows (on
    /// PostgreSQL one instead of a round trip each, with one update for all the sets alike but for their values,
    /// which it plans once); the rows read back hold `returning`
    /// of every row changed. The sets run against the same rows as before any of them, so none may depend on
    /// another's change, and their locks are taken in no set order: where that matters, `lockingFirst` names the
    /// rows (by their `returning` column) to lock first, in that column's order, in the same statement on
    /// PostgreSQL (SQLite has one writer and takes no row locks).
    case setEach(SQLTable, [SQLSet], returning: String, lockingFirst: [SQLValue] = [])
    case delete(SQLTable, where: SQLCondition)
    /// Inserts many rows at once (a copy of a whole record, a group commit): as few statements as the database
    /// allows. Rows given with `.replace` hold one key once: PostgreSQL refuses to change a row twice in one
    /// statement.
    case insertMany(SQLTable, [[SQLValue]], conflict: SQLConflict = .fail(duplicate: nil))
    /// Inserts rows numbered by the table's identity column (`numbering`; `table` lists the other columns), in
    /// the order given: the rows read back hold each row's number under that name, in the rows' order. As few
    /// statements as the database allows: on PostgreSQL one, which takes the numbers first and hands them out
    /// in order (a multi-row `INSERT` promises no order among its rows' numbers), not a round trip per row.
    /// `lockingFirst` are advisory keys held before any number is taken (`SQLPlan.locking`'s, in the same
    /// statement on PostgreSQL; SQLite has one writer and takes none).
    case insertNumbered(SQLTable, [[SQLValue]], numbering: String, lockingFirst: [SQLLockKey] = [])
    /// Adds one to an integer column of the rows that meet the condition.
    case increment(SQLTable, column: String, where: SQLCondition)
    /// Makes the table's next automatic number (its `identity` column's) come after `number`, and never a
    /// number given before: a copy continues numbering above every number its source gave.
    case continueNumbering(SQLTable, after: Int64)
}

/// One set of `SQLWrite.setEach`: columns to set on the rows that meet the condition.
public struct SQLSet: Sendable {
    public var assignments: [(column: String, value: SQLValue)]
    public var condition: SQLCondition

    public init(_ assignments: [(column: String, value: SQLValue)], where condition: SQLCondition) {
        self.assignments = assignments
        self.condition = condition
    }
}

extension SQLWrite {
    /// The table a write changes.
    public var table: SQLTable {
        switch self {
        case .insert(let table, _, _, _), .update(let table, _, _), .set(let table, _, _), .delete(let table, _),
            .insertMany(let table, _, _), .increment(let table, _, _), .continueNumbering(let table, _), .setEach(let table, _, _, _),
            .insertNumbered(let table, _, _, _):
            table
        }
    }
}

/// What a write did: how many rows it touched, and the rows it read back.
public struct SQLWriteOutcome: Sendable {
    public let count: Int
    public let rows: [FetchedRow]

    public init(count: Int, rows: [FetchedRow] = []) {
        self.count = count
        self.rows = rows
    }
}

/// A lock held to the end of a transaction on something no single row stands for (a pair of people, an event
/// recipient): PostgreSQL's transaction-scoped advisory locks; nothing in SQLite, whose write transactions
/// take turns anyway.
public struct SQLLockKey: Hashable, Comparable, Sendable {
    public enum Space: Int32, Sendable {
        /// One pair of people: friend requests and friendships between them.
        case friendPair = 1
        /// One recipient's events: numbers are taken and committed in one order.
        case eventRecipient = 2
        /// One person's open event streams (`StreamLeaseLedger`). 3 is PostGIS's own (`LockSpace`).
        case streamHolder = 4
        /// One person's device passwords (`DeviceStore`): adds take turns, so the limit holds.
        case deviceOwner = 5
        /// One person's push devices (`PushStore`): adds take turns, so the limit holds.
        case pushOwner = 6
        /// One push device, whoever registers it: it ends up with one person.
        case pushTarget = 7
    }

    public let space: Space
    public let key: String

    public init(_ space: Space, _ key: String) {
        self.space = space
        self.key = key
    }

    /// Each key once, in the one order every plan takes them in, so that no two plans each hold a key the
    /// other waits for.
    public static func inLockingOrder(_ keys: [SQLLockKey]) -> [SQLLockKey] { Array(Set(keys)).sorted() }

    public static func < (lhs: SQLLockKey, rhs: SQLLockKey) -> Bool {
        (lhs.space.rawValue, lhs.key) < (rhs.space.rawValue, rhs.key)
    }
}

/// A store operation as reads, Swift decisions and writes, in one transaction: each read's rows go to a
/// closure that decides what comes next (another read, the writes, the result). The closures are pure
/// functions of what was read, so a store may run a plan again from the start (PostgreSQL does, after a
/// serialization failure) and get the same decisions from the same rows. The rules live in those closures,
/// in Swift, once for both stores; the stores only read, lock and write.
public indirect enum SQLPlan<Result: Sendable>: Sendable {
    case read(SQLQuery, @Sendable ([FetchedRow]) throws -> SQLPlan<Result>)
    /// How many rows meet the query's condition.
    case count(SQLQuery, @Sendable (Int) throws -> SQLPlan<Result>)
    /// The highest number the table's identity column has given, also to rows since removed; 0 before the first.
    case lastNumber(SQLTable, @Sendable (Int64) throws -> SQLPlan<Result>)
    case write([SQLWrite], @Sendable ([SQLWriteOutcome]) throws -> SQLPlan<Result>)
    /// Makes the writes and ends with what `result` makes of their outcomes. A plan that is one such step of
    /// one statement needs no transaction around it, which PostgreSQL then spares.
    case finish([SQLWrite], @Sendable ([SQLWriteOutcome]) throws -> Result)
    case lock([SQLLockKey], SQLPlan<Result>)
    case done(Result)
}

extension SQLPlan {
    /// Reads the records that meet `condition`, then goes on with `next`.
    public static func select<Record: SQLRecord>(
        _ type: Record.Type, where condition: SQLCondition = .all, order: [SQLOrder] = [], limit: Int? = nil,
        lock: SQLLock = .none, _ next: @escaping @Sendable ([Record]) throws -> SQLPlan
    ) -> SQLPlan {
        .read(SQLQuery(Record.table, where: condition, order: order, limit: limit, lock: lock)) { rows in
            try next(try rows.map { row throws(StoreError) in try Record(row: row) })
        }
    }

    /// Counts the records that meet `condition`, then goes on with `next`.
    public static func count<Record: SQLRecord>(
        _ type: Record.Type, where condition: SQLCondition = .all, _ next: @escaping @Sendable (Int) throws -> SQLPlan
    ) -> SQLPlan {
        .count(SQLQuery(Record.table, where: condition), next)
    }

    /// Makes the writes, then goes on with `next`.
    public static func writing(_ writes: [SQLWrite], _ next: @escaping @Sendable ([SQLWriteOutcome]) throws -> SQLPlan) -> SQLPlan {
        .write(writes, next)
    }

    /// Makes the writes and ends with `result`.
    public static func writing(_ writes: [SQLWrite], result: Result) -> SQLPlan {
        writes.isEmpty ? .done(result) : .finish(writes) { _ in result }
    }

    /// Holds the locks (taken in one fixed order, so that two plans never wait for each other in a circle), then
    /// goes on with `next`.
    public static func locking(_ keys: [SQLLockKey], _ next: SQLPlan) -> SQLPlan {
        keys.isEmpty ? next : .lock(SQLLockKey.inLockingOrder(keys), next)
    }
}

/// Whether a plan may write, and what its reads see.
public enum SQLAccess: Sendable {
    /// Reads only, each the latest committed state: one read needs no more.
    case read
    /// Reads only, all from one consistent snapshot, whatever commits meanwhile: several reads that must agree.
    case snapshot
    /// Reads and writes in one transaction.
    case write
}

/// A store that runs plans: each in one transaction, every write of it or none.
public protocol SQLPlanRunner: Sendable {
    func run<Result: Sendable>(_ plan: SQLPlan<Result>, access: SQLAccess) async throws -> Result

    /// Makes what a committed deletion removed unreadable in the database's files too, where the store keeps
    /// old page images (SQLite's write-ahead log); nothing where the database server looks after its own.
    func scrubDeleted() async throws

    /// Hands every record that meets the condition to `body`, `batch` at a time, from one consistent view of
    /// the store, never all of them in memory at once: how the hot indexes load.
    func forEach<Record: SQLRecord>(
        _ type: Record.Type, where condition: SQLCondition, batch: Int, _ body: @Sendable ([Record]) throws -> Void
    ) async throws
}

extension SQLPlanRunner {
    public func scrubDeleted() async throws {}
}

extension SQLRecord {
    public static func insert(_ record: Self, conflict: SQLConflict = .fail(duplicate: nil), returning: [String] = []) -> SQLWrite {
        .insert(table, record.sqlValues, conflict: conflict, returning: returning)
    }

    public static func upsert(_ record: Self) -> SQLWrite { .insert(table, record.sqlValues, conflict: .replace) }

    public static func update(_ record: Self, duplicate: (any Error & Sendable)? = nil) -> SQLWrite {
        .update(table, record.sqlValues, duplicate: duplicate)
    }

    public static func delete(where condition: SQLCondition) -> SQLWrite { .delete(table, where: condition) }
}
