import Synchronization

/// Delivers what waits in the outbox, on every front at once: each pass claims the messages available now
/// (one claim wins across fronts), prepares those that are requests (a sign-in code), hands each to its
/// transport within a deadline, and records the outcome. A front that dies mid-try leaves its claim to lapse,
/// and another front takes the message over: delivery is at least once.
public final class OutboxSender<S: Stores>: Sendable {
    let stores: S
    let accounts: AccountService<S>
    let mail: (any MailTransport)?
    let push: (any PushTransport)?
    let clock: any WallClock
    public let rules: OutboxRules
    /// Told of each outcome, for logs and metrics.
    let observe: @Sendable (OutboxOutcome) -> Void
    /// Wakes this process's sender when it records a message, so that a code goes out without waiting for the
    /// next poll.
    public let signal: ChangeSignal
    private let pruning = Pruning(every: .seconds(60))

    /// Messages tried at once by one pass: enough that one slow relay answer does not hold the others back.
    static var concurrency: Int { 8 }

    public init(
        stores: S, accounts: AccountService<S>, mail: (any MailTransport)?, push: (any PushTransport)? = nil, clock: any WallClock,
        rules: OutboxRules, signal: ChangeSignal, observe: @escaping @Sendable (OutboxOutcome) -> Void = { _ in }
    ) {
        self.stores = stores
        self.accounts = accounts
        self.mail = mail
        self.push = push
        self.clock = clock
        self.rules = rules
        self.signal = signal
        self.observe = observe
    }

    /// Sends until cancelled: a pass whenever this process records a message, and at least every
    /// `rules.pollInterval`. A failed pass is reported and the next one tries again.
    public func run(report: @Sendable (any Error) -> Void) async {
        while !Task.isCancelled {
            do {
                while try await sendDue() == rules.batch {}
                if pruning.due(at: clock.now) { _ = try await stores.outbox.pruneOutbox(settledBefore: clock.now - rules.keepDone) }
            } catch {
                if Task.isCancelled { return }
                report(error)
            }
            await signal.wait(timeout: rules.pollInterval)
        }
    }

    /// Messages waiting now, for the operators' gauge.
    public func pendingCount() async throws -> Int { try await stores.outbox.pendingOutboxCount() }

    /// One pass: claims what is available now and tries each. Returns how many were claimed.
    @discardableResult
    public func sendDue() async throws -> Int {
        let claimed = try await stores.outbox.claimOutbox(at: clock.now, limit: rules.batch, rules: rules)
        let delivered = try await withThrowingTaskGroup(of: OutboxChannel?.self) { group in
            var delivered: Set<OutboxChannel> = []
            for (index, message) in claimed.enumerated() {
                if index >= Self.concurrency, let channel = try await group.next() { delivered.formUnion([channel].compactMap { $0 }) }
                group.addTask { try await self.attempt(message) }
            }
            for try await channel in group { if let channel { delivered.insert(channel) } }
            return delivered
        }
        // A channel that delivers again is up: what waits for it after failed tries (on any front) need not
        // wait out its backoff.
        for channel in delivered { _ = try await stores.outbox.hurryOutbox(channel, at: clock.now) }
        return claimed.count
    }

