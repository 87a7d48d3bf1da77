import VicinityCore

/// Push devices (`PushStore`). An add holds its owner's lock key, and the device's own, for its transaction, so
/// that adds for one person take turns over every process and the limit holds, and one device registered by
/// two people at once ends up with one of them. A device's waiting pushes and the device itself go with the
/// session that registered it, by foreign keys.
extension SQLRecordStore {
    public func addPushSubscription(_ subscription: PushSubscription, limit: Int) async throws -> PushSubscription? {
        let owner = subscription.owner.rawValue
        let keys = [SQLLockKey(.pushOwner, owner), SQLLockKey(.pushTarget, subscription.target.key)].sorted()
        return try await write(.locking(keys, .select(
            Session.self, where: .and([.equals("token_digest", .bytes(subscription.session.bytes)), .equals("account_id", .text(owner))]),
            lock: .forUpdate
        ) { session in
            guard !session.isEmpty else { return .done(nil) }
            return .select(PushSubscription.self, where: .equals("target_key", .text(subscription.target.key))) { same in
                if let same = same.first, same.owner == subscription.owner {
                    var updated = subscription
                    updated.id = same.id
                    updated.createdAt = same.createdAt
                    return .writing([PushSubscription.update(updated)], result: updated)
                }
                return .select(PushSubscription.self, where: .equals("account_id", .text(owner))) { held in
                    guard held.count < limit else { return .done(nil) }
                    let takenOver = same.map { PushSubscription.delete(where: .equals("id", .text($0.id.rawValue))) }
                    return .writing(takenOver + [PushSubscription.insert(subscription)], result: subscription)
                }
            }
        }))
    }

    public func pushSubscriptions(of owner: UserID) async throws -> [PushSubscription] {
        try await records(PushSubscription.self, where: .equals("account_id", .text(owner.rawValue)))
            .sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    public func pushSubscriptions(ids: [PushSubscriptionID]) async throws -> [PushSubscription] {
        guard !ids.isEmpty else { return [] }
        return try await records(PushSubscription.self, where: .among("id", Set(ids).sorted().map { .text($0.rawValue) }))
    }

    public func removePushSubscription(_ id: PushSubscriptionID, of owner: UserID) async throws -> Bool {
        try await write(.finish([
            PushSubscription.delete(where: .and([.equals("id", .text(id.rawValue)), .equals("account_id", .text(owner.rawValue))]))
        ]) { ($0.first?.count ?? 0) > 0 })
    }

    public func pushPreferences(of owner: UserID) async throws -> PushPreferences {
        try await records(PushPreferences.self, where: .equals("account_id", .text(owner.rawValue))).first ?? PushPreferences(owner: owner)
    }

    public func setPushPreferences(_ preferences: PushPreferences) async throws -> Bool {
        let owner = preferences.owner.rawValue
        return try await write(.select(StoredAccount.self, where: .equals("id", .text(owner)), lock: .forUpdate) { account in
            guard !account.isEmpty else { return .done(false) }
            return .writing([PushPreferences.upsert(preferences)], result: true)
        })
    }
}

extension SQLPlan {
    /// Goes on with `next` after recording the pushes the events make (`PushFanOut`), in the same transaction:
    /// the recipients' devices and choices are read here, so a device removed before the events commit gets
    /// none of them.
    static func pushing(_ events: [Event], _ next: @escaping @Sendable () throws -> SQLPlan) throws -> SQLPlan {
        let recipients = Set(events.map(\.recipient.rawValue)).sorted().map(SQLValue.text)
        guard !recipients.isEmpty else { return try next() }
        // Under their locks: a device deleted meanwhile (signed out, removed, taken over) is either waited for and
        // then not seen, or deleted after this commits, with the pushes written here going by its foreign key.
        return .select(PushSubscription.self, where: .among("account_id", recipients), lock: .forUpdate) { devices in
            guard !devices.isEmpty else { return try next() }
            return .select(PushPreferences.self, where: .among("account_id", recipients)) { preferences in
                let messages = PushFanOut.messages(for: events, devices: devices, preferences: preferences)
                return .writing(messages.map { OutboxMessage.insert($0) }) { _ in try next() }
            }
        }
    }
}
