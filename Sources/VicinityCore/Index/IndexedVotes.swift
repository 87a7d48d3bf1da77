import GeoCore

extension Vote: Located {
    public var coordinate: Coordinate { location }
}

/// Open public votes held in memory in front of a store of record: "which votes are open near me?" is
/// answered from a `PointGrid` with the same code as places, while the record keeps every vote and ballot.
///
/// Other fronts' writes arrive through the change feed (`refresh`). A vote enters memory when it is opened
/// in public, is replaced by the vote after each counted ballot (the list shows `ballots_cast`) or initiator's
/// change, and leaves when its last ballot completes it, its initiator closes or cancels it, or its finish is
/// claimed for announcing; whether it is still open is read off the clock at every query, so a vote whose
/// time ran out is never listed even before it leaves.
///
/// Changes need no ordering among themselves, so concurrent ballots are not made to wait for each other: a
/// vote's revision only grows and an end is final, so memory keeps the copy with the highest revision and
/// never takes back an ended vote, whatever order the changes arrive in.
public final class IndexedVotes<Record: VoteStore>: VoteStore {
    struct Held: Sendable {
        var grid = PointGrid<Vote, Bool>(group: { _ in true })
        /// Votes that left memory for good, so that a late copy of one never comes back.
        var finished: Set<VoteID> = []

        mutating func keep(_ vote: Vote) {
            guard vote.visibility == .public, !finished.contains(vote.id) else { return }
            guard vote.completedAt == nil, vote.closedAt == nil, vote.cancelledAt == nil, vote.publishedAt == nil else {
                return forget(vote.id)
            }
            if let held = grid.item(vote.id), held.revision >= vote.revision { return }
            grid.insert(vote)
        }

        mutating func forget(_ id: VoteID) {
            finished.insert(id)
            grid.remove(id)
        }
    }

    public let record: Record
    private let held: SharedIndex<Held>

    /// Loads the public votes open at `now`.
    public init(record: Record, at now: Timestamp) async throws {
        self.record = record
        var held = Held()
        held.grid.insert(contentsOf: try await record.openPublicVotes(at: now))
        self.held = SharedIndex(held)
    }

    // MARK: - Following other processes' writes

    /// Reads the votes again from the record, for changes made by another process: a vote no longer open
    /// leaves memory for good; an open one is kept by the same rule as this process's own changes.
    public func refresh(_ ids: Set<VoteID>, at now: Timestamp) async throws {
        guard !ids.isEmpty else { return }
        var fresh: [VoteID: Vote] = [:]
        for id in ids { fresh[id] = try await record.vote(id: id) }
        held.write { held in
            for id in ids {
                if let vote = fresh[id], vote.isOpen(at: now) { held.keep(vote) } else { held.forget(id) }
            }
        }
    }

    /// Loads the public votes open at `now` again.
    public func reload(at now: Timestamp) async throws {
        let open = try await record.openPublicVotes(at: now)
        held.write { held in
            // Votes that left for good stay out: a late copy of one must not come back.
            var fresh = Held()
            fresh.finished = held.finished
            for vote in open { fresh.keep(vote) }
            held = fresh
        }
    }

    /// How many votes memory holds (open ones, and timed-out ones not yet announced).
    public var heldCount: Int { held.read { $0.grid.count } }

    // MARK: - Writes: the record first, then memory

    public func createVote(_ vote: Vote, passwordHash: PasswordHash) async throws -> Bool {
        let created = try await record.createVote(vote, passwordHash: passwordHash)
        if created { held.write { $0.keep(vote) } }
        return created
    }

    public func castBallot(_ ballot: Ballot, answering question: VoteQuestion) async throws -> BallotOutcome {
        let outcome = try await record.castBallot(ballot, answering: question)
        if case .cast(let vote) = outcome { held.write { $0.keep(vote) } }
        return outcome
    }

    public func announce(
        at now: Timestamp, limit: Int, _ announcements: @escaping @Sendable (Vote, [Ballot]) -> [EventDraft]
    ) async throws -> (votes: [Vote], events: [Event]) {
        let claimed = try await record.announce(at: now, limit: limit, announcements)
        held.write { held in for vote in claimed.votes { held.forget(vote.id) } }
        return claimed
    }

    public func updateVote(_ id: VoteID, _ change: @escaping @Sendable (inout Vote) throws -> Void) async throws -> Vote? {
        let changed = try await record.updateVote(id, change)
        if let changed { held.write { $0.keep(changed) } }
        return changed
    }

    /// Voiding or restoring a ballot changes no field of the vote itself, so memory has nothing to follow.
    public func setCounted(
        _ counted: Bool, ballot: BallotID, of vote: VoteID, rule: @escaping @Sendable (Vote, [Ballot]) throws -> Void
    ) async throws -> Ballot? {
        try await record.setCounted(counted, ballot: ballot, of: vote, rule: rule)
    }

    // MARK: - Reads

    public func openPublicVotes(near centre: Coordinate, within radius: Distance, at now: Timestamp, limit: Int) async throws -> [Vote] {
        held.read { held in
            held.grid.nearest(to: centre, within: radius, limit: limit, where: { $0.isOpen(at: now) }).map(\.item)
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

    public func ballots(by voter: UserID) async throws -> [Ballot] { try await record.ballots(by: voter) }

    public func votes(of user: UserID, role: VoteRole, limit: Int) async throws -> [Vote] {
        try await record.votes(of: user, role: role, limit: limit)
    }

}
