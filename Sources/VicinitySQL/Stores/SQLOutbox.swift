import VicinityCore

extension SQLRecordStore {
    public func enqueue(_ messages: [OutboxMessage]) async throws {
        guard !messages.isEmpty else { return }
        try await write(.writing(messages.map { OutboxMessage.insert($0) }, result: ()))
    }

    /// Each message is claimed by the one transaction that locks it; others skip locked rows, and a row already
    /// claimed and committed is no longer available when it is read again under its lock.
    public func claimOutbox(at now: Timestamp, limit: Int, rules: OutboxRules) async throws -> [OutboxMessage] {
        try await write(.select(
            OutboxMessage.self, where: .compare("available_at", .atMost, .time(now)),
            order: [.ascending("available_at"), .ascending("id")], limit: limit, lock: .skipLocked
        ) { available in
            var changed: [OutboxMessage] = []
            var claimed: [OutboxMessage] = []
            for var message in available {
                let tried = message.claim(at: now, rules: rules)
                changed.append(message)
                if tried { claimed.append(message) }
            }
            return .writing(changed.map { OutboxMessage.update($0) }, result: claimed)
        })
    }

    /// A device that is gone goes after the message is written back without its payload, so that its foreign
    /// key takes away the other pushes waiting for the device and leaves this one's record.
    public func settleOutbox(_ message: OutboxMessage, attempt: Int, removing gone: PushSubscriptionID?) async throws -> Bool {
        try await write(.select(OutboxMessage.self, where: .equals("id", .text(message.id.rawValue)), lock: .forUpdate) { found in
            guard let held = found.first, held.attempts == attempt, held.state == .pending else { return .done(false) }
            let removal = gone.map { [PushSubscription.delete(where: .equals("id", .text($0.rawValue)))] } ?? []
            return .writing([OutboxMessage.update(message)] + removal, result: true)
        })
    }

    /// Rows a sender holds are skipped, as when claiming; the channel is the payload's, read in Swift.
    public func hurryOutbox(_ channel: OutboxChannel, at now: Timestamp) async throws -> Int {
        try await write(.select(
            OutboxMessage.self, where: .and([.equals("state", .text("pending")), .compare("due_at", .greater, .time(now))]),
            lock: .skipLocked
        ) { waiting in
            let hurried = waiting.compactMap { message -> OutboxMessage? in
                var message = message
                return message.hurry(channel, at: now) ? message : nil
            }
            return .writing(hurried.map { OutboxMessage.update($0) }, result: hurried.count)
        })
    }

    public func pendingOutboxCount() async throws -> Int {
        try await read(.count(OutboxMessage.self, where: .equals("state", .text("pending"))) { .done($0) })
    }

    public func pruneOutbox(settledBefore time: Timestamp) async throws -> Int {
        try await write(.finish([OutboxMessage.delete(where: .compare("settled_at", .less, .time(time)))]) { $0.first?.count ?? 0 })
    }
}
