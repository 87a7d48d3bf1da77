import VicinityCore

/// Both SQL stores as one: the accounts, positions, friendships, events and votes of a record, read and
/// written through plans (`SQLPlan`) that every store runs in its own database. The statements and the rules
/// are written once, in this module and in VicinityCore; a store supplies only how it runs a plan and the
/// few reads that are its own (spatial candidates, change feed, bulk loads).
///
/// What each call guarantees with many writers in many processes is said on its protocol (`AccountStore`,
/// `FriendStore`, `VoteStore`...): SQLite has one writer at a time, so each plan sees the whole database
/// alone; PostgreSQL locks the rows a plan reads `forUpdate` and the advisory keys it names (`SQLLockKey`),
/// retries a plan that lost a serialization race, and lets unique constraints refuse what slipped past.
public protocol SQLRecordStore: SQLPlanRunner, AccountStore, PositionStore, FriendStore, EventStore, VoteStore, OutboxStore, DeviceStore, PushStore {
    /// The group commit of moves, the friend finder's most frequent write.
    var positionWrites: GroupCommit<Move, Set<AlertID>> { get }
}

extension SQLRecordStore {
    func read<Result: Sendable>(_ plan: SQLPlan<Result>) async throws -> Result { try await run(plan, access: .read) }
    func write<Result: Sendable>(_ plan: SQLPlan<Result>) async throws -> Result { try await run(plan, access: .write) }

    /// The records that meet `condition`, as one read.
    func records<Record: SQLRecord>(
        _ type: Record.Type, where condition: SQLCondition, order: [SQLOrder] = [], limit: Int? = nil
    ) async throws -> [Record] {
        try await read(.select(type, where: condition, order: order, limit: limit) { .done($0) })
    }
}

extension SQLCondition {
    /// The account's code for the purpose.
    static func code(of account: UserID, _ purpose: CodePurpose) -> SQLCondition {
        .and([.equals("account_id", .text(account.rawValue)), .equals("purpose", .text(purpose.rawValue))])
    }

    /// The row whose key columns hold the record's values.
    static func key<Record: SQLRecord>(of record: Record) -> SQLCondition {
        .and(Record.table.key.map { column in .equals(column, Record.schema.value(column, of: record) ?? .null) })
    }
}

extension SQLWrite {
    /// The writes that turn the rows `old` into `new`, rows matched by their key: deleted, inserted, or written
    /// over when changed.
    static func changes<Record: SQLRecord & Hashable>(from old: [Record], to new: [Record]) -> [SQLWrite] {
        func key(_ record: Record) -> [SQLValue] { Record.table.key.map { Record.schema.value($0, of: record) ?? .null } }
        let before = Dictionary(old.map { (key($0), $0) }) { first, _ in first }
        let after = Dictionary(new.map { (key($0), $0) }) { first, _ in first }
        var writes: [SQLWrite] = []
        for record in old where after[key(record)] == nil { writes.append(Record.delete(where: .key(of: record))) }
        for record in new {
            switch before[key(record)] {
            case nil: writes.append(Record.insert(record))
            case record: break
            default: writes.append(Record.update(record))
            }
        }
        return writes
    }
}
