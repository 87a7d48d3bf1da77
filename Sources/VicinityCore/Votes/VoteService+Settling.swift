extension VoteService {
    // MARK: Name conflicts

    /// Ballots of the vote whose voters' names read the same, for its initiator to settle; by name.
    public func conflicts(in id: VoteID, by identity: Identity, from address: ClientAddress) async throws -> [NameConflict] {
        let vote = try await initiated(id, by: identity, from: address)
        guard !vote.anonymous else { throw ServiceError.conflict(.anonymousVote) }
        let groups = Ballot.nameConflicts(among: try await stores.votes.ballots(of: id))
        let people = try await accounts(of: groups.flatMap { $0.compactMap(\.voter) })
        return groups.map { group in
            NameConflict(name: group[0].voterName ?? "", ballots: group.compactMap { ballot in
                ballot.voter.flatMap { people[$0] }.map { BallotSummary(ballot, voter: $0) }
            })
        }
    }

    /// Voids (`counted` false) or restores a ballot of a name conflict, only while the vote settles
    /// (`Vote.checkCountChange`): never while it is open, since voiding at will would let an initiator isolate
    /// one person's choice (`Ballot.checkSettling`); never once its result is out, since comparing two
    /// published tallies would tell what the changed ballot chose.
    public func setCounted(
        _ counted: Bool, ballot ballotID: BallotID, in id: VoteID, by identity: Identity, from address: ClientAddress
    ) async throws -> BallotSummary {
        let vote = try await initiated(id, by: identity, from: address)
        guard !vote.anonymous else { throw ServiceError.conflict(.anonymousVote) }
        // The clock is read under the vote's lock, so that no announcement claimed meanwhile is overtaken.
        let clock = clock
        guard let ballot = try await stores.votes.setCounted(counted, ballot: ballotID, of: id, rule: { vote, ballots in
            try vote.checkCountChange(ballotID, counted: counted, among: ballots, at: clock.now)
        }) else { throw ServiceError.notFound(.ballot) }
        guard let voterID = ballot.voter, let voter = try await accounts(of: [voterID])[voterID] else {
            throw ServiceError.notFound(.ballot)
        }
        return BallotSummary(ballot, voter: voter)
    }
}
