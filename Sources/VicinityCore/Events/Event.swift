import GeoCore

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
}

/// An event to record for one recipient; the store gives it its number.
public struct EventDraft: Hashable, Sendable {
    public var recipient: UserID
    public var type: EventType
    /// What the recipient's app shows, as JSON; never a position.
    public var data: [String: JSONValue]
    public var createdAt: Timestamp

    public init(recipient: UserID, type: EventType, data: [String: JSONValue], createdAt: Timestamp) {
        self.recipient = recipient
        self.type = type
        self.data = data
        self.createdAt = createdAt
    }

    /// `from` poked `recipient`.
    public static func poke(to recipient: UserID, from: UserSummary, at time: Timestamp) -> EventDraft {
        EventDraft(recipient: recipient, type: .poke, data: ["from": from.jsonValue], createdAt: time)
    }

    /// A friend request arrived.
    public static func friendRequest(_ request: FriendRequest, from: UserSummary) -> EventDraft {
        EventDraft(
            recipient: request.to, type: .friendRequest,
            data: ["request_id": .string(request.id.rawValue), "from": from.jsonValue], createdAt: request.createdAt)
    }

    /// `friend` accepted the recipient's request (or asked back, which accepts it).
    public static func friendAccepted(to recipient: UserID, friend: UserSummary, at time: Timestamp) -> EventDraft {
        EventDraft(recipient: recipient, type: .friendAccepted, data: ["friend": friend.jsonValue], createdAt: time)
    }
}

extension EventDraft {
    /// A vote the recipient voted in or opened has finished, with its tally as the recipient reads it: each
    /// event has one recipient, so it carries their own ballot, and only those who may see a result get one.
    public static func voteFinished(
        to recipient: UserID, vote: Vote, reason: VoteState.FinishReason, at time: Timestamp, result: VoteResult
    ) -> EventDraft {
        EventDraft(
            recipient: recipient, type: .voteFinished,
            data: [
                "vote_id": .string(vote.id.rawValue),
                "subject": .string(vote.subject.rawValue),
                "reason": .string(reason.rawValue),
                "ballots_cast": .number(Double(vote.ballotsCast)),
                "participants": .number(Double(vote.participants.value)),
                "result": .object(result.tallyFields),
            ],
            createdAt: time)
    }

    /// The recipient's vote has ended with ballots under names that read the same: the result waits until they
    /// settle them (`GET /v1/votes/{id}/conflicts`) or `until`. Names and counts only, never a choice.
    public static func voteConflict(to initiator: UserID, vote: Vote, names: [(name: String, ballots: Int)], until: Timestamp, at time: Timestamp) -> EventDraft {
        EventDraft(
            recipient: initiator, type: .voteConflict,
            data: [
                "vote_id": .string(vote.id.rawValue),
                "subject": .string(vote.subject.rawValue),
                "conflicts": .array(names.map { .object(["name": .string($0.name), "ballots": .number(Double($0.ballots))]) }),
                "settling_until": .string(until.rfc3339),
            ],
            createdAt: time)
    }

    /// The initiator called off a vote the recipient voted in or opened: there is no result.
    public static func voteCancelled(to recipient: UserID, vote: Vote, at time: Timestamp) -> EventDraft {
        EventDraft(
            recipient: recipient, type: .voteCancelled,
            data: [
                "vote_id": .string(vote.id.rawValue),
                "subject": .string(vote.subject.rawValue),
                "ballots_cast": .number(Double(vote.ballotsCast)),
                "participants": .number(Double(vote.participants.value)),
            ],
            createdAt: time)
    }
}

extension Settlement {
    /// `{"by": "initiator" | "time", "at": …}`.
    public var jsonValue: JSONValue { .object(["by": .string(by.rawValue), "at": .string(at.rfc3339)]) }
}

/// A recorded event.
public struct Event: Hashable, Sendable {
    public var id: EventID
    public var recipient: UserID
    public var type: EventType
    public var data: [String: JSONValue]
    public var createdAt: Timestamp

    public init(id: EventID, draft: EventDraft) {
        self.id = id
        recipient = draft.recipient
        type = draft.type
        data = draft.data
        createdAt = draft.createdAt
    }

    /// The event as its recipient's app reads it: its data with `id`, `type` and `at`.
    public var jsonValue: JSONValue {
        var fields = data
        fields["id"] = .string(id.description)
        fields["type"] = .string(type.rawValue)
        fields["at"] = .string(createdAt.rfc3339)
        return .object(fields)
    }
}

extension UserSummary {
    /// The wire form of a person, the same in answers and events: id, username, first and last name.
    public var jsonFields: [String: JSONValue] {
        [
            "id": .string(id.rawValue),
            "username": .string(username.rawValue),
            "first_name": .string(firstName.rawValue),
            "last_name": .string(lastName.rawValue),
        ]
    }

    public var jsonValue: JSONValue { .object(jsonFields) }
}

/// How long events are kept for clients that reconnect.
public struct EventRules: Hashable, Sendable {
    /// Events older than this are neither replayed nor kept.
    public var retention: Duration
    /// Open streams per user; a new stream beyond this ends the oldest, whose client is most likely gone.
    public var maximumStreamsPerUser: Int

    /// A day: a phone that was off overnight still learns of the requests and pokes it missed. Five streams
    /// cover a phone, a tablet and a few browser tabs.
    public static let standard = EventRules(retention: .seconds(24 * 3600), maximumStreamsPerUser: 5)

    public init(retention: Duration, maximumStreamsPerUser: Int) {
        self.retention = retention
        self.maximumStreamsPerUser = maximumStreamsPerUser
    }
}
