import VicinityCore

extension FriendshipSide: SQLRecord {
    public static let schema = RecordSchema<FriendshipSide>(
        "friendship", key: ["account_id", "friend_id"],
        fields: [
            SQLField("account_id", .text) { .text($0.user.rawValue) },
            SQLField("friend_id", .text) { .text($0.friend.rawValue) },
            SQLField("since", .integer) { .time($0.since) },
            SQLField("share", .text) { .text($0.share.rawValue) },
            SQLField("share_until", .integer) { .optionalTime($0.until) },
        ])

    public init(row: some SQLRow) throws(StoreError) {
        let user = try UserID.stored(try row.text("account_id")), shareText = try row.text("share")
        guard let share = ShareLevel(rawValue: shareText) else { throw .corrupt("a friendship of \(user) shares \(shareText)") }
        self.init(
            user: user, friend: try UserID.stored(try row.text("friend_id")), since: try row.time("since"), share: share,
            until: try row.optionalTime("share_until"))
    }
}

extension FriendRequest: SQLRecord {
    public static let schema = RecordSchema<FriendRequest>(
        "friend_request", key: ["id"],
        fields: [
            SQLField("id", .text) { .text($0.id.rawValue) },
            SQLField("from_id", .text) { .text($0.from.rawValue) },
            SQLField("to_id", .text) { .text($0.to.rawValue) },
            SQLField("created_at", .integer) { .time($0.createdAt) },
        ])

    public init(row: some SQLRow) throws(StoreError) {
        self.init(
            id: try FriendRequestID.stored(try row.text("id")), from: try UserID.stored(try row.text("from_id")),
            to: try UserID.stored(try row.text("to_id")), createdAt: try row.time("created_at"))
    }
}

extension Block: SQLRecord {
    public static let schema = RecordSchema<Block>(
        "account_block", key: ["blocker_id", "blocked_id"],
        fields: [
            SQLField("blocker_id", .text) { .text($0.blocker.rawValue) },
            SQLField("blocked_id", .text) { .text($0.blocked.rawValue) },
            SQLField("created_at", .integer) { .time($0.createdAt) },
        ])

    public init(row: some SQLRow) throws(StoreError) {
        self.init(
            blocker: try UserID.stored(try row.text("blocker_id")), blocked: try UserID.stored(try row.text("blocked_id")),
            createdAt: try row.time("created_at"))
    }
}
