import Synchronization

/// Device passwords in memory: each call under the store's one lock, so the limit per person holds.
extension InMemoryStore: DeviceStore {
    public func addDevice(_ device: StoredDevice, limit: Int) async throws -> Bool {
        state.withLock { state in
            let owner = device.device.owner
            guard state.social.accounts[owner] != nil,
                state.social.devices.values.count(where: { $0.device.owner == owner }) < limit
            else { return false }
            state.social.devices[device.device.id] = device
            return true
        }
    }

    public func devices(of owner: UserID) async throws -> [Device] {
        state.withLock { state in
            state.social.devices.values.map(\.device).filter { $0.owner == owner }.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
        }
    }

    public func device(secretDigest: TokenDigest) async throws -> StoredDevice? {
        state.withLock { state in state.social.devices.values.first { $0.secretDigest == secretDigest } }
    }

    public func deviceUsed(_ id: DeviceID, at time: Timestamp, cardsDigest: String?) async throws {
        state.withLock { state in
            state.social.devices[id]?.device.lastUsedAt = time
            state.social.devices[id]?.cardsDigest = cardsDigest
        }
    }

    public func removeDevice(_ id: DeviceID, of owner: UserID) async throws -> Bool {
        state.withLock { state in
            guard state.social.devices[id]?.device.owner == owner else { return false }
            state.social.devices[id] = nil
            return true
        }
    }
}
