import VicinityCore

extension SQLRecordStore {
    /// The friend finder's most frequent write, with the alerts it moved on in the same transaction.
    public func setPosition(_ position: SharedPosition, alerts: [AlertChange]) async throws -> Set<AlertID> {
        try await write(.writing([SharedPosition.upsert(position)]) { _ in .advancing(alerts) })
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

/// Rows handed over at a time by the bulk reads that load memory: large enough that the call costs nothing,
/// small enough that a batch is a few megabytes.
public enum SQLBatch {
    public static let load = 10_000
}
