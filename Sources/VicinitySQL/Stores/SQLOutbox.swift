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

    /// The messages are read under their locks, in one transaction with their writes. A device that is gone
    /// goes after the messages are written back without their payloads, so that its foreign key takes away the
    /// other pushes waiting for the device and leaves these records.
    public func settleOutbox(_ settlements: [OutboxSettlement]) async throws -> [Bool] {
        guard !settlements.isEmpty else { return [] }
        let ids = Set(settlements.map(\.message.id.rawValue)).sorted().map(SQLValue.text)
        return try await write(.select(OutboxMessage.self, where: .among("id", ids), order: [.ascending("id")], lock: .forUpdate) { found in
            let held = Dictionary(found.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            let counted = settlements.map { settlement in
                guard let message = held[settlement.message.id] else { return false }
                return message.attempts == settlement.attempt && message.state == .pending
            }
            let written = zip(settlements, counted).filter(\.1).map(\.0)
            let removals = Set(written.compactMap(\.gone)).sorted().map { PushSubscription.delete(where: .equals("id", .text($0.rawValue))) }
            return .writing(written.map { OutboxMessage.update($0.message) } + removals, result: counted)
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
