extension VoteService {
    // MARK: The initiator's controls

    /// Closes, cancels, extends, edits or publishes the caller's vote (`Vote.apply` holds the rules), and tells
    /// those in it at once when the change ended voting, settling or the vote.
    public func change(_ id: VoteID, _ change: VoteChange, by identity: Identity, from address: ClientAddress) async throws -> VoteView {
        let vote = try await initiated(id, by: identity, from: address)
        // The clock is read under the vote's lock: a change checked against a moment before an announcement
        // was claimed could reopen, reword or re-date what was announced.
        let clock = clock
        guard let changed = try await stores.votes.updateVote(vote.id, { vote in try vote.apply(change, at: clock.now) }) else {
            throw ServiceError.notFound(.vote)
        }
        if changed.state(at: clock.now) != .open { try await announceFinishes() }
        return try await view(changed)
    }
}
