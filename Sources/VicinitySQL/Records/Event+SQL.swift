import GeoCore
import VicinityCore

extension Event: SQLRecord {
    /// The draft's columns (`EventDraft.schema`), numbered.
    public static let schema = RecordSchema<Event>(
        "event", key: ["id"], followed: true,
        fields: [SQLField("id", .integer, .identity) { .integer($0.id.rawValue) }] + EventDraft.schema.fields.map { $0.reading(\.draft) })

    public init(row: some SQLRow) throws(StoreError) {
        let id = try row.integer("id")
        self.init(id: EventID(id), draft: try EventDraft(row: row, of: "event \(id)"))
    }

    /// The event as it was before the database numbered it.
    var draft: EventDraft { EventDraft(recipient: recipient, payload: payload, createdAt: createdAt) }
}

extension EventDraft: SQLRecord {
    /// An event before the database numbers it: the `event` table without its `id`.
    public static let schema = RecordSchema<EventDraft>(
        "event", key: [], followed: true,
        fields: [
            SQLField("recipient_id", .text) { .text($0.recipient.rawValue) },
            SQLField("type", .text) { .text($0.type.rawValue) },
            SQLField("data", .json(postgresType: "json")) { .text(StoredEventData.text($0.payload)) },
            SQLField("created_at", .integer) { .time($0.createdAt) },
            SQLField("about_id", .text, .rule(version: EventDraft.aboutRuleVersion)) { .optionalText($0.payload.about?.rawValue) },
        ])

    /// The version of the rule that fills `about_id` (`EventPayload.about`).
    public static let aboutRuleVersion = 1

    public init(row: some SQLRow) throws(StoreError) {
        try self.init(row: row, of: "an event")
    }

    /// `what` names the row in what a corrupt one is said to be.
    init(row: some SQLRow, of what: String) throws(StoreError) {
        self.init(
            recipient: try UserID.stored(try row.text("recipient_id")),
            payload: try StoredEventData.payload(type: try row.text("type"), data: try row.text("data"), of: what),
            createdAt: try row.time("created_at"))
    }
}

/// How events' payloads are kept in the `data` column: a JSON object per kind, whose members are fixed once
/// written, since rows outlive the code that wrote them (for the retention window). They are the members the
/// event stream carried when the column was made, so rows written before typed payloads read back as they
/// were. The wire form is VicinityHTTP's, and may change without touching rows kept here.
enum StoredEventData {
    static func text(_ payload: EventPayload) -> String {
        String(decoding: JSONValue.object(object(payload)).jsonBytes, as: UTF8.self)
    }

    static func object(_ payload: EventPayload) -> [String: JSONValue] {
        switch payload {
        case .poke(let from):
            return ["from": person(from)]
        case .friendRequest(let id, let from):
            return ["request_id": .string(id.rawValue), "from": person(from)]
        case .friendAccepted(let friend), .friendVisibility(let friend):
            return ["friend": person(friend)]
        case .sharingEnded(let friend, let share):
            return ["friend": person(friend), "share": .string(share.rawValue)]
        case .friendArrived(let notice), .friendLeft(let notice), .friendNearby(let notice):
            return [
                "alert_id": .string(notice.alert.rawValue), "friend": person(notice.friend),
                "place_name": notice.placeName.map(JSONValue.string) ?? .null, "radius_m": .number(notice.radius.meters),
            ]
        case .voteFinished(let notice):
            return [
                "vote_id": .string(notice.vote.rawValue), "subject": .string(notice.subject),
                "reason": .string(notice.reason.rawValue), "ballots_cast": number(notice.ballotsCast),
                "participants": number(notice.participants), "result": .object(outcome(notice.outcome)),
            ]
        case .voteConflict(let notice):
            return [
                "vote_id": .string(notice.vote.rawValue), "subject": .string(notice.subject),
                "conflicts": .array(notice.conflicts.map { .object(["name": .string($0.name), "ballots": number($0.ballots)]) }),
                "settling_until": .string(notice.settlingUntil.rfc3339),
            ]
        case .voteCancelled(let notice), .voteProgress(let notice):
            return [
                "vote_id": .string(notice.vote.rawValue), "subject": .string(notice.subject),
                "ballots_cast": number(notice.ballotsCast), "participants": number(notice.participants),
            ]
        }
    }