    /// One try of one claimed message, its outcome recorded against this claim; the channel it went out on
    /// when it was delivered.
    private func attempt(_ claimed: OutboxMessage) async throws -> OutboxChannel? {
        let attempt = claimed.attempts
        var message = claimed
        if case .signInCode(let email) = message.payload {
            guard let prepared = try await accounts.prepareSignInCode(message, to: email) else {
                // Nobody to send to; said in the same words whatever the reason, so that logs do not tell which.
                return try await drop(message, attempt: attempt, reason: "no mail to send for this request")
            }
            message = prepared
        }
        let channel: OutboxChannel, outcome: DeliveryOutcome, gone: PushSubscriptionID?
        switch message.payload {
        case .mail(let mail)?:
            (channel, gone) = (.mail, nil)
            if let transport = self.mail {
                let outgoing = OutgoingMail(id: message.id, mail: mail, createdAt: message.createdAt)
                outcome = await Self.within(rules.deliveryDeadline) { await transport.deliver(outgoing) }
            } else {
                outcome = .misconfigured(reason: "no mail relay is configured (vicinity serve --smtp-url)")
            }
        case .push(let delivery)?:
            // Read now, not when the event was recorded: a device removed meanwhile gets nothing.
            guard let device = try await stores.push.pushSubscription(delivery.device), device.owner == message.account else {
                return try await drop(message, attempt: attempt, reason: "the device was removed")
            }
            (channel, gone) = (delivery.kind.channel, device.id)
            if let transport = push, transport.kinds.contains(delivery.kind) {
                let outgoing = OutgoingPush(
                    id: message.id, notice: delivery.notice, target: device.target, createdAt: message.createdAt, expiresAt: message.expiresAt)
                outcome = await Self.within(rules.deliveryDeadline) { await transport.deliver(outgoing) }
            } else {
                outcome = .misconfigured(reason: "no \(delivery.kind == .webPush ? "VAPID key (vicinity serve --vapid-key)" : "APNs key (vicinity serve --apns-key)") is configured")
            }
        case .signInCode?, nil:
            return try await drop(message, attempt: attempt, reason: "nothing to send")
        }
        let now = clock.now
        message.settle(outcome, at: now, rules: rules)
        let seen: OutboxOutcome = switch (outcome, message.state) {
        case (.delivered, _): .sent(after: now - message.createdAt, channel: channel)
        case (.gone(let reason), _): .gone(reason: reason, channel: channel)
        case (_, .dropped(_, let reason)): .dropped(reason: reason, channel: channel)
        case (.misconfigured(let reason), _): .misconfigured(reason: reason, channel: channel)
        case (.retry(_, let reason), _), (.failed(let reason), _): .retried(reason: reason, channel: channel)
        }
        let removing: PushSubscriptionID? = if case .gone = outcome { gone } else { nil }
        try await settle(message, attempt: attempt, outcome: seen, removing: removing)
        return outcome == .delivered ? channel : nil
    }

    private func drop(_ claimed: OutboxMessage, attempt: Int, reason: String) async throws -> OutboxChannel? {
        var message = claimed
        let channel = message.payload?.channel ?? .mail
        message.drop(at: clock.now, reason: reason)
        try await settle(message, attempt: attempt, outcome: .dropped(reason: reason, channel: channel), removing: nil)
        return nil
    }

    private func settle(_ message: OutboxMessage, attempt: Int, outcome: OutboxOutcome, removing gone: PushSubscriptionID?) async throws {
        guard try await stores.outbox.settleOutbox(message, attempt: attempt, removing: gone) else {
            // Another sender took the message over after this claim lapsed; its outcome stands.
            observe(.overtaken)
            return
        }
        observe(outcome)
    }

    /// The transport's answer, or a retry when it takes longer than `deadline`: the try is then abandoned (its
    /// task cancelled), so that no delivery outlasts the claim that covers it.
    static func within(_ deadline: Duration, _ deliver: @escaping @Sendable () async -> DeliveryOutcome) async -> DeliveryOutcome {
        await withTaskGroup(of: DeliveryOutcome?.self) { group in
            group.addTask { await deliver() }
            group.addTask {
                try? await Task.sleep(for: deadline)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? .retry(after: nil, reason: "the delivery took longer than \(deadline)")
        }
    }
}

/// What became of one try, as logs and metrics count it, with the way out it took.
public enum OutboxOutcome: Hashable, Sendable {
    /// Delivered, this long after the message was recorded.
    case sent(after: Duration, channel: OutboxChannel)
    case retried(reason: String, channel: OutboxChannel)
    case dropped(reason: String, channel: OutboxChannel)
    /// The device is gone: dropped, and the device removed.
    case gone(reason: String, channel: OutboxChannel)
    /// Kept for a retry; an operator must fix the settings.
    case misconfigured(reason: String, channel: OutboxChannel)
    /// Another sender's newer claim settled it.
    case overtaken
}
