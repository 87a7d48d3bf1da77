/// What an initiator does to their vote.
public enum VoteChange: Hashable, Sendable {
    /// Ends voting now, with the ballots cast so far.
    case close
    /// Calls the vote off: no result.
    case cancel
    /// Gives a timed vote more time, once.
    case extend(VoteDuration)
    /// Changes what the vote asks, before anyone has voted.
    case edit(subject: VoteSubject?, options: VoteOptions?)
    /// Ends settling and publishes the result.
    case publish
}

extension Vote {
    /// The vote after `change` at `now`, or why the change is refused. The rules live here, once; stores apply
    /// them under the vote's lock (`VoteStore.updateVote`), so two changes never both pass against one state.
    public mutating func apply(_ change: VoteChange, at now: Timestamp) throws(ServiceError) {
        let state = state(at: now)
        switch change {
        case .close:
            guard state == .open else { throw Self.refusal(in: state) }
            closedAt = now
        case .cancel:
            switch state {
            case .open, .settling: cancelledAt = now
            case .finished: throw .conflict(.resultFinal)
            case .cancelled: throw .conflict(.voteCancelled)
            }
        case .extend(let more):
            guard state == .open else { throw Self.refusal(in: state) }
            guard duration != .permanent else { throw .conflict(.permanentVote) }
            guard more != .permanent else {
                throw .invalid("duration", "must be one of 5m, 15m, 30m, 60m: an extension is a length of time")
            }
            guard extendedBy == nil else { throw .conflict(.alreadyExtended) }
            extendedBy = more
        case .edit(let subject, let options):
            guard state == .open else { throw Self.refusal(in: state) }
            guard ballotsCast == 0 else { throw .conflict(.ballotsAlreadyCast) }
            if let subject { self.subject = subject }
            if let options { self.options = options }
        case .publish:
            switch state {
            case .settling: publishedAt = now
            case .open: throw .conflict(.voteOpen)
            case .finished: throw .conflict(.resultFinal)
            case .cancelled: throw .conflict(.voteCancelled)
            }
        }
        revision += 1
    }

    /// Whether the initiator may set `ballot` to `counted` at `now`: only while the vote settles, and only by
    /// the rule of name conflicts (`Ballot.checkSettling`).
    public func checkCountChange(
        _ ballot: BallotID, counted: Bool, among ballots: [Ballot], at now: Timestamp
    ) throws(ServiceError) {
        switch state(at: now) {
        case .open: throw .conflict(.voteOpen)
        case .finished: throw .conflict(.resultFinal)
        case .cancelled: throw .conflict(.voteCancelled)
        case .settling: try Ballot.checkSettling(ballot, counted: counted, among: ballots)
        }
    }

    /// Refuses (as a store fault) a change that altered a field other than those an initiator changes, which
    /// the SQL stores would not write: every store calls it after `VoteStore.updateVote`'s closure, so that the
    /// three agree on what such a change may touch.
    public func checkInitiatorChange(from old: Vote) throws(StoreError) {
        var expected = old
        expected.subject = subject
        expected.options = options
        expected.extendedBy = extendedBy
        expected.closedAt = closedAt
        expected.cancelledAt = cancelledAt
        expected.publishedAt = publishedAt
        expected.revision = revision
        guard expected == self else { throw StoreError.database("a change of vote \(id) touched a field an initiator does not change") }
    }

    /// Why a change that needs an open vote is refused in `state`.
    private static func refusal(in state: VoteState) -> ServiceError {
        switch state {
        case .open, .settling, .finished: .conflict(.voteFinished)
        case .cancelled: .conflict(.voteCancelled)
        }
    }
}
