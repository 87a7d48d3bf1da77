/// Where messages wait to leave the service. Messages are recorded with the change they announce by the store
/// call that makes the change (`AccountStore.issueCode`, ...), or alone (`enqueue`); senders on every front
/// claim and settle them here.
///
/// Under concurrency: a message is claimed by one sender at a time, whichever front it runs on (the claim is
/// read and written under the message's lock; others skip it); a settle counts only from the claim that is
/// still the message's latest, so a sender whose claim lapsed and was taken over cannot undo what the newer
/// one recorded.
public protocol OutboxStore: Sendable {
    func enqueue(_ messages: [OutboxMessage]) async throws

    /// Claims up to `limit` messages available at `now` (`OutboxMessage.availableAt`), earliest first, as
    /// `OutboxMessage.claim` decides; returns those to try.
    func claimOutbox(at now: Timestamp, limit: Int, rules: OutboxRules) async throws -> [OutboxMessage]

    /// Writes back each message as its sender left it, when its latest claim is still the one made for its
    /// `attempt`, and removes the push device its `gone` names (with what else waits for it), all in one write;
    /// for each, false, changing nothing of it, when another sender has claimed it since.
    func settleOutbox(_ settlements: [OutboxSettlement]) async throws -> [Bool]

    /// Makes due now every message that waits for `channel` after a failed try (`OutboxMessage.hurry`), when
    /// a delivery on it went through again; returns how many. Messages a sender holds are left to it.
    func hurryOutbox(_ channel: OutboxChannel, at now: Timestamp) async throws -> Int

    /// Messages pending now, for the operators' gauge.
    func pendingOutboxCount() async throws -> Int

    /// Removes sent and dropped messages settled before `time`; returns how many.
    func pruneOutbox(settledBefore time: Timestamp) async throws -> Int
}

/// What a sender recorded of one try.
public struct OutboxSettlement: Hashable, Sendable {
    public var message: OutboxMessage
    /// The claim the try was made under (`OutboxMessage.attempts` when claimed).
    public var attempt: Int
    /// The push device the try found gone, to be removed with the settle.
    public var gone: PushSubscriptionID?

    public init(_ message: OutboxMessage, attempt: Int, removing gone: PushSubscriptionID? = nil) {
        self.message = message
        self.attempt = attempt
        self.gone = gone
    }
}

extension OutboxStore {
    public func settleOutbox(_ message: OutboxMessage, attempt: Int, removing gone: PushSubscriptionID? = nil) async throws -> Bool {
        try await settleOutbox([OutboxSettlement(message, attempt: attempt, removing: gone)]).first ?? false
    }
}
