/// What an event tells its recipient. Each kind carries what the recipient's app shows, and never a position,
/// a distance, a bearing or the choice of anyone's ballot but the recipient's own.
public enum EventPayload: Hashable, Sendable {
    case poke(from: UserSummary)
    case friendRequest(FriendRequestID, from: UserSummary)
    case friendAccepted(friend: UserSummary)
    case voteFinished(VoteFinishedNotice)
    case voteConflict(VoteConflictNotice)
    case voteCancelled(VoteCountNotice)
    /// A ballot came in on the vote the recipient opened, which is still open: how many have voted, never who
    /// or what. For the initiator's page, whose count and controls follow it; never pushed.
    case voteProgress(VoteCountNotice)
    /// What the recipient may see of a friend's whereabouts changed without their moving: privacy mode, a
    /// sharing level or a position taken away. It carries who, never what: the app reads the friend again, and
    /// learns only what the friend list then says. Sent only to friends whose view did change.
    case friendVisibility(friend: UserSummary)
    /// A level the recipient gave `friend` for a while has ended: `share` (their default) holds now.
    case sharingEnded(friend: UserSummary, share: ShareLevel)
    /// A friend the recipient watches came to the place, campus or point of one of their alerts.
    case friendArrived(AlertNotice)
    /// ... and left it, beyond the radius and its margin.
    case friendLeft(AlertNotice)
    /// A friend came within the radius of the recipient, both having a nearby alert on the other.
    case friendNearby(AlertNotice)

    /// The person the event tells of, besides its recipient: who poked, asked or accepted. Deleting their
    /// account deletes the events about them, wherever they wait.
    public var about: UserID? {
        switch self {
        case .poke(let from), .friendRequest(_, let from): from.id
        case .friendAccepted(let friend), .friendVisibility(let friend), .sharingEnded(let friend, _): friend.id
        case .friendArrived(let notice), .friendLeft(let notice), .friendNearby(let notice): notice.friend.id
        case .voteFinished, .voteConflict, .voteCancelled, .voteProgress: nil
        }
    }

    public var type: EventType {
        switch self {
        case .poke: .poke
        case .friendRequest: .friendRequest
        case .friendAccepted: .friendAccepted
        case .voteFinished: .voteFinished
        case .voteConflict: .voteConflict
        case .voteCancelled: .voteCancelled
        case .voteProgress: .voteProgress
        case .friendVisibility: .friendVisibility
        case .sharingEnded: .sharingEnded
        case .friendArrived: .friendArrived
        case .friendLeft: .friendLeft
        case .friendNearby: .friendNearby
        }
    }
}

/// A vote the recipient opened or voted in has finished: its outcome as the recipient reads it.
public struct VoteFinishedNotice: Hashable, Sendable {
    public var vote: VoteID
    /// The subject as the vote asked it when it finished.
    public var subject: String
    public var reason: VoteState.FinishReason
    public var ballotsCast: Int
    public var participants: Int
    public var outcome: VoteOutcome

    public init(vote: VoteID, subject: String, reason: VoteState.FinishReason, ballotsCast: Int, participants: Int, outcome: VoteOutcome) {
        self.vote = vote
        self.subject = subject
        self.reason = reason
        self.ballotsCast = ballotsCast
        self.participants = participants
        self.outcome = outcome
    }
}

/// How many ballots carry one name that reads as another's.
public struct NameCount: Hashable, Sendable {
    public var name: String
    public var ballots: Int

    public init(name: String, ballots: Int) {
        self.name = name
        self.ballots = ballots
    }
}

/// The recipient's vote ended with ballots under names that read the same; it settles until `settlingUntil`.
public struct VoteConflictNotice: Hashable, Sendable {
    public var vote: VoteID
    public var subject: String
    public var conflicts: [NameCount]
    public var settlingUntil: Timestamp

    public init(vote: VoteID, subject: String, conflicts: [NameCount], settlingUntil: Timestamp) {
        self.vote = vote
        self.subject = subject
        self.conflicts = conflicts
        self.settlingUntil = settlingUntil
    }
}

/// A vote and how far it got: what `voteCancelled` (called off) and `voteProgress` (a ballot came in) carry.
public struct VoteCountNotice: Hashable, Sendable {
    public var vote: VoteID
    public var subject: String
    public var ballotsCast: Int
    public var participants: Int

    public init(vote: VoteID, subject: String, ballotsCast: Int, participants: Int) {
        self.vote = vote
        self.subject = subject
        self.ballotsCast = ballotsCast
        self.participants = participants
    }
}
