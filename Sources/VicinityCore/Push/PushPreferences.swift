/// The kinds of event a person chooses to be pushed, each a group of event types.
public enum PushCategory: String, Hashable, Sendable, CaseIterable, Comparable {
    case poke
    /// Requests, and acceptances of one's own.
    case friendRequest = "friend_request"
    /// The initiator's vote ended with names to settle.
    case voteConflict = "vote_conflict"
    /// A vote one took part in finished or was called off.
    case voteResult = "vote_result"
    /// A watched friend arrived, left or came near.
    case alert

    /// Nil for a type that is never pushed: it only keeps an open page up to date.
    public init?(_ type: EventType) {
        switch type {
        case .poke: self = .poke
        case .friendRequest, .friendAccepted: self = .friendRequest
        case .voteConflict: self = .voteConflict
        case .voteFinished, .voteCancelled: self = .voteResult
        case .friendArrived, .friendLeft, .friendNearby: self = .alert
        case .friendVisibility, .voteProgress, .sharingEnded: return nil
        }
    }

    public static func < (lhs: PushCategory, rhs: PushCategory) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Which categories a person has turned off; everything pushes until they do, since registering a device is
/// already the choice to be told.
public struct PushPreferences: Hashable, Sendable {
    public var owner: UserID
    public var muted: Set<PushCategory>

    public init(owner: UserID, muted: Set<PushCategory> = []) {
        self.owner = owner
        self.muted = muted
    }

    public func pushes(_ type: EventType) -> Bool {
        guard let category = PushCategory(type) else { return false }
        return !muted.contains(category)
    }
}
