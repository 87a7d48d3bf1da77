public enum OutboxKind {}
/// A message's identifier in the outbox: also the left part of a mail's `Message-ID`, so that every try of one
/// message sends the same id.
public typealias OutboxID = RandomIdentifier<OutboxKind>

/// A mail as the service writes it: plain text to one address.
public struct Mail: Hashable, Sendable {
    public var to: Email
    public var subject: String
    public var body: String

    public init(to: Email, subject: String, body: String) {
        self.to = to
        self.subject = subject
        self.body = body
    }
}

/// What a message in the outbox is to become.
public enum OutboxPayload: Hashable, Sendable {
    /// A mail, whole: written once, so that every try sends the same message.
    case mail(Mail)
    /// Someone asked for a sign-in code for this address. The sender works out whether an account holds it
    /// and, if so, turns the request into the mail with the code: the request answers the same whoever holds
    /// the address, and takes the same time, since it only records this.
    case signInCode(Email)
    /// A notice for one device of the message's account (`PushFanOut`).
    case push(PushDelivery)
}

extension OutboxPayload {
    /// The transport that takes it.
    public var channel: OutboxChannel {
        switch self {
        case .mail, .signInCode: .mail
        case .push(let delivery): delivery.kind.channel
        }
    }
}

/// The ways out of the service, each with its own transport: when one comes back after failures, only the
/// messages that wait for it are hurried (`OutboxStore.hurryOutbox`).
public enum OutboxChannel: String, Hashable, Sendable, CaseIterable {
    case mail
    case webPush = "webpush"
    case apns
}

/// Where a message stands.
public enum OutboxState: Hashable, Sendable {
    case pending
    /// Handed to the relay (or push service) at this time.
    case sent(at: Timestamp)
    /// Given up at this time, for this reason: refused for good, expired, or nothing to send.
    case dropped(at: Timestamp, reason: String)
}

/// One message that leaves the service (`../shared/DESIGN.md`, "What leaves the service"): recorded in the same
/// transaction as the change it announces, claimed by one sender at a time on whichever front, delivered at
/// least once, and kept no longer than it must be (its payload goes once it is sent or dropped).
public struct OutboxMessage: Hashable, Sendable {
    public var id: OutboxID
    /// The person it concerns, so that deleting an account deletes what was waiting for it; nil for a sign-in
    /// code request until an account is found.
    public var account: UserID?
    /// Nil once sent or dropped.
    public var payload: OutboxPayload?
    public var createdAt: Timestamp
    /// Not tried before this time: now for a new message, later after a failed try.
    public var dueAt: Timestamp
    /// Useless after this time (a code that no longer works): dropped rather than sent.
    public var expiresAt: Timestamp
    /// Tries begun, the one under way included.
    public var attempts: Int
    /// A sender's claim holds until this time; after it another sender may take the message over, as when the
    /// front that claimed it died.
    public var claimedUntil: Timestamp?
    public var state: OutboxState
    /// What went wrong at the last try that did not deliver.
    public var lastError: String?

    public init(
        id: OutboxID = .random(), account: UserID?, payload: OutboxPayload, createdAt: Timestamp, expiresAt: Timestamp
    ) {
        self.id = id
        self.account = account
        self.payload = payload
        self.createdAt = createdAt
        dueAt = createdAt
        self.expiresAt = expiresAt
        attempts = 0
        claimedUntil = nil
        state = .pending
        lastError = nil
    }

    public init(
        id: OutboxID, account: UserID?, payload: OutboxPayload?, createdAt: Timestamp, dueAt: Timestamp, expiresAt: Timestamp,
        attempts: Int, claimedUntil: Timestamp?, state: OutboxState, lastError: String?
    ) {
        self.id = id
        self.account = account
        self.payload = payload
        self.createdAt = createdAt
        self.dueAt = dueAt
        self.expiresAt = expiresAt
        self.attempts = attempts
        self.claimedUntil = claimedUntil
        self.state = state
        self.lastError = lastError
    }
}

// MARK: - The rules

/// How the outbox retries and how long a claim holds.
public struct OutboxRules: Hashable, Sendable {
    /// The wait after the first failed try; each further failure doubles it, up to `longestRetry`.
    public var firstRetry: Duration
    public var longestRetry: Duration
    /// How long a claim holds: longer than any one delivery may take (`deliveryDeadline`), so that a message is
    /// taken over only from a sender that is gone.
    public var claim: Duration
    /// The longest one delivery may take before it counts as failed.
    public var deliveryDeadline: Duration
    /// How long a message without a shorter life is worth sending.
    public var lifetime: Duration
    /// How long a sent or dropped message's row stays (without its payload) before it is pruned.
    public var keepDone: Duration
    /// Messages claimed at a time by one sender: its outcomes are written together when the last is done, so
    /// `claim` must outlast `batch / concurrency` deliveries one after another (`coversAPass`).
    public var batch: Int
    /// Messages tried at once by one pass: enough that one slow answer does not hold the others back.
    public var concurrency: Int = 16
    /// How often a sender looks for due messages when nothing wakes it: retries come due, and other fronts
    /// record messages this one hears nothing of.
    public var pollInterval: Duration
    /// How long a sender waits after a pass before it looks again, however often it is woken meanwhile (what
    /// wakes it is kept: the next pass follows at once). Every event a front records or hears of wakes its
    /// sender, in case a push was written with it, and a pass that finds nothing still claims in a transaction
    /// of its own (three statements over PostgreSQL): under a stream of position updates that tell alerts, one
    /// pass every group of moves would cost more than the pushes. A push or a code waits at most this much
    /// longer; a pass that ends with a full batch goes on at once.
    public var gathering: Duration = .milliseconds(100)

