import GeoCore

/// Where votes and their ballots live. Stores keep what they are given and run the few steps that must not
/// interleave (a ballot against the count and the clock, a void against the finish, a claim against another)
/// under the vote's lock, reading the vote, applying a rule of `StoredVote` or `Vote` in Swift and writing it
/// back. No store decides anything about a vote itself: it compares the times the rules worked out
/// (`StoredVote.votingEndsAt`, `announcementDueAt`).
public protocol VoteStore: Sendable {
    /// Adds a vote with its password's hash; false, changing nothing, when a vote already has its id.
    func createVote(_ vote: Vote, passwordHash: PasswordHash) async throws -> Bool

    func vote(id: VoteID) async throws -> Vote?

    /// The vote with its password's hash, for checking a ballot's password.
    func voteForBallot(id: VoteID) async throws -> (vote: Vote, passwordHash: PasswordHash)?

    /// Public votes open at `now` within `radius` of `centre`, nearest first (ties by id), at most `limit`.
    func openPublicVotes(near centre: Coordinate, within radius: Distance, at now: Timestamp, limit: Int) async throws -> [Vote]

    /// Every public vote open at `now`, in no order: what a hot index of votes is built from.
    func openPublicVotes(at now: Timestamp) async throws -> [Vote]

    /// Records the ballot in one step that concurrent ballots and changes cannot interleave, as
    /// `StoredVote.cast` decides from the vote, the voter's ballot if any and the ballots under the same
    /// name, all read under the vote's lock.
    func castBallot(_ ballot: Ballot, answering question: VoteQuestion) async throws -> BallotOutcome

    /// Every ballot of the vote, in the order cast (ties by id).
    func ballots(of vote: VoteID) async throws -> [Ballot]

    func ballot(of vote: VoteID, by voter: UserID) async throws -> Ballot?

    /// Every ballot the voter cast, in any vote, in the order cast.
    func ballots(by voter: UserID) async throws -> [Ballot]

    /// Voids or restores a ballot in one step with the vote and its ballots, which `rule` sees under the
    /// vote's lock and throws to refuse (changing nothing): two changes never both pass against one state.
    /// Nil when the vote has no such ballot.
    func setCounted(
        _ counted: Bool, ballot: BallotID, of vote: VoteID, rule: @escaping @Sendable (Vote, [Ballot]) throws -> Void
    ) async throws -> Ballot?

    /// Reads the vote under its lock, lets `change` alter it (or throw to refuse, changing nothing) and writes
    /// back what an initiator may change: subject, options, extension, closing, cancelling, publishing and the
    /// revision. Nil when there is no such vote.
    func updateVote(_ id: VoteID, _ change: @escaping @Sendable (inout Vote) throws -> Void) async throws -> Vote?

    func votes(of user: UserID, role: VoteRole, limit: Int) async throws -> [Vote]

    /// Claims the votes with an announcement due at `now` (`StoredVote.announcementDueAt`), earliest due first
    /// (ties by id), at most `limit`, and records the events `announcements` makes of each (from the vote as
    /// claimed and its ballots, in the order cast), all in one transaction: each announcement is made once
    /// however many callers race, and never claimed without its events. Returns the votes claimed and the
    /// events recorded.
    func announce(
        at now: Timestamp, limit: Int, _ announcements: @escaping @Sendable (Vote, [Ballot]) -> [EventDraft]
    ) async throws -> (votes: [Vote], events: [Event])
}

/// What became of a ballot.
public enum BallotOutcome: Hashable, Sendable {
    /// Counted; the vote as it stands after it.
    case cast(Vote)
    case alreadyVoted
    case finished
    /// The vote was edited after the ballot's option was checked.
    case questionChanged
    case noSuchVote
}
