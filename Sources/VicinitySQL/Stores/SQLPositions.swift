import VicinityCore

extension SQLRecordStore {
    /// The friend finder's most frequent write, with the alerts it moved on in the same transaction, which
    /// it shares with whatever moves the group commit puts with it (`positionWrites`).
    public func setPosition(_ position: SharedPosition, alerts: [AlertChange]) async throws -> Set<AlertID> {
        try await positionWrites.write(Move(position: position, alerts: alerts), via: self)
    }

    public func position(of user: UserID) async throws -> SharedPosition? {
        try await records(SharedPosition.self, where: .equals("account_id", .text(user.rawValue))).first
    }

    public func positions(of users: [UserID]) async throws -> [SharedPosition] {
        let unique = Set(users.map(\.rawValue))
        guard !unique.isEmpty else { return [] }
        return try await records(SharedPosition.self, where: .among("account_id", unique.sorted().map(SQLValue.text)))
    }

    public func deletePosition(of user: UserID) async throws -> Bool {
        try await write(.finish([SharedPosition.delete(where: .equals("account_id", .text(user.rawValue)))]) { ($0.first?.count ?? 0) > 0 })
    }

    public func forEachPosition(_ body: @Sendable ([SharedPosition]) throws -> Void) async throws {
        try await forEach(SharedPosition.self, where: .all, batch: SQLBatch.load, body)
    }
}

/// A position to write, and the alert changes worked out from it (`AlertService.changes(moving:)`).
public struct Move: Sendable {
    public var position: SharedPosition
    public var alerts: [AlertChange]

    public init(position: SharedPosition, alerts: [AlertChange]) {
        self.position = position
        self.alerts = alerts
    }
}

extension GroupCommit where Item == Move, Output == Set<AlertID> {
    /// Groups of at most 256 moves, two written at once: 256 positions bind 2,560 values, far under
    /// PostgreSQL's 65,535 a statement, and are more moves than a front has under way at 64 connections; while
    /// one group waits for its commit's flush, the next is being written.
    public static func moves(largest: Int = 256, concurrent: Int = 2) -> GroupCommit {
        GroupCommit(largest: largest, concurrent: concurrent, together: SQLPlan.moving)
    }
}

extension SQLPlan where Result == [Set<AlertID>] {
    /// Moves written as one: the positions in one write, then every alert change, each conditional as alone
    /// (`advancing(each:)`); each move gets the alerts its own changes moved.
    ///
    /// A person moving twice in one group keeps the later position (what writing them one after the other
    /// leaves; PostgreSQL also refuses to change a row twice in one statement), and their alert changes run in
    /// the order the moves came, so the later finds what the earlier changed. Positions go in the order of
    /// their people's ids and changes in the order of their alerts' ids: two groups from two fronts lock the
    /// rows they share in one order, so neither holds a row the other waits for.
    static func moving(_ moves: [Move]) -> SQLPlan {
        var latest: [UserID: SharedPosition] = [:]
        for move in moves { latest[move.position.userID] = move.position }
        let positions = SQLWrite.insertMany(
            SharedPosition.table, latest.sorted { $0.key < $1.key }.map(\.value.sqlValues), conflict: .replace)
        let changes = moves.flatMap(\.alerts)
        guard !changes.isEmpty else { return .finish([positions]) { _ in moves.map { _ in [] } } }
        return .writing([positions]) { _ in
            try .advancing(each: changes) { moved in
                var outputs: [Set<AlertID>] = []
                var next = moved.makeIterator()
                for move in moves {
                    var mine: Set<AlertID> = []
                    for change in move.alerts where next.next() == true { mine.insert(change.alert) }
                    outputs.append(mine)
                }
                return .done(outputs)
            }
        }
    }
}

/// Rows handed over at a time by the bulk reads that load memory: large enough that the call costs nothing,
/// small enough that a batch is a few megabytes.
public enum SQLBatch {
    public static let load = 10_000
}
