import Synchronization

/// Push devices in memory: each call under the store's one lock, so the limit per person holds.
extension InMemoryStore: PushStore {
    public func addPushSubscription(_ subscription: PushSubscription, limit: Int) async throws -> PushSubscription? {
        state.withLock { state in
            let owner = subscription.owner
            guard state.social.accounts[owner] != nil, state.social.sessions[subscription.session]?.userID == owner else { return nil }
            let same = state.social.pushDevices.values.first { $0.target.key == subscription.target.key }
            if let same, same.owner == owner {
                var updated = subscription
                updated.id = same.id
                updated.createdAt = same.createdAt
                state.social.pushDevices[same.id] = updated
                return updated
            }
            guard state.social.pushDevices.values.count(where: { $0.owner == owner }) < limit else { return nil }
            if let same { state.social.removePushDevices { $0.id == same.id } }
            state.social.pushDevices[subscription.id] = subscription
            return subscription
        }
    }

    public func pushSubscriptions(of owner: UserID) async throws -> [PushSubscription] {
        state.withLock { state in
            state.social.pushDevices.values.filter { $0.owner == owner }.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
        }
    }

    public func pushSubscriptions(ids: [PushSubscriptionID]) async throws -> [PushSubscription] {
        state.withLock { state in Set(ids).compactMap { state.social.pushDevices[$0] } }
    }

    public func removePushSubscription(_ id: PushSubscriptionID, of owner: UserID) async throws -> Bool {
        state.withLock { state in
            guard state.social.pushDevices[id]?.owner == owner else { return false }
            state.social.removePushDevices { $0.id == id }
            return true
        }
    }

    public func pushPreferences(of owner: UserID) async throws -> PushPreferences {
        state.withLock { $0.social.pushPreferences[owner] ?? PushPreferences(owner: owner) }
    }

    public func setPushPreferences(_ preferences: PushPreferences) async throws -> Bool {
        state.withLock { state in
            guard state.social.accounts[preferences.owner] != nil else { return false }
            state.social.pushPreferences[preferences.owner] = preferences
            return true
        }
    }
}
