import GeoCore
import VicinityCore

extension SQLCondition {
    /// A vote open at `now` (`StoredVote.takesBallots`): comparisons of what its rules stored.
    static func listedOpen(at now: Timestamp) -> SQLCondition {
        .and([.equals("taking_ballots", .bool(true)), .or([.isNull("voting_ends_at"), .compare("voting_ends_at", .greater, .time(now))])])
    }

    static func vote(_ id: VoteID) -> SQLCondition { .equals("id", .text(id.rawValue)) }

    static func ballots(of vote: VoteID) -> SQLCondition { .equals("vote_id", .text(vote.rawValue)) }
}

extension SQLPlan {
    /// Reads the vote under its lock (a row lock in PostgreSQL; SQLite's one writer) and goes on with it.
    static func lockedVote(_ id: VoteID, _ next: @escaping @Sendable (StoredVote?) throws -> SQLPlan) -> SQLPlan {
        .select(StoredVote.self, where: .vote(id), lock: .forUpdate) { try next($0.first) }
    }

    /// The vote's ballots in the order cast (ties by id).
    static func ballots(of vote: VoteID, _ next: @escaping @Sendable ([Ballot]) throws -> SQLPlan) -> SQLPlan {
        .select(Ballot.self, where: .ballots(of: vote), order: [.ascending("cast_at"), .ascending("id")], next)
    }
}

extension SQLRecordStore {
    public func createVote(_ vote: Vote, passwordHash: PasswordHash) async throws -> Bool {
        try await write(.finish([StoredVote.insert(StoredVote(vote: vote, passwordHash: passwordHash), conflict: .ignore)]) {
            $0.first?.count == 1
        })
    }

    public func vote(id: VoteID) async throws -> Vote? {
        try await records(StoredVote.self, where: .vote(id)).first?.vote
    }

    public func voteForBallot(id: VoteID) async throws -> (vote: Vote, passwordHash: PasswordHash)? {
        try await records(StoredVote.self, where: .vote(id)).first.map { ($0.vote, $0.passwordHash) }
    }

    public func openPublicVotes(near centre: Coordinate, within radius: Distance, at now: Timestamp, limit: Int) async throws -> [Vote] {
        let candidates = try await records(
            StoredVote.self, where: .and([.near(centre, within: radius), .equals("visibility", .text("public")), .listedOpen(at: now)]))
        return Ranking.nearest(candidates.map(\.vote), to: centre, within: radius, limit: limit, at: \.location, id: \.id).map(\.item)
    }

    public func openPublicVotes(at now: Timestamp) async throws -> [Vote] {
        try await records(StoredVote.self, where: .and([.equals("visibility", .text("public")), .listedOpen(at: now)])).map(\.vote)
    }

    /// Under the vote's lock: ballots of one vote take turns, so the open check, the one-per-voter check, the
    /// count and the completion are one step (`StoredVote.cast`), however many race.
    public func castBallot(_ ballot: Ballot, answering question: VoteQuestion) async throws -> BallotOutcome {
        try await write(.lockedVote(ballot.vote) { found in
            guard let before = found else { return .done(.noSuchVote) }
            return .select(Ballot.self, where: .and([.ballots(of: ballot.vote), .equals("voter_id", .optionalText(ballot.voter?.rawValue))])) { mine in
                .count(Ballot.self, where: .and([.ballots(of: ballot.vote), .equals("name_key", .optionalText(ballot.nameKey))])) { sameName in
                    var stored = before
                    let outcome = stored.cast(ballot, answering: question, votersBallot: mine.first, sameNameBallots: sameName)
                    guard case .cast = outcome else { return .done(outcome) }
                    return .writing([Ballot.insert(ballot), StoredVote.update(stored)], result: outcome)
                }
            }
        })
    }

    public func ballots(of vote: VoteID) async throws -> [Ballot] {
        try await read(.ballots(of: vote) { .done($0) })
    }

    public func ballot(of vote: VoteID, by voter: UserID) async throws -> Ballot? {
        try await records(Ballot.self, where: .and([.ballots(of: vote), .equals("voter_id", .text(voter.rawValue))])).first
    }