    static func payload(type: String, data: String, of what: String) throws(StoreError) -> EventPayload {
        guard let kind = EventType(rawValue: type) else { throw .corrupt("\(what) has the unknown type \(type)") }
        guard case .object(let fields) = try StoredJSON.parse(data, of: "the data of \(what)") else {
            throw .corrupt("the data of \(what) is not a JSON object")
        }
        let data = Reader(fields: fields, what: "the data of \(what)")
        switch kind {
        case .poke:
            return .poke(from: try data.person("from"))
        case .friendRequest:
            return .friendRequest(try FriendRequestID.stored(try data.text("request_id")), from: try data.person("from"))
        case .friendAccepted:
            return .friendAccepted(friend: try data.person("friend"))
        case .friendVisibility:
            return .friendVisibility(friend: try data.person("friend"))
        case .sharingEnded:
            let text = try data.text("share")
            guard let share = ShareLevel(rawValue: text) else { throw data.corrupt("share \(text)") }
            return .sharingEnded(friend: try data.person("friend"), share: share)
        case .friendArrived, .friendLeft, .friendNearby:
            let alertText = try data.text("alert_id")
            guard let alert = AlertID(alertText) else { throw data.corrupt("the malformed alert id \(alertText)") }
            let notice = AlertNotice(
                alert: alert, friend: try data.person("friend"), placeName: try data.optionalText("place_name"),
                radius: Distance(meters: try data.real("radius_m")))
            return kind == .friendArrived ? .friendArrived(notice) : kind == .friendLeft ? .friendLeft(notice) : .friendNearby(notice)
        case .voteFinished:
            let reasonText = try data.text("reason")
            guard let reason = VoteState.FinishReason(rawValue: reasonText) else { throw data.corrupt("reason \(reasonText)") }
            return .voteFinished(VoteFinishedNotice(
                vote: try data.vote("vote_id"), subject: try data.text("subject"), reason: reason,
                ballotsCast: try data.whole("ballots_cast"), participants: try data.whole("participants"),
                outcome: try outcome(try data.object("result"))))
        case .voteConflict:
            let conflicts = try data.array("conflicts").map { value throws(StoreError) in
                let conflict = try data.nested(value, "conflicts")
                return NameCount(name: try conflict.text("name"), ballots: try conflict.whole("ballots"))
            }
            return .voteConflict(VoteConflictNotice(
                vote: try data.vote("vote_id"), subject: try data.text("subject"), conflicts: conflicts,
                settlingUntil: try data.time("settling_until")))
        case .voteCancelled, .voteProgress:
            let notice = VoteCountNotice(
                vote: try data.vote("vote_id"), subject: try data.text("subject"),
                ballotsCast: try data.whole("ballots_cast"), participants: try data.whole("participants"))
            return kind == .voteCancelled ? .voteCancelled(notice) : .voteProgress(notice)
        }
    }

    private static func number(_ value: Int) -> JSONValue { .number(Double(value)) }

    private static func person(_ person: UserSummary) -> JSONValue {
        .object([
            "id": .string(person.id.rawValue), "username": .string(person.username.rawValue),
            "first_name": .string(person.firstName.rawValue), "last_name": .string(person.lastName.rawValue),
        ])
    }

    private static func outcome(_ outcome: VoteOutcome) -> [String: JSONValue] {
        [
            "tally": .array(outcome.options.indices.map { index in
                .object([
                    "index": number(index), "option": .string(outcome.options[index]),
                    "ballots": number(outcome.tally.indices.contains(index) ? outcome.tally[index] : 0),
                ])
            }),
            "winners": .array(outcome.winners.map(number)),
            "participants": number(outcome.participants),
            "ballots_cast": number(outcome.ballotsCast),
            "ballots_counted": number(outcome.ballotsCounted),
            "ballots_voided": number(outcome.ballotsVoided),
            "settlement": outcome.settlement.map { .object(["by": .string($0.by.rawValue), "at": .string($0.at.rfc3339)]) } ?? .null,
            "your_ballot": outcome.yourBallot.map { ballot in
                .object([
                    "id": .string(ballot.id.rawValue), "option": number(ballot.option), "counted": .bool(ballot.counted),
                    "cast_at": .string(ballot.castAt.rfc3339),
                ])
            } ?? .null,
        ]
    }

