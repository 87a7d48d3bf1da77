import VicinityCore

extension SQLPlan {
    /// Records the drafts in order, with the pushes they make, and goes on with the events numbered. Each
    /// recipient's lock is taken before any number (in the insert's own statement on PostgreSQL), in one order,
    /// and held to commit: numbers come from one counter in call order, not commit order, so a second append to
    /// a recipient takes its numbers only after the first has committed, and a
    /// reader that has seen number n of a recipient never later finds a smaller one appear (`Last-Event-ID`
    /// replay skips nothing). SQLite's one writer gives the same order without the locks.
    static func appending(_ drafts: [EventDraft], _ next: @escaping @Sendable ([Event]) throws -> SQLPlan) -> SQLPlan {
        guard !drafts.isEmpty else { return .writing([]) { _ in try next([]) } }
        let recipients = drafts.map { SQLLockKey(.eventRecipient, $0.recipient.rawValue) }
        return .writing([.insertNumbered(EventDraft.table, drafts.map(\.sqlValues), numbering: "id", lockingFirst: recipients)]) { outcomes in
            let numbers = try outcomes.flatMap(\.rows).map { try $0.integer("id") }
            guard numbers.count == drafts.count else { throw StoreError.database("an event was stored without a number") }
            let events = zip(drafts, numbers).map { Event(id: EventID($1), draft: $0) }
            return try .pushing(events) { try next(events) }
        }
    }
}

extension SQLRecordStore {
    public func appendEvents(_ drafts: [EventDraft]) async throws -> [Event] {
        guard !drafts.isEmpty else { return [] }
        return try await write(.appending(drafts) { .done($0) })
    }

    public func events(for recipient: UserID, after: EventID?, since: Timestamp, limit: Int) async throws -> [Event] {
        try await records(
            Event.self,
            where: .and([
                .equals("recipient_id", .text(recipient.rawValue)), .compare("id", .greater, .integer(after?.rawValue ?? 0)),
                .compare("created_at", .atLeast, .time(since)),
            ]),
            order: [.ascending("id")], limit: limit)
    }

    public func events(ids: [EventID]) async throws -> [Event] {
        guard !ids.isEmpty else { return [] }
        return try await records(Event.self, where: .among("id", Set(ids).sorted().map { .integer($0.rawValue) }), order: [.ascending("id")])
    }

    public func deleteEvents(before time: Timestamp) async throws -> Int {
        try await write(.finish([Event.delete(where: .compare("created_at", .less, .time(time)))]) { $0.first?.count ?? 0 })
    }
}
