import Synchronization

/// Delivers what waits in the outbox, on every front at once: each pass claims the messages available now
/// (one claim wins across fronts), prepares those that are requests (a sign-in code), hands each to its
/// transport within a deadline, and records the pass's outcomes in one write. A front that dies mid-pass
/// leaves its claims to lapse, and another front takes the messages over, sending again what this one had
/// handed over but not yet recorded: delivery is at least once.
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

    /// Sends until cancelled: a pass whenever this process records a message (at most one every
    /// `rules.gathering`), and at least every `rules.pollInterval`. A failed pass is reported and the next one
    /// tries again.
    public func run(report: @Sendable (any Error) -> Void) async {
        while !Task.isCancelled {
            do {
                while try await sendDue() == rules.batch {}
                if pruning.due(at: clock.now) {
                    _ = try await stores.outbox.pruneOutbox(settledBefore: clock.now - rules.keepDone)
                    // Sessions that ended take their push devices with them: a shared browser is told nothing of
                    // the person whose session expired there, though nobody signed in since to sweep it.
                    _ = try await stores.accounts.deleteSessions(expiredBefore: clock.now)
                }
            } catch {
                if Task.isCancelled { return }
                report(error)
            }
            try? await Task.sleep(for: rules.gathering)
            await signal.wait(timeout: max(.zero, rules.pollInterval - rules.gathering))
        }
    }

    /// Messages waiting now, for the operators' gauge.
    public func pendingCount() async throws -> Int { try await stores.outbox.pendingOutboxCount() }

    /// One pass: claims what is available now, tries each, and records every outcome in one write. Returns
    /// how many were claimed.
    @discardableResult
    public func sendDue() async throws -> Int {
        let claimed = try await stores.outbox.claimOutbox(at: clock.now, limit: rules.batch, rules: rules)
        guard !claimed.isEmpty else { return 0 }
        // Read at each pass, not when the events were recorded: a device removed meanwhile gets nothing.
        let pushed = claimed.compactMap { message -> PushSubscriptionID? in
            if case .push(let delivery)? = message.payload { delivery.device } else { nil }
        }
        let devices = Dictionary(
            try await stores.push.pushSubscriptions(ids: pushed).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let tries = await withTaskGroup(of: Try.self) { group in
            var tries: [Try] = []
            for (index, message) in claimed.enumerated() {
                if index >= rules.concurrency, let done = await group.next() { tries.append(done) }
                group.addTask { await self.attemptRecorded(message, devices: devices) }
            }
            for await done in group { tries.append(done) }
            return tries
        }
        let settled = try await stores.outbox.settleOutbox(tries.map(\.settlement))
        // Another sender took a message over after this claim lapsed: its outcome stands.
        for (done, counted) in zip(tries, settled) { observe(counted ? done.outcome : .overtaken) }
        // A relay that delivers again is up: what waits for it after failed tries (on any front) need not wait
        // out its backoff. Not so for pushes: one channel reaches many push services, each with its own
        // `Retry-After`, and one service taking a push says nothing of another.
        if zip(tries, settled).contains(where: { $0.1 && $0.0.delivered == .mail }) {
            _ = try await stores.outbox.hurryOutbox(.mail, at: clock.now)
        }
        return claimed.count
    }

    /// One try, as it is to be recorded.
    private struct Try: Sendable {
        var settlement: OutboxSettlement
        var outcome: OutboxOutcome
        /// The channel it went out on, when it was delivered.
        var delivered: OutboxChannel?
    }

    /// One try whose failure to prepare (a store that did not answer) is its own outcome, a retry, so that the
    /// pass records what the others came to.
    private func attemptRecorded(_ claimed: OutboxMessage, devices: [PushSubscriptionID: PushSubscription]) async -> Try {
        do {
            return try await attempt(claimed, devices: devices)
        } catch {
            var message = claimed
            // The kind of error only: its words could hold what the message holds (an address), which no log says.
            let reason = "could not be prepared (\(type(of: error)))"
            message.settle(.retry(after: nil, reason: reason), at: clock.now, rules: rules)
            let channel = claimed.payload?.channel ?? .mail
            let outcome: OutboxOutcome = if case .dropped(_, let why) = message.state {
                .dropped(reason: why, channel: channel)
            } else {
                .retried(reason: reason, channel: channel)
            }
            return Try(settlement: OutboxSettlement(message, attempt: claimed.attempts), outcome: outcome, delivered: nil)
        }
    }

    /// One try of one claimed message, against this claim.
    private func attempt(_ claimed: OutboxMessage, devices: [PushSubscriptionID: PushSubscription]) async throws -> Try {
        let attempt = claimed.attempts
        var message = claimed
        if case .signInCode(let email) = message.payload {
            guard let prepared = try await accounts.prepareSignInCode(message, to: email) else {
                // Nobody to send to; said in the same words whatever the reason, so that logs do not tell which.
                return drop(message, attempt: attempt, reason: "no mail to send for this request")
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
            guard let device = devices[delivery.device], device.owner == message.account else {
                return drop(message, attempt: attempt, reason: "the device was removed")
            }
            (channel, gone) = (delivery.kind.channel, device.id)
            if let transport = push, transport.kinds.contains(delivery.kind) {
                let outgoing = OutgoingPush(
                    id: message.id, notice: delivery.notice, device: device.id, target: device.target, createdAt: message.createdAt,
                    expiresAt: message.expiresAt)
                outcome = await Self.within(rules.deliveryDeadline) { await transport.deliver(outgoing) }
            } else {
                outcome = .misconfigured(reason: "no \(delivery.kind == .webPush ? "VAPID key (vicinity serve --vapid-key)" : "APNs key (vicinity serve --apns-key)") is configured")
            }
        case .signInCode?, nil:
            return drop(message, attempt: attempt, reason: "nothing to send")
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
        return Try(
            settlement: OutboxSettlement(message, attempt: attempt, removing: removing), outcome: seen,
            delivered: outcome == .delivered ? channel : nil)
    }

    private func drop(_ claimed: OutboxMessage, attempt: Int, reason: String) -> Try {
        var message = claimed
        let channel = message.payload?.channel ?? .mail
        message.drop(at: clock.now, reason: reason)
        return Try(
            settlement: OutboxSettlement(message, attempt: attempt), outcome: .dropped(reason: reason, channel: channel), delivered: nil)
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
