import GeoCore

/// A vote's public facts: what anyone given its id may see. No tally, no choice, no password.
public struct VoteView: Hashable, Sendable {
    public var vote: Vote
    /// Nil once the initiator deleted their account.
    public var initiatorName: String?
    public var state: VoteState

    public init(vote: Vote, initiatorName: String?, state: VoteState) {
        self.vote = vote
        self.initiatorName = initiatorName
        self.state = state
    }

    /// How a finished vote's result came out of settling; nil when there was nothing to settle or it has not
    /// finished.
    public var settlement: Settlement? {
        guard vote.nameConflict, case .finished(_, let at) = state else { return nil }
        return Settlement(by: vote.publishedAt == nil ? .time : .initiator, at: at)
    }
}

/// A vote found nearby.
public struct VoteListing: Hashable, Sendable {
    public var view: VoteView
    public var distance: Distance
    public var bearing: Bearing
}

/// The voter's own ballot after casting it, and the vote as it then stands.
public struct BallotReceipt: Hashable, Sendable {
    public var ballot: Ballot
    public var view: VoteView
}

/// A vote's public facts as one person reads them by its id: with their own ballot, when they cast one.
public struct VoteDetail: Hashable, Sendable {
    public var view: VoteView
    /// The caller's ballot, with their choice; nil when they have not voted. Shown to its voter only.
    public var yourBallot: Ballot?
    /// Whether the caller opened the vote, so that an app offers its controls to them alone.
    public var youInitiated: Bool
}

/// A ballot as the initiator sees it when settling a conflict: who cast it and whether it counts, never what
/// it chose. The type holds no option, so no answer built from it can show one.
public struct BallotSummary: Hashable, Sendable {
    public var id: BallotID
    public var voter: UserSummary
    /// When the voter's account was made: an account made for the occasion, under a voter's name, stands out.
    public var voterSince: Timestamp
    /// The voter's verified address, masked (`Email.masked`): the real person's campus address tells them from
    /// a look-alike without giving the address away; nil for an account without one.
    public var voterEmail: String?
    public var voterName: String
    public var castAt: Timestamp
    public var counted: Bool

    /// Everything of the ballot but its choice.
    init(_ ballot: Ballot, voter: Account) {
        id = ballot.id
        self.voter = voter.summary
        voterSince = voter.createdAt
        voterEmail = voter.email?.masked
        voterName = ballot.voterName ?? ""
        castAt = ballot.castAt
        counted = ballot.counted
    }
}

/// Two or more ballots whose voters' names read the same.
public struct NameConflict: Hashable, Sendable {
    public var name: String
    public var ballots: [BallotSummary]
}

/// A vote in someone's history.
public struct VoteHistoryEntry: Hashable, Sendable {
    public var view: VoteView
    public var roles: [VoteRole]
}

/// A user's part in votes, for their history.
public enum VoteRole: String, Hashable, Sendable, CaseIterable {
    case initiated
    case attended
}
