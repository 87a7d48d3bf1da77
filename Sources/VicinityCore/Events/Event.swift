/// The number of an event: increasing across the whole service and never reused, so that a client that
/// reconnects with the last number it saw gets exactly what came after.
public struct EventID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: Int64

    public init(_ rawValue: Int64) { self.rawValue = rawValue }

    /// Nil for text that is not a non-negative decimal number (the `Last-Event-ID` header).
    public init?(_ text: String) {
        guard !text.isEmpty, text.utf8.count <= 19, text.utf8.allSatisfy({ (48...57).contains($0) }),
            let value = Int64(text)
        else { return nil }
        rawValue = value
    }

    public static func < (lhs: EventID, rhs: EventID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { String(rawValue) }
}

/// The kinds of event a user receives.
public enum EventType: String, Hashable, Sendable, CaseIterable {
    case poke
    case friendRequest = "friend_request"
    case friendAccepted = "friend_accepted"
    case voteFinished = "vote_finished"
    case voteConflict = "vote_conflict"
    case voteCancelled = "vote_cancelled"
    case voteProgress = "vote_progress"
    case friendVisibility = "friend_visibility"
    case sharingEnded = "sharing_ended"
    case friendArrived = "friend_arrived"
    case friendLeft = "friend_left"
    case friendNearby = "friend_nearby"
}

/// An event to record for one recipient; the store gives it its number.
public struct EventDraft: Hashable, Sendable {
    public var recipient: UserID
    /// What the recipient's app is told; never a position, a distance or a choice of someone else's ballot.
    public var payload: EventPayload
    public var createdAt: Timestamp

    public init(recipient: UserID, payload: EventPayload, createdAt: Timestamp) {
        self.recipient = recipient
        self.payload = payload
        self.createdAt = createdAt
    }

    public var type: EventType { payload.type }

    /// `from` poked `recipient`.
    public static func poke(to recipient: UserID, from: UserSummary, at time: Timestamp) -> EventDraft {
        EventDraft(recipient: recipient, payload: .poke(from: from), createdAt: time)
    }

    /// A friend request arrived.
    public static func friendRequest(_ request: FriendRequest, from: UserSummary) -> EventDraft {
        EventDraft(recipient: request.to, payload: .friendRequest(request.id, from: from), createdAt: request.createdAt)
    }

    /// `friend` accepted the recipient's request (or asked back, which accepts it).
    public static func friendAccepted(to recipient: UserID, friend: UserSummary, at time: Timestamp) -> EventDraft {
        EventDraft(recipient: recipient, payload: .friendAccepted(friend: friend), createdAt: time)
    }

    /// A level the recipient gave a friend for a while has ended.
    public static func sharingEnded(_ ended: EndedSharing, friend: UserSummary, at time: Timestamp) -> EventDraft {
        EventDraft(recipient: ended.side.user, payload: .sharingEnded(friend: friend, share: ended.fallback), createdAt: time)
    }

    /// An alert of the recipient's was set off (`AlertRule`): `type` is `friendArrived`, `friendLeft` or
    /// `friendNearby`.
    public static func alert(_ type: EventType, to recipient: UserID, _ notice: AlertNotice, at time: Timestamp) -> EventDraft? {
        let payload: EventPayload
        switch type {
        case .friendArrived: payload = .friendArrived(notice)
        case .friendLeft: payload = .friendLeft(notice)
        case .friendNearby: payload = .friendNearby(notice)
        default: return nil
        }
        return EventDraft(recipient: recipient, payload: payload, createdAt: time)
    }

    /// What the recipient may see of `friend` changed.
    public static func friendVisibility(to recipient: UserID, friend: UserSummary, at time: Timestamp) -> EventDraft {
        EventDraft(recipient: recipient, payload: .friendVisibility(friend: friend), createdAt: time)
    }

    /// A vote the recipient voted in or opened has finished, with its tally as the recipient reads it: each
    /// event has one recipient, so it carries their own ballot, and only those who may see a result get one.
    public static func voteFinished(
        to recipient: UserID, vote: Vote, reason: VoteState.FinishReason, at time: Timestamp, result: VoteResult
    ) -> EventDraft {
        EventDraft(
            recipient: recipient,
            payload: .voteFinished(VoteFinishedNotice(
                vote: vote.id, subject: vote.subject.rawValue, reason: reason, ballotsCast: vote.ballotsCast,
                participants: vote.participants.value, outcome: VoteOutcome(result))),
            createdAt: time)
    }

    /// The recipient's vote has ended with ballots under names that read the same: the result waits until they
    /// settle them (`GET /v1/votes/{id}/conflicts`) or `until`. Names and counts only, never a choice.
    public static func voteConflict(
        to initiator: UserID, vote: Vote, names: [NameCount], until: Timestamp, at time: Timestamp
    ) -> EventDraft {
        EventDraft(
            recipient: initiator,
            payload: .voteConflict(VoteConflictNotice(
                vote: vote.id, subject: vote.subject.rawValue, conflicts: names, settlingUntil: until)),
            createdAt: time)
    }

    /// A ballot came in on the recipient's open vote.
    public static func voteProgress(to initiator: UserID, vote: Vote, at time: Timestamp) -> EventDraft {
        EventDraft(
            recipient: initiator,
            payload: .voteProgress(VoteCountNotice(
                vote: vote.id, subject: vote.subject.rawValue, ballotsCast: vote.ballotsCast, participants: vote.participants.value)),
            createdAt: time)
    }

    /// The initiator called off a vote the recipient voted in or opened: there is no result.
    public static func voteCancelled(to recipient: UserID, vote: Vote, at time: Timestamp) -> EventDraft {
        EventDraft(
            recipient: recipient,
            payload: .voteCancelled(VoteCountNotice(
                vote: vote.id, subject: vote.subject.rawValue, ballotsCast: vote.ballotsCast,
                participants: vote.participants.value)),
            createdAt: time)
    }
}

/// A recorded event.
public struct Event: Hashable, Sendable {
    public var id: EventID
    public var recipient: UserID
    public var payload: EventPayload
    public var createdAt: Timestamp

    public init(id: EventID, draft: EventDraft) {
        self.id = id
        recipient = draft.recipient
        payload = draft.payload
        createdAt = draft.createdAt
    }

    public var type: EventType { payload.type }
}

/// How long events are kept for clients that reconnect.
public struct EventRules: Hashable, Sendable {
    /// Events older than this are neither replayed nor kept.
    public var retention: Duration
    /// Open streams per user; a new stream beyond this ends the oldest, whose client is most likely gone.
    public var maximumStreamsPerUser: Int
    /// How long an open stream's lease holds unless renewed (`StreamLeaseLedger`); a stream renews it at each
    /// heartbeat, and the lease lasts at least three of them whatever this says.
    public var streamLease: Duration

    /// A day: a phone that was off overnight still learns of the requests and pokes it missed. Five streams
    /// cover a phone, a tablet and a few browser tabs. A lease of 75 s is three of the 25 s heartbeats
    /// (`HTTPOptions.eventHeartbeat`): one slow renewal loses nothing, and the streams of a server that died
    /// stop counting soon after.
    public static let standard = EventRules(retention: .seconds(24 * 3600), maximumStreamsPerUser: 5, streamLease: .seconds(75))

    public init(retention: Duration, maximumStreamsPerUser: Int, streamLease: Duration = .seconds(75)) {
        self.retention = retention
        self.maximumStreamsPerUser = maximumStreamsPerUser
        self.streamLease = streamLease
    }
}
