/// Where the devices that take a person's pushes live, with the kinds of event the person mutes. Pushes
/// themselves wait in the outbox: each event store records them with their events (`PushFanOut`).
///
/// Under concurrency: adds for one person take turns over every process, so the limit holds however they race;
/// a device is held by one person at a time (registering it again, as someone else, takes it over).
public protocol PushStore: Sendable {
    /// Adds the device, or, when the same device (`PushTarget.key`) is registered already, updates it: its id
    /// stays when its owner registers it again, and it moves to `subscription.owner` when another person held
    /// it (their pushes waiting for it go). Nil, changing nothing, when the owner holds `limit` other devices,
    /// or the session is not (or no longer) one of the owner's.
    func addPushSubscription(_ subscription: PushSubscription, limit: Int) async throws -> PushSubscription?

    /// The person's devices, oldest first.
    func pushSubscriptions(of owner: UserID) async throws -> [PushSubscription]

    /// The devices with these ids that are still registered, in no order.
    func pushSubscriptions(ids: [PushSubscriptionID]) async throws -> [PushSubscription]

    /// Removes one of the person's devices and the pushes waiting for it; false when they have none with that id.
    func removePushSubscription(_ id: PushSubscriptionID, of owner: UserID) async throws -> Bool

    /// The person's choices; nothing muted when they never chose.
    func pushPreferences(of owner: UserID) async throws -> PushPreferences

    /// False when the person has no account.
    func setPushPreferences(_ preferences: PushPreferences) async throws -> Bool
}

extension PushStore {
    public func pushSubscription(_ id: PushSubscriptionID) async throws -> PushSubscription? {
        try await pushSubscriptions(ids: [id]).first
    }
}
