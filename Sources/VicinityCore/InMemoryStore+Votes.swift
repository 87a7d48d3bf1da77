import GeoCore
import Synchronization

/// The votes of the in-memory store: the reference the SpatiaLite store is held to. Each call holds the one
/// lock from start to end, so every call is atomic, as a database transaction is.
struct VoteTables {
    var votes: [VoteID: (vote: Vote, passwordHash: PasswordHash, announced: Bool)] = [:]
    /// Ballots per vote, in the order cast.
    var ballots: [VoteID: [Ballot]] = [:]
}

extension InMemoryStore: VoteStore {
    public func createVote(_ vote: Vote, passwordHash: PasswordHash) async throws -> Bool {
        changing { state in
            guard state.votes.votes[vote.id] == nil else { return (false, []) }
            state.votes.votes[vote.id] = (vote, passwordHash, false)
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

    public func castBallot(_ ballot: Ballot) async throws -> BallotOutcome {
        changing { state in
            guard var entry = state.votes.votes[ballot.vote] else { return (.noSuchVote, []) }
            guard entry.vote.isOpen(at: ballot.castAt) else { return (.finished, []) }
            var ballots = state.votes.ballots[ballot.vote] ?? []
            guard !ballots.contains(where: { $0.voter == ballot.voter }) else { return (.alreadyVoted, []) }
            ballots.append(ballot)
            entry.vote.ballotsCast += 1
            if entry.vote.ballotsCast == entry.vote.participants.value { entry.vote.completedAt = ballot.castAt }
            state.votes.votes[ballot.vote] = entry
            state.votes.ballots[ballot.vote] = ballots
            let key = ballot.nameKey
            return (.cast(vote: entry.vote, sameName: ballots.count { $0.nameKey == key }), [.vote(ballot.vote)])
        }
    }

    public func ballots(of vote: VoteID) async throws -> [Ballot] {
        state.withLock { state in
            (state.votes.ballots[vote] ?? []).sorted { a, b in a.castAt != b.castAt ? a.castAt < b.castAt : a.id < b.id }
        }
    }

    public func ballot(of vote: VoteID, by voter: UserID) async throws -> Ballot? {
        state.withLock { $0.votes.ballots[vote]?.first { $0.voter == voter } }
    }

    public func setCounted(_ counted: Bool, ballot id: BallotID, of vote: VoteID, at now: Timestamp) async throws -> CountChange {
        state.withLock { state in
            guard let entry = state.votes.votes[vote], let index = state.votes.ballots[vote]?.firstIndex(where: { $0.id == id })
            else { return .noSuchBallot }
            guard entry.vote.isOpen(at: now) else { return .voteFinished }
            state.votes.ballots[vote]?[index].counted = counted
            guard let ballot = state.votes.ballots[vote]?[index] else { return .noSuchBallot }
            return .changed(ballot)
        }
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

    public func claimFinishAnnouncements(at now: Timestamp, limit: Int) async throws -> [Vote] {
        changing { state in
            let due = state.votes.votes.values
                .filter { !$0.announced && !$0.vote.isOpen(at: now) }
                .map(\.vote)
                .sorted { a, b in
                    let (ta, tb) = (a.finishTime(at: now), b.finishTime(at: now))
                    return ta != tb ? ta < tb : a.id < b.id
                }
                .prefix(limit)
            for vote in due { state.votes.votes[vote.id]?.announced = true }
            return (Array(due), due.map { .vote($0.id) })
        }
    }
}

extension Vote {
    /// When a finished vote finished; `now` for an open one.
    func finishTime(at now: Timestamp) -> Timestamp {
        if case .finished(_, let time) = state(at: now) { time } else { now }
    }
}
