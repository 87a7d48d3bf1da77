import VicinityCore

extension PushSubscription: SQLRecord {
    public static let schema = RecordSchema<PushSubscription>(
        "push_subscription", key: ["id"],
        fields: [
            SQLField("id", .text) { .text($0.id.rawValue) },
            SQLField("account_id", .text) { .text($0.owner.rawValue) },
            SQLField("session_digest", .bytes) { .bytes($0.session.bytes) },
            SQLField("kind", .text) { .text($0.target.kind.rawValue) },
            SQLField("endpoint", .text) { if case .webPush(let address) = $0.target { .text(address.endpoint) } else { .null } },
            SQLField("p256dh", .text) { if case .webPush(let address) = $0.target { .text(address.p256dh) } else { .null } },
            SQLField("auth", .text) { if case .webPush(let address) = $0.target { .text(address.auth) } else { .null } },
            SQLField("apns_token", .text) { if case .apns(let address) = $0.target { .text(address.token) } else { .null } },
            SQLField("apns_topic", .text) { if case .apns(let address) = $0.target { .text(address.topic) } else { .null } },
            SQLField("target_key", .text, .fixedRule) { .text($0.target.key) },
            SQLField("created_at", .integer) { .time($0.createdAt) },
        ])

    public init(row: some SQLRow) throws(StoreError) {
        let id = try row.text("id"), kindText = try row.text("kind")
        let target: PushTarget
        switch PushKind(rawValue: kindText) {
        case .webPush?:
            target = .webPush(WebPushAddress(
                stored: try row.text("endpoint"), p256dh: try row.text("p256dh"), auth: try row.text("auth")))
        case .apns?:
            target = .apns(APNsAddress(stored: try row.text("apns_token"), topic: try row.text("apns_topic")))
        case nil:
            throw .corrupt("push device \(id) is of kind \(kindText)")
        }
        self.init(
            id: try PushSubscriptionID.stored(id), owner: try UserID.stored(try row.text("account_id")), target: target,
            session: TokenDigest(bytes: try row.bytes("session_digest")), createdAt: try row.time("created_at"))
    }
}

extension PushPreferences: SQLRecord {
    public static let schema = RecordSchema<PushPreferences>(
        "push_preference", key: ["account_id"],
        fields: [
            SQLField("account_id", .text) { .text($0.owner.rawValue) },
            SQLField("muted", .text) { .text($0.muted.sorted().map(\.rawValue).joined(separator: " ")) },
        ])

    public init(row: some SQLRow) throws(StoreError) {
        let owner = try row.text("account_id"), muted = try row.text("muted")
        var categories: Set<PushCategory> = []
        for name in muted.split(separator: " ") {
            guard let category = PushCategory(rawValue: String(name)) else {
                throw .corrupt("the push preferences of \(owner) mute \(name), which this version does not know")
            }
            categories.insert(category)
        }
        self.init(owner: try UserID.stored(owner), muted: categories)
    }
}
