/// Which pushes an event makes: one per device of its recipient, when the recipient has not muted its kind.
/// Each SQL store and the in-memory one call it in the transaction that records the events, so that a push is
/// recorded exactly when its event is, and never without it.
public enum PushFanOut {
    public static func messages(for events: [Event], devices: [PushSubscription], preferences: [PushPreferences]) -> [OutboxMessage] {
        guard !devices.isEmpty else { return [] }
        let devicesOf = Dictionary(grouping: devices, by: \.owner)
        let preferencesOf = Dictionary(preferences.map { ($0.owner, $0) }, uniquingKeysWith: { first, _ in first })
        return events.flatMap { event -> [OutboxMessage] in
            guard let held = devicesOf[event.recipient], (preferencesOf[event.recipient] ?? PushPreferences(owner: event.recipient)).pushes(event.type)
            else { return [] }
            let notice = PushNotice(event)
            return held.sorted { $0.id < $1.id }.map { device in
                OutboxMessage(
                    account: event.recipient, payload: .push(PushDelivery(device: device.id, kind: device.target.kind, notice: notice)),
                    createdAt: event.createdAt, expiresAt: expiry(of: event))
            }
        }
    }

    /// When a push is no longer worth showing: a poke is a nudge for now, so an hour; a name conflict, when its
    /// settling ends and the result comes out anyway (and no sooner than one delivery may take, so that a settling cut short still has its push tried); the rest, a day, as long as
    /// the event itself is kept (`EventRules.standard.retention`) for an app that reconnects.
    public static func expiry(of event: Event) -> Timestamp {
        switch event.payload {
        case .poke: event.createdAt + .seconds(3600)
        case .voteConflict(let notice): max(notice.settlingUntil, event.createdAt + OutboxRules.standard.deliveryDeadline)
        // An arrival is news while the friend may still be there: the quiet period's length.
        case .friendArrived, .friendLeft, .friendNearby: event.createdAt + AlertRules.standard.quietPeriod
        case .friendRequest, .friendAccepted, .voteFinished, .voteCancelled, .friendVisibility, .voteProgress, .sharingEnded: event.createdAt + EventRules.standard.retention
        }
    }
}