    /// A message meeting a relay that is down is tried again 10 s later, then 20 s, 40 s, then every minute: a
    /// code (it works 15 minutes) is never more than a minute behind the relay's return, and the first message
    /// through hurries the rest (`OutboxStore.hurryOutbox`). A delivery over SMTP takes at most a minute
    /// (connect, then each reply within 30 s, the transport's own limits); claims hold five, longer than the
    /// four rounds of 16 deliveries that a pass of 64 may take at worst. A mail is worth a day; a code, its own
    /// lifetime.
    public static let standard = OutboxRules(
        firstRetry: .seconds(10), longestRetry: .seconds(60), claim: .seconds(300), deliveryDeadline: .seconds(60),
        lifetime: .seconds(24 * 3600), keepDone: .seconds(24 * 3600), batch: 64, pollInterval: .seconds(1))

    public init(
        firstRetry: Duration, longestRetry: Duration, claim: Duration, deliveryDeadline: Duration, lifetime: Duration,
        keepDone: Duration, batch: Int, pollInterval: Duration
    ) {
        self.firstRetry = firstRetry
        self.longestRetry = longestRetry
        self.claim = claim
        self.deliveryDeadline = deliveryDeadline
        self.lifetime = lifetime
        self.keepDone = keepDone
        self.batch = batch
        self.pollInterval = pollInterval
    }

    /// Whether a claim outlasts a whole pass of deliveries that each take their deadline, `concurrency` at a
    /// time: else a message could be taken over, and sent again, while its first sender is still busy.
    public var coversAPass: Bool {
        let rounds = (batch + concurrency - 1) / max(1, concurrency)
        return claim > deliveryDeadline * rounds
    }

    /// The wait before the next try after `attempts` tries.
    public func backoff(afterAttempts attempts: Int) -> Duration {
        var wait = firstRetry
        for _ in 1..<max(1, attempts) where wait < longestRetry { wait = wait * 2 }
        return min(wait, longestRetry)
    }
}

/// What became of one try.
public enum DeliveryOutcome: Hashable, Sendable {
    /// Handed over.
    case delivered
    /// Not now (the relay is down, or said 4xx; a push service said 429 or 5xx): try again, not before
    /// `after` when it said so.
    case retry(after: Duration?, reason: String)
    /// Refused for good (5xx to the recipient, a message a push service will never take): dropped.
    case failed(reason: String)
    /// The device is gone (a push subscription that expired, an app that was removed): dropped, and the device
    /// removed in the same write, or every later push to it meets the same answer.
    case gone(reason: String)
    /// Nothing will go through until an operator fixes the settings (TLS, credentials): kept and tried again,
    /// and said loudly.
    case misconfigured(reason: String)
}

extension OutboxMessage {
    /// The time from which a sender may claim the message: when it is due, or when a claim on it lapses,
    /// whichever is later; nil once it is sent or dropped. What stores compare, never the rules.
    public var availableAt: Timestamp? {
        guard state == .pending else { return nil }
        return max(dueAt, claimedUntil ?? dueAt)
    }

    public func isAvailable(at now: Timestamp) -> Bool { availableAt.map { $0 <= now } ?? false }

    /// Takes the message for one try, or drops it when it expired meanwhile. Returns whether a try is to be made.
    public mutating func claim(at now: Timestamp, rules: OutboxRules) -> Bool {
        guard isAvailable(at: now) else { return false }
        guard now < expiresAt else {
            drop(at: now, reason: "expired before it could be sent")
            return false
        }
        attempts += 1
        claimedUntil = now + rules.claim
        return true
    }

    /// Records what a try came to.
    public mutating func settle(_ outcome: DeliveryOutcome, at now: Timestamp, rules: OutboxRules) {
        claimedUntil = nil
        switch outcome {
        case .delivered:
            state = .sent(at: now)
            payload = nil
            lastError = nil
        case .failed(let reason), .gone(let reason):
            drop(at: now, reason: reason)
        case .retry(let after, let reason):
            retry(notBefore: after, reason: reason, at: now, rules: rules)
        case .misconfigured(let reason):
            retry(notBefore: nil, reason: reason, at: now, rules: rules)
        }
    }

    private mutating func retry(notBefore asked: Duration?, reason: String, at now: Timestamp, rules: OutboxRules) {
        let next = now + max(rules.backoff(afterAttempts: attempts), asked ?? .zero)
        guard next < expiresAt else {
            drop(at: now, reason: "expired before it could be delivered: \(reason)")
            return
        }
        dueAt = next
        lastError = reason
    }

    /// Makes the message due now when it waits for `channel` after a failed try, and no sender holds it: the
    /// channel delivered again, so the wait it was given while the channel was down no longer means anything.
    /// Returns whether it changed.
    public mutating func hurry(_ channel: OutboxChannel, at now: Timestamp) -> Bool {
        guard state == .pending, payload?.channel == channel, attempts > 0, dueAt > now, claimedUntil.map({ $0 <= now }) ?? true
        else { return false }
        dueAt = now
        claimedUntil = nil
        return true
    }

    /// Gives the message up: its payload goes with it.
    public mutating func drop(at now: Timestamp, reason: String) {
        state = .dropped(at: now, reason: reason)
        payload = nil
        claimedUntil = nil
        lastError = reason
    }
}
