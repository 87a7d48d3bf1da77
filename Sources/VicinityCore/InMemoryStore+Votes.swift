import GeoCore
import Synchronization

/// The votes of the in-memory store: the reference the SpatiaLite store is held to. Each call holds the one
/// lock from start to end, so every call is atomic, as a database transaction is.
struct VoteTables {
    var votes: [VoteID: StoredVote] = [:]
    /// Ballots per vote, in the order cast.
    var ballots: [VoteID: [Ballot]] = [:]
}

extension InMemoryStore: VoteStore {
    public func createVote(_ vote: Vote, passwordHash: PasswordHash) async throws -> Bool {
        changing { state in
            guard state.votes.votes[vote.id] == nil else { return (false, []) }
            state.votes.votes[vote.id] = StoredVote(vote: vote, passwordHash: passwordHash)
            return (true, [.vote(vote.id)])
        }
    }

    public func vote(id: VoteID) async throws -> Vote? {
        state.withLock { $0.votes.votes[id]?.vote }
    }

    public func voteForBallot(id: VoteID) async throws -> (vote: Vote, passwordHash: PasswordHash)? {
        state.withLock { state in state.votes.votes[id].map { ($0.vote, $0.passwordHash) } }
    }

    public func openPublicVotes(near centre: Coordinate, within radius: Distance, at now: Timestamp, limit: Int) async throws -> [Vote] {
        let candidates = state.withLock { state in
            state.votes.votes.values.map(\.vote).filter { $0.visibility == .public && $0.isOpen(at: now) }
        }
        return Ranking.nearest(candidates, to: centre, within: radius, limit: limit, at: \.location, id: \.id).map(\.item)
    }

    public func openPublicVotes(at now: Timestamp) async throws -> [Vote] {
        state.withLock { state in
            state.votes.votes.values.map(\.vote).filter { $0.visibility == .public && $0.isOpen(at: now) }
        }
    }

    public func castBallot(_ ballot: Ballot, answering question: VoteQuestion) async throws -> BallotOutcome {
        changing { state in
            guard var entry = state.votes.votes[ballot.vote] else { return (.noSuchVote, []) }
            let ballots = state.votes.ballots[ballot.vote] ?? []
            let outcome = entry.cast(
                ballot, answering: question, votersBallot: ballots.first { $0.voter == ballot.voter },
                sameNameBallots: ballots.count { $0.nameKey == ballot.nameKey })
            guard case .cast = outcome else { return (outcome, []) }
            state.votes.votes[ballot.vote] = entry
            state.votes.ballots[ballot.vote, default: []].append(ballot)
            return (outcome, [.vote(ballot.vote)])
        }
    }

    public func ballots(of vote: VoteID) async throws -> [Ballot] {
        state.withLock { state in Self.inOrderCast(state.votes.ballots[vote] ?? []) }
    }

    public func ballot(of vote: VoteID, by voter: UserID) async throws -> Ballot? {
        state.withLock { $0.votes.ballots[vote]?.first { $0.voter == voter } }
    }

    public func setCounted(
        _ counted: Bool, ballot id: BallotID, of vote: VoteID, rule: @escaping @Sendable (Vote, [Ballot]) throws -> Void
    ) async throws -> Ballot? {
        try state.withLock { state in
            guard let entry = state.votes.votes[vote], let index = state.votes.ballots[vote]?.firstIndex(where: { $0.id == id })
            else { return nil }
            try rule(entry.vote, Self.inOrderCast(state.votes.ballots[vote] ?? []))
            state.votes.ballots[vote]?[index].counted = counted
            return state.votes.ballots[vote]?[index]
        }
    }

    public func updateVote(_ id: VoteID, _ change: @escaping @Sendable (inout Vote) throws -> Void) async throws -> Vote? {
        try changing { state in
            guard var entry = state.votes.votes[id] else { return (nil, []) }
            let old = entry.vote
            try change(&entry.vote)
            try entry.vote.checkInitiatorChange(from: old)
            state.votes.votes[id] = entry
            return (entry.vote, [.vote(id)])
        }
    }

    public func ballots(by voter: UserID) async throws -> [Ballot] {
        state.withLock { state in Self.inOrderCast(state.votes.ballots.values.flatMap { $0.filter { $0.voter == voter } }) }
    }

    public func votes(of user: UserID, role: VoteRole, limit: Int) async throws -> [Vote] {
        state.withLock { state in
            let mine: [Vote]
            switch role {
            case .initiated:
                mine = state.votes.votes.values.map(\.vote).filter { $0.initiator == user }
            case .attended:
                mine = state.votes.ballots.filter { $0.value.contains { $0.voter == user } }.keys
                    .compactMap { state.votes.votes[$0]?.vote }
            }
            let newestFirst = mine.sorted { a, b in a.createdAt != b.createdAt ? a.createdAt > b.createdAt : a.id > b.id }
            return Array(newestFirst.prefix(limit))
        }
    }

    public func announce(
        at now: Timestamp, limit: Int, _ announcements: @escaping @Sendable (Vote, [Ballot]) -> [EventDraft]
    ) async throws -> (votes: [Vote], events: [Event]) {
        changing { state in
            let due = state.votes.votes.values
                .filter { $0.isAnnouncementDue(at: now) }
                .sorted { a, b in (a.announcementDueAt ?? now, a.vote.id) < (b.announcementDueAt ?? now, b.vote.id) }
                .prefix(limit)
            var claimed: [Vote] = []
            var drafts: [EventDraft] = []
            for var entry in due {
                guard entry.claimAnnouncement(at: now) else { continue }
                state.votes.votes[entry.vote.id] = entry
                claimed.append(entry.vote)
                drafts += announcements(entry.vote, Self.inOrderCast(state.votes.ballots[entry.vote.id] ?? []))
            }
            let events = state.social.append(drafts)
            return ((claimed, events), claimed.map { .vote($0.id) } + events.map { .event($0.id, recipient: $0.recipient) })
        }
    }

    private static func inOrderCast(_ ballots: [Ballot]) -> [Ballot] {
        ballots.sorted { a, b in a.castAt != b.castAt ? a.castAt < b.castAt : a.id < b.id }
    }
}
