import VicinityCore

/// Device passwords (`DeviceStore`). An add holds its owner's lock key for its transaction, so that adds for
/// one person take turns over every process and the limit holds.
extension SQLRecordStore {
    public func addDevice(_ device: StoredDevice, limit: Int) async throws -> Bool {
        let owner = device.device.owner.rawValue
        return try await write(.locking([SQLLockKey(.deviceOwner, owner)], .select(
            StoredAccount.self, where: .equals("id", .text(owner)), lock: .forUpdate
        ) { account in
            guard !account.isEmpty else { return .done(false) }
            return .select(StoredDevice.self, where: .equals("account_id", .text(owner))) { held in
                guard held.count < limit else { return .done(false) }
                return .writing([StoredDevice.insert(device)], result: true)
            }
        }))
    }

    public func devices(of owner: UserID) async throws -> [Device] {
        try await records(StoredDevice.self, where: .equals("account_id", .text(owner.rawValue)))
            .map(\.device).sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    public func device(secretDigest: TokenDigest) async throws -> StoredDevice? {
        try await records(StoredDevice.self, where: .equals("secret_digest", .bytes(secretDigest.bytes))).first
    }

    public func deviceUsed(_ id: DeviceID, at time: Timestamp, cardsDigest: String?) async throws {
        try await write(.finish([
            .set(StoredDevice.table, [("last_used_at", .time(time)), ("cards_digest", .optionalText(cardsDigest))], where: .equals("id", .text(id.rawValue)))
        ]) { _ in () })
    }

    public func removeDevice(_ id: DeviceID, of owner: UserID) async throws -> Bool {
        try await write(.finish([
            StoredDevice.delete(where: .and([.equals("id", .text(id.rawValue)), .equals("account_id", .text(owner.rawValue))]))
        ]) { ($0.first?.count ?? 0) > 0 })
    }
}
