import GeoCore
import VicinityCore

extension OutboxMessage: SQLRecord {
    public static let schema = RecordSchema<OutboxMessage>(
        "outbox", key: ["id"],
        fields: [
            SQLField("id", .text) { .text($0.id.rawValue) },
            SQLField("account_id", .text) { .optionalText($0.account?.rawValue) },
            SQLField("payload", .json(postgresType: "jsonb")) { .optionalText($0.payload.map(StoredOutboxPayload.text)) },
            SQLField("created_at", .integer) { .time($0.createdAt) },
            SQLField("due_at", .integer) { .time($0.dueAt) },
            SQLField("expires_at", .integer) { .time($0.expiresAt) },
            SQLField("attempts", .integer) { .whole($0.attempts) },
            SQLField("claimed_until", .integer) { .optionalTime($0.claimedUntil) },
            SQLField("state", .text) { .text(StoredOutboxPayload.state($0.state).name) },
            SQLField("settled_at", .integer) { .optionalTime(StoredOutboxPayload.state($0.state).at) },
            SQLField("last_error", .text) { .optionalText($0.lastError) },
            SQLField("available_at", .integer, .fixedRule) { .optionalTime($0.availableAt) },
            // A waiting push's device, for the foreign key that takes the push away with the device.
            SQLField("push_subscription_id", .text, .fixedRule) {
                if case .push(let delivery)? = $0.payload { .text(delivery.device.rawValue) } else { .null }
            },
            // The person a waiting push names, so that deleting their account deletes it.
            SQLField("about_id", .text, .fixedRule) {
                if case .push(let delivery)? = $0.payload { .optionalText(delivery.notice.about?.rawValue) } else { .null }
            },
        ])

    public init(row: some SQLRow) throws(StoreError) {
        let id = try row.text("id"), stateName = try row.text("state"), settledAt = try row.optionalTime("settled_at")
        let lastError = try row.optionalText("last_error")
        let state: OutboxState
        switch (stateName, settledAt) {
        case ("pending", _): state = .pending
        case ("sent", let at?): state = .sent(at: at)
        case ("dropped", let at?): state = .dropped(at: at, reason: lastError ?? "")
        default: throw .corrupt("message \(id) of the outbox is \(stateName) without a time")
        }
        self.init(
            id: try OutboxID.stored(id), account: try row.optionalText("account_id").map { text throws(StoreError) in try UserID.stored(text) },
            payload: try row.optionalText("payload").map { text throws(StoreError) in try StoredOutboxPayload.payload(text, of: id) },
            createdAt: try row.time("created_at"), dueAt: try row.time("due_at"), expiresAt: try row.time("expires_at"),
            attempts: try row.whole("attempts"), claimedUntil: try row.optionalTime("claimed_until"), state: state,
            lastError: lastError)
    }
}

/// How an outbox message's payload and state are kept: a JSON object per kind, its members fixed once written.
enum StoredOutboxPayload {
    static func text(_ payload: OutboxPayload) -> String {
        let object: [String: JSONValue] = switch payload {
        case .mail(let mail):
            ["mail": .object(["to": .string(mail.to.rawValue), "subject": .string(mail.subject), "body": .string(mail.body)])]
        case .signInCode(let email):
            ["sign_in_code": .object(["email": .string(email.rawValue)])]
        case .push(let delivery):
            ["push": .object([
                "device": .string(delivery.device.rawValue), "kind": .string(delivery.kind.rawValue),
                "event": .number(Double(delivery.notice.event.rawValue)), "type": .string(delivery.notice.type.rawValue),
                "title": .string(delivery.notice.title), "body": .string(delivery.notice.body), "url": .string(delivery.notice.url),
                "tag": delivery.notice.tag.map(JSONValue.string) ?? .null,
                "about": delivery.notice.about.map { JSONValue.string($0.rawValue) } ?? .null,
            ])]
        }
        return String(decoding: JSONValue.object(object).jsonBytes, as: UTF8.self)
    }

    static func payload(_ text: String, of id: String) throws(StoreError) -> OutboxPayload {
        let what = "the payload of outbox message \(id)"
        guard case .object(let object) = try StoredJSON.parse(text, of: what) else { throw .corrupt("\(what) is not an object") }
        func field(_ fields: [String: JSONValue], _ name: String) throws(StoreError) -> String {
            guard case .string(let text)? = fields[name] else { throw .corrupt("\(what) has no \(name)") }
            return text
        }
        if case .object(let mail)? = object["mail"] {
            let to = try field(mail, "to"), subject = try field(mail, "subject"), body = try field(mail, "body")
            return .mail(Mail(to: try readingStored(what) { try Email(to) }, subject: subject, body: body))
        }
        if case .object(let request)? = object["sign_in_code"] {
            let email = try field(request, "email")
            return .signInCode(try readingStored(what) { try Email(email) })
        }
        if case .object(let push)? = object["push"] {
            let device = try field(push, "device"), kindText = try field(push, "kind"), typeText = try field(push, "type")
            guard let kind = PushKind(rawValue: kindText), let type = EventType(rawValue: typeText),
                case .number(let event)? = push["event"], let number = Int64(exactly: event)
            else { throw .corrupt("\(what) is a push of no kind this version sends") }
            let tag: String? = if case .string(let tag)? = push["tag"] { tag } else { nil }
            let about: UserID? = if case .string(let about)? = push["about"] { try UserID.stored(about) } else { nil }
            let notice = PushNotice(
                event: EventID(number), type: type, title: try field(push, "title"), body: try field(push, "body"),
                url: try field(push, "url"), tag: tag, about: about)
            return .push(PushDelivery(device: try PushSubscriptionID.stored(device), kind: kind, notice: notice))
        }
        throw .corrupt("\(what) is of no kind this version sends")
    }

    static func state(_ state: OutboxState) -> (name: String, at: Timestamp?) {
        switch state {
        case .pending: ("pending", nil)
        case .sent(let at): ("sent", at)
        case .dropped(let at, _): ("dropped", at)
        }
    }
}
