import GeoCore

extension Vote: Located {
    public var coordinate: Coordinate { location }
}

/// Open public votes held in memory in front of a store of record: "which votes are open near me?" is
/// answered from a `PointGrid` with the same code as places, while the record keeps every vote and ballot.
///
/// Only the server writes votes, so no other process needs following. A vote enters memory when it is opened
/// in public, is replaced by the vote after each counted ballot (the list shows `ballots_cast`), and leaves when
/// its last ballot completes it or its finish is claimed for announcing; whether it is still open is read off
/// the clock at every query, so a vote whose time ran out is never listed even before it leaves.
public final class IndexedVotes<Record: VoteStore>: VoteStore {
    public let record: Record
    private let open: SharedIndex<PointGrid<Vote, Bool>>
    private let writes = SerialGate()

    /// Loads the public votes open at `now`.
    public init(record: Record, at now: Timestamp) async throws {
        self.record = record
        var grid = PointGrid<Vote, Bool>(group: { _ in true })
        grid.insert(contentsOf: try await record.openPublicVotes(at: now))
        open = SharedIndex(grid)
    }

    /// How many votes memory holds (open ones, and timed-out ones not yet announced).
    public var heldCount: Int { open.read { $0.count } }

    // MARK: - Writes: the record first, then memory, in commit order

    public func createVote(_ vote: Vote, passwordHash: PasswordHash) async throws -> Bool {
        try await writes.run {
            let created = try await record.createVote(vote, passwordHash: passwordHash)
            if created, vote.visibility == .public { open.write { $0.insert(vote) } }
            return created
        }
    }

    public func castBallot(_ ballot: Ballot) async throws -> BallotOutcome {
        try await writes.run {
            let outcome = try await record.castBallot(ballot)
            if case .cast(let vote, _) = outcome, vote.visibility == .public {
                open.write { grid in
                    if vote.completedAt == nil { grid.insert(vote) } else { grid.remove(vote.id) }
                }
            }
            return outcome
        }
    }

    public func claimFinishAnnouncements(at now: Timestamp, limit: Int) async throws -> [Vote] {
        try await writes.run {
            let claimed = try await record.claimFinishAnnouncements(at: now, limit: limit)
            open.write { grid in for vote in claimed { grid.remove(vote.id) } }
            return claimed
        }
    }

    /// Voiding or restoring a ballot changes no field of the vote itself, so memory has nothing to follow.
    public func setCounted(_ counted: Bool, ballot: BallotID, of vote: VoteID, at now: Timestamp) async throws -> CountChange {
        try await record.setCounted(counted, ballot: ballot, of: vote, at: now)
    }

    // MARK: - Reads

    public func openPublicVotes(near centre: Coordinate, within radius: Distance, at now: Timestamp, limit: Int) async throws -> [Vote] {
        open.read { grid in
            grid.nearest(to: centre, within: radius, limit: limit, where: { $0.isOpen(at: now) }).map(\.item)
        }
    }

    public func openPublicVotes(at now: Timestamp) async throws -> [Vote] {
        try await record.openPublicVotes(at: now)
    }

    public func vote(id: VoteID) async throws -> Vote? { try await record.vote(id: id) }

    public func voteForBallot(id: VoteID) async throws -> (vote: Vote, passwordHash: PasswordHash)? {
        try await record.voteForBallot(id: id)
    }

    public func ballots(of vote: VoteID) async throws -> [Ballot] { try await record.ballots(of: vote) }

    public func ballot(of vote: VoteID, by voter: UserID) async throws -> Ballot? {
        try await record.ballot(of: vote, by: voter)
    }

    public func votes(of user: UserID, role: VoteRole, limit: Int) async throws -> [Vote] {
        try await record.votes(of: user, role: role, limit: limit)
    }

    public func voters(of vote: VoteID) async throws -> [UserID] { try await record.voters(of: vote) }
}
