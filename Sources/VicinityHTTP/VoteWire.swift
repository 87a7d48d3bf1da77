import GeoCore
import VicinityCore

/// The wire form of votes, ballots and results. A vote's public facts never carry a tally, a choice or a
/// password; a choice appears only in its own voter's `your_ballot` and ballot receipt.
extension Wire {
    static func vote(_ view: VoteView) -> [String: JSONValue] {
        let vote = view.vote
        var fields: [String: JSONValue] = [
            "id": .string(vote.id.rawValue),
            "subject": .string(vote.subject.rawValue),
            "options": .array(vote.options.texts.map(JSONValue.string)),
            "participants": .number(Double(vote.participants.value)),
            "ballots_cast": .number(Double(vote.ballotsCast)),
            "duration": .string(vote.duration.description),
            "visibility": .string(vote.visibility.rawValue),
            "anonymous": .bool(vote.anonymous),
            "verified_only": .bool(vote.verifiedOnly),
            "label": .string(vote.label),
            // Null once the initiator deleted their account.
            "initiator_name": view.initiatorName.map(JSONValue.string) ?? .null,
            "created_at": .string(vote.createdAt.rfc3339),
            "closes_at": vote.closesAt.map { .string($0.rfc3339) } ?? .null,
            "extended_by": vote.extendedBy.map { .string($0.description) } ?? .null,
            "state": .string(view.state.name),
            "finish_reason": .null,
            "ended_at": .null,
            "settling_until": .null,
            "finished_at": .null,
            "cancelled_at": .null,
        ]
        func time(_ value: Timestamp) -> JSONValue { .string(value.rfc3339) }
        switch view.state {
        case .open:
            break
        case .settling(let reason, let endedAt, let until):
            fields["finish_reason"] = .string(reason.rawValue)
            fields["ended_at"] = time(endedAt)
            fields["settling_until"] = time(until)
        case .finished(let reason, let at):
            fields["finish_reason"] = .string(reason.rawValue)
            fields["ended_at"] = vote.ending(at: at).map { time($0.at) } ?? time(at)
            fields["finished_at"] = time(at)
        case .cancelled(let at):
            fields["cancelled_at"] = time(at)
        }
        return fields
    }

    static func voteListing(_ listing: VoteListing) -> JSONValue {
        var fields = vote(listing.view)
        fields["distance_m"] = .number(listing.distance.meters)
        fields["bearing_deg"] = .number(listing.bearing.degrees)
        return .object(fields)
    }

    /// The caller's own ballot: the only answer that names a choice, and only to its voter.
    static func ownBallot(_ ballot: Ballot) -> JSONValue { ownBallot(OwnBallot(ballot)) }

    /// The vote read by its id: its public facts and the caller's own ballot.
    static func voteDetail(_ detail: VoteDetail) -> JSONValue {
        var fields = vote(detail.view)
        fields["your_ballot"] = detail.yourBallot.map(ownBallot) ?? .null
        fields["you_initiated"] = .bool(detail.youInitiated)
        return .object(fields)
    }

    static func result(_ result: VoteResult) -> JSONValue {
        var fields = outcome(VoteOutcome(result))
        fields["voters"] = result.voters.map { voters in
            .array(voters.map { .object(["name": $0.name.map(JSONValue.string) ?? .null, "counted": .bool($0.counted)]) })
        } ?? .null
        fields["vote"] = .object(vote(result.view))
        return .object(fields)
    }

    /// A ballot as its vote's initiator sees it: who and whether counted, never what it chose.
    static func ballotSummary(_ ballot: BallotSummary) -> JSONValue {
        .object([
            "id": .string(ballot.id.rawValue),
            "voter": summary(ballot.voter),
            "voter_since": .string(ballot.voterSince.rfc3339),
            "voter_email": ballot.voterEmail.map(JSONValue.string) ?? .null,
            "name": .string(ballot.voterName),
            "cast_at": .string(ballot.castAt.rfc3339),
            "counted": .bool(ballot.counted),
        ])
    }

    static func conflict(_ conflict: NameConflict) -> JSONValue {
        .object(["name": .string(conflict.name), "ballots": .array(conflict.ballots.map(ballotSummary))])
    }

    static func historyEntry(_ entry: VoteHistoryEntry) -> JSONValue {
        var fields = vote(entry.view)
        fields["roles"] = .array(entry.roles.map { .string($0.rawValue) })
        return .object(fields)
    }
}