    private static func outcome(_ data: Reader) throws(StoreError) -> VoteOutcome {
        var options: [String] = [], tally: [Int] = []
        for value in try data.array("tally") {
            let entry = try data.nested(value, "tally")
            options.append(try entry.text("option"))
            tally.append(try entry.whole("ballots"))
        }
        let winners = try data.array("winners").map { value throws(StoreError) in try data.whole(value, "winners") }
        let settlement = try data.optionalObject("settlement").map { settlement throws(StoreError) in
            let byText = try settlement.text("by")
            guard let by = Settlement.Publisher(rawValue: byText) else { throw data.corrupt("settlement by \(byText)") }
            return Settlement(by: by, at: try settlement.time("at"))
        }
        let yourBallot = try data.optionalObject("your_ballot").map { ballot throws(StoreError) in
            OwnBallot(
                id: try BallotID.stored(try ballot.text("id")), option: try ballot.whole("option"),
                counted: try ballot.bool("counted"), castAt: try ballot.time("cast_at"))
        }
        return VoteOutcome(
            options: options, tally: tally, winners: winners, participants: try data.whole("participants"),
            ballotsCast: try data.whole("ballots_cast"), ballotsCounted: try data.whole("ballots_counted"),
            ballotsVoided: try data.whole("ballots_voided"), settlement: settlement, yourBallot: yourBallot)
    }

    /// Members of one stored JSON object, each of the kind it must be.
    private struct Reader {
        let fields: [String: JSONValue]
        let what: String

        func corrupt(_ detail: String) -> StoreError { .corrupt("\(what) has \(detail)") }

        func member(_ name: String) throws(StoreError) -> JSONValue {
            guard let value = fields[name] else { throw corrupt("no \(name)") }
            return value
        }

        func text(_ name: String) throws(StoreError) -> String {
            guard case .string(let text) = try member(name) else { throw corrupt("a \(name) that is not text") }
            return text
        }

        func optionalText(_ name: String) throws(StoreError) -> String? {
            let value = try member(name)
            if case .null = value { return nil }
            guard case .string(let text) = value else { throw corrupt("a \(name) that is not text") }
            return text
        }

        func real(_ name: String) throws(StoreError) -> Double {
            guard case .number(let number) = try member(name), number.isFinite else { throw corrupt("a \(name) that is not a number") }
            return number
        }

        func bool(_ name: String) throws(StoreError) -> Bool {
            guard case .bool(let value) = try member(name) else { throw corrupt("a \(name) that is not true or false") }
            return value
        }

        func whole(_ name: String) throws(StoreError) -> Int { try whole(try member(name), name) }

        func whole(_ value: JSONValue, _ name: String) throws(StoreError) -> Int {
            guard case .number(let number) = value, number.rounded() == number, abs(number) < 1e15 else {
                throw corrupt("a \(name) that is not a whole number")
            }
            return Int(number)
        }

        func time(_ name: String) throws(StoreError) -> Timestamp {
            let text = try text(name)
            guard let time = Timestamp(rfc3339: text) else { throw corrupt("the time \(text) as \(name)") }
            return time
        }

        func vote(_ name: String) throws(StoreError) -> VoteID {
            let text = try text(name)
            guard let id = VoteID(text), id.rawValue == text else { throw corrupt("the malformed vote id \(text)") }
            return id
        }

        func array(_ name: String) throws(StoreError) -> [JSONValue] {
            guard case .array(let values) = try member(name) else { throw corrupt("a \(name) that is not a list") }
            return values
        }

        func object(_ name: String) throws(StoreError) -> Reader { try nested(try member(name), name) }

        func optionalObject(_ name: String) throws(StoreError) -> Reader? {
            let value = try member(name)
            if case .null = value { return nil }
            return try nested(value, name)
        }

        func nested(_ value: JSONValue, _ name: String) throws(StoreError) -> Reader {
            guard case .object(let fields) = value else { throw corrupt("a \(name) that is not an object") }
            return Reader(fields: fields, what: what)
        }

        func person(_ name: String) throws(StoreError) -> UserSummary {
            let person = try object(name)
            let id = try person.text("id"), username = try person.text("username")
            let first = try person.text("first_name"), last = try person.text("last_name")
            return try readingStored(what) {
                UserSummary(
                    id: try UserID.stored(id), username: try Username(username),
                    firstName: try PersonName(first, field: "first_name"), lastName: try PersonName(last, field: "last_name"))
            }
        }
    }
}