    /// Under the vote's lock, as ballots are cast: a void never interleaves with the ballot that ends the vote,
    /// nor with another void.
    public func setCounted(
        _ counted: Bool, ballot id: BallotID, of vote: VoteID, rule: @escaping @Sendable (Vote, [Ballot]) throws -> Void
    ) async throws -> Ballot? {
        try await write(.lockedVote(vote) { found in
            guard let stored = found else { return .done(nil) }
            return .ballots(of: vote) { ballots in
                guard var ballot = ballots.first(where: { $0.id == id }) else { return .done(nil) }
                try rule(stored.vote, ballots)
                ballot.counted = counted
                return .writing([Ballot.update(ballot)], result: ballot)
            }
        })
    }

    /// Under the vote's lock: two changes, or a change and a ballot, never both pass against one state.
    public func updateVote(_ id: VoteID, _ change: @escaping @Sendable (inout Vote) throws -> Void) async throws -> Vote? {
        try await write(.lockedVote(id) { found in
            guard var stored = found else { return .done(nil) }
            let before = stored.vote
            try change(&stored.vote)
            try stored.vote.checkInitiatorChange(from: before)
            return .writing([StoredVote.update(stored)], result: stored.vote)
        })
    }

    public func ballots(by voter: UserID) async throws -> [Ballot] {
        try await records(Ballot.self, where: .equals("voter_id", .text(voter.rawValue)), order: [.ascending("cast_at"), .ascending("id")])
    }

    public func votes(of user: UserID, role: VoteRole, limit: Int) async throws -> [Vote] {
        let newestFirst: [SQLOrder] = [.descending("created_at"), .descending("id")]
        switch role {
        case .initiated:
            return try await records(StoredVote.self, where: .equals("initiator_id", .text(user.rawValue)), order: newestFirst, limit: limit)
                .map(\.vote)
        case .attended:
            return try await read(.select(Ballot.self, where: .equals("voter_id", .text(user.rawValue))) { ballots in
                .select(StoredVote.self, where: .among("id", Set(ballots.map(\.vote.rawValue)).sorted().map(SQLValue.text)),
                        order: newestFirst, limit: limit) { .done($0.map(\.vote)) }
            })
        }
    }

    /// Each vote is claimed by the one transaction that locks it; others skip locked rows, and a row already
    /// claimed and committed is no longer due when it is read again under its lock.
    public func announce(
        at now: Timestamp, limit: Int, _ announcements: @escaping @Sendable (Vote, [Ballot]) -> [EventDraft]
    ) async throws -> (votes: [Vote], events: [Event]) {
        try await write(.select(
            StoredVote.self, where: .compare("announcement_due_at", .atMost, .time(now)),
            order: [.ascending("announcement_due_at"), .ascending("id")], limit: limit, lock: .skipLocked
        ) { due in
            Self.claiming(due[...], at: now, claimed: [], drafts: [], announcements)
        })
    }

    /// Claims the votes one after another, reading each one's ballots, then records the claims and their events.
    private static func claiming(
        _ due: ArraySlice<StoredVote>, at now: Timestamp, claimed: [StoredVote], drafts: [EventDraft],
        _ announcements: @escaping @Sendable (Vote, [Ballot]) -> [EventDraft]
    ) -> SQLPlan<(votes: [Vote], events: [Event])> {
        guard var next = due.first else {
            return .writing(claimed.map { StoredVote.update($0) }) { _ in
                .appending(drafts) { events in .done((claimed.map(\.vote), events)) }
            }
        }
        guard next.claimAnnouncement(at: now) else {
            return claiming(due.dropFirst(), at: now, claimed: claimed, drafts: drafts, announcements)
        }
        let vote = next
        return .ballots(of: vote.vote.id) { ballots in
            claiming(due.dropFirst(), at: now, claimed: claimed + [vote], drafts: drafts + announcements(vote.vote, ballots), announcements)
        }
    }
}
