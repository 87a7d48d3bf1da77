import GeoCore

/// Where votes and their ballots live. Stores keep what they are given and do the few steps that must not
/// interleave (a ballot against the count and the clock, a void against the finish) in one transaction;
/// the rules are `VoteService`'s.
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

    /// Records the ballot in one step that concurrent ballots cannot interleave: refused when the vote is
    /// finished at `ballot.castAt` (time up, or every participant has voted) or the voter has a ballot in it;
    /// otherwise counted, and the vote completed when it was the last participant's.
    func castBallot(_ ballot: Ballot) async throws -> BallotOutcome

    /// Every ballot of the vote, in the order cast (ties by id).
    func ballots(of vote: VoteID) async throws -> [Ballot]

    func ballot(of vote: VoteID, by voter: UserID) async throws -> Ballot?

    /// Voids or restores a ballot while the vote is open at `now`, in one step with the ballots that could
    /// finish it.
    func setCounted(_ counted: Bool, ballot: BallotID, of vote: VoteID, at now: Timestamp) async throws -> CountChange

    /// The user's votes in the role, newest first (ties by id), at most `limit`.
    func votes(of user: UserID, role: VoteRole, limit: Int) async throws -> [Vote]

    /// Votes finished at `now` whose finish has not been announced, marked announced in the same step so
    /// that each finish is announced once however many callers race; at most `limit`, oldest finish first.
    func claimFinishAnnouncements(at now: Timestamp, limit: Int) async throws -> [Vote]

}

/// What became of a ballot.
public enum BallotOutcome: Hashable, Sendable {
    /// Counted. `vote` is the vote after it; `sameName` counts the vote's ballots (this one included) whose
    /// voter name reads as this one's.
    case cast(vote: Vote, sameName: Int)
    case alreadyVoted
    case finished
    case noSuchVote
}

/// What became of voiding or restoring a ballot.
public enum CountChange: Hashable, Sendable {
    case changed(Ballot)
    case noSuchBallot
    case voteFinished
}
