import GeoCore
import VicinityCore

/// The wire form of events and of the people they name: what a stream's `data:` line carries.
extension Wire {
    /// A person as others see them, the same in answers and events: id, username, first and last name.
    static func summaryFields(_ person: UserSummary) -> [String: JSONValue] {
        [
            "id": .string(person.id.rawValue),
            "username": .string(person.username.rawValue),
            "first_name": .string(person.firstName.rawValue),
            "last_name": .string(person.lastName.rawValue),
        ]
    }

    static func summary(_ person: UserSummary) -> JSONValue { .object(summaryFields(person)) }

    /// The event as its recipient's app reads it: what it tells, with `id`, `type` and `at`.
    public static func event(_ event: Event) -> JSONValue {
        var fields = payload(event.payload)
        fields["id"] = .string(event.id.description)
        fields["type"] = .string(event.type.rawValue)
        fields["at"] = .string(event.createdAt.rfc3339)
        return .object(fields)
    }

    public static func payload(_ payload: EventPayload) -> [String: JSONValue] {
        switch payload {
        case .poke(let from):
            return ["from": summary(from)]
        case .friendRequest(let id, let from):
            return ["request_id": .string(id.rawValue), "from": summary(from)]
        case .friendAccepted(let friend), .friendVisibility(let friend):
            return ["friend": summary(friend)]
        case .sharingEnded(let friend, let share):
            return ["friend": summary(friend), "share": .string(share.rawValue)]
        case .friendArrived(let notice), .friendLeft(let notice), .friendNearby(let notice):
            return [
                "alert_id": .string(notice.alert.rawValue), "friend": summary(notice.friend),
                "place_name": notice.placeName.map(JSONValue.string) ?? .null, "radius_m": .number(notice.radius.meters),
            ]
        case .voteFinished(let notice):
            return [
                "vote_id": .string(notice.vote.rawValue), "subject": .string(notice.subject),
                "reason": .string(notice.reason.rawValue), "ballots_cast": .number(Double(notice.ballotsCast)),
                "participants": .number(Double(notice.participants)), "result": .object(outcome(notice.outcome)),
            ]
        case .voteConflict(let notice):
            return [
                "vote_id": .string(notice.vote.rawValue), "subject": .string(notice.subject),
                "conflicts": .array(notice.conflicts.map { .object(["name": .string($0.name), "ballots": .number(Double($0.ballots))]) }),
                "settling_until": .string(notice.settlingUntil.rfc3339),
            ]
        case .voteCancelled(let notice), .voteProgress(let notice):
            return [
                "vote_id": .string(notice.vote.rawValue), "subject": .string(notice.subject),
                "ballots_cast": .number(Double(notice.ballotsCast)), "participants": .number(Double(notice.participants)),
            ]
        }
    }

    /// A vote's outcome without the voters' names, as one person reads it: what `vote_finished` carries, and
    /// what `GET /v1/votes/{id}/result` adds the names to.
    static func outcome(_ outcome: VoteOutcome) -> [String: JSONValue] {
        [
            "tally": .array(outcome.options.indices.map { index in
                .object([
                    "index": .number(Double(index)),
                    "option": .string(outcome.options[index]),
                    "ballots": .number(Double(outcome.tally.indices.contains(index) ? outcome.tally[index] : 0)),
                ])
            }),
            "winners": .array(outcome.winners.map { .number(Double($0)) }),
            "participants": .number(Double(outcome.participants)),
            "ballots_cast": .number(Double(outcome.ballotsCast)),
            "ballots_counted": .number(Double(outcome.ballotsCounted)),
            "ballots_voided": .number(Double(outcome.ballotsVoided)),
            "settlement": outcome.settlement.map(settlement) ?? .null,
            "your_ballot": outcome.yourBallot.map(ownBallot) ?? .null,
        ]
    }

    /// `{"by": "initiator" | "time", "at": …}`.
    static func settlement(_ settlement: Settlement) -> JSONValue {
        .object(["by": .string(settlement.by.rawValue), "at": .string(settlement.at.rfc3339)])
    }

    /// The caller's own ballot: the only form that names a choice, and only to its voter.
    static func ownBallot(_ ballot: OwnBallot) -> JSONValue {
        .object([
            "id": .string(ballot.id.rawValue),
            "option": .number(Double(ballot.option)),
            "counted": .bool(ballot.counted),
            "cast_at": .string(ballot.castAt.rfc3339),
        ])
    }
}
