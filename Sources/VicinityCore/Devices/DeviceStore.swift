/// Where device passwords live.
///
/// A revocation takes effect for the next request on every process: each report looks its device up by
/// digest in the store, and nothing holds devices in memory.
public protocol DeviceStore: Sendable {
    /// Adds the device unless its owner already has `limit`; false then, with nothing added. Concurrent adds
    /// for one person take turns, so the limit holds however they race.
    func addDevice(_ device: StoredDevice, limit: Int) async throws -> Bool

    /// The person's devices, oldest first.
    func devices(of owner: UserID) async throws -> [Device]

    /// The device whose secret has this digest; nil when none has.
    func device(secretDigest: TokenDigest) async throws -> StoredDevice?

    /// Notes a report: when, and the names last sent to its app. Nothing for a device removed meanwhile.
    func deviceUsed(_ id: DeviceID, at time: Timestamp, cardsDigest: String?) async throws

    /// Removes one of the person's devices; false when they have none with that id.
    func removeDevice(_ id: DeviceID, of owner: UserID) async throws -> Bool
}
