extension VoteService {
    /// Makes every announcement due since the last call, each once however many servers or calls race: to the
    /// initiator when a vote begins settling name conflicts, and to the voters and the initiator when it
    /// finishes or is cancelled. Each claim is recorded with its events in one transaction, so a failure
    /// leaves the announcement owed for the next call rather than lost. What a ballot, close, cancel or
    /// publish causes is announced at once; what the clock causes waits for the next call, which the server
    /// makes every second. Returns how many votes.
    @discardableResult
    public func announceFinishes() async throws -> Int {
        var announced = 0
        while true {
            let now = clock.now
            let claimed = try await stores.votes.announce(at: now, limit: Self.announcementBatch) { vote, ballots in
                VoteAnnouncements.events(of: vote, ballots: ballots, at: now)
            }
            announced += claimed.votes.count
            if claimed.votes.count < Self.announcementBatch { return announced }
        }
    }

}

/// What is told of a vote when its announcement is claimed.
public enum VoteAnnouncements {
    /// The events that announce what `vote` has come to at `now`, given its ballots: the name conflicts to its
    /// initiator while it settles; the result, or its cancelling, to everyone in it (its initiator and its
    /// voters), each result with its recipient's own ballot.
    public static func events(of vote: Vote, ballots: [Ballot], at now: Timestamp) -> [EventDraft] {
        // Those who deleted their accounts are told nothing.
        let everyone = Set(ballots.compactMap(\.voter) + [vote.initiator].compactMap { $0 }).sorted()
        let state = vote.state(at: now)
        switch state {
        case .open:
            return []
        case .settling(_, let endedAt, let until):
            guard let initiator = vote.initiator else { return [] }
            let names = Ballot.nameConflicts(among: ballots).map { NameCount(name: $0[0].voterName ?? "", ballots: $0.count) }
            return [.voteConflict(to: initiator, vote: vote, names: names, until: until, at: endedAt)]
        case .cancelled(let at):
            return everyone.map { .voteCancelled(to: $0, vote: vote, at: at) }
        case .finished(let reason, let at):
            // Counted once; each event differs only in its recipient's ballot. The initiator's name is no part
            // of a result.
            var result = VoteResult(vote: VoteView(vote: vote, initiatorName: nil, state: state), ballots: ballots, for: vote.initiator)
            let byVoter = Dictionary(ballots.compactMap { ballot in ballot.voter.map { ($0, ballot) } }) { first, _ in first }
            return everyone.map { recipient in
                result.yourBallot = byVoter[recipient]
                return .voteFinished(to: recipient, vote: vote, reason: reason, at: at, result: result)
            }
        }
    }
}
