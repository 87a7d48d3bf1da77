import VicinityCore

extension StoredAccount: SQLRecord {
    public static let schema = RecordSchema<StoredAccount>(
        "account", key: ["id"],
        fields: [
            SQLField("id", .text) { .text($0.account.id.rawValue) },
            SQLField("username", .text) { .text($0.account.username.rawValue) },
            SQLField("username_key", .text, .fixedRule) { .text($0.account.username.key) },
            SQLField("first_name", .text) { .text($0.account.firstName.rawValue) },
            SQLField("last_name", .text) { .text($0.account.lastName.rawValue) },
            SQLField("name_key", .text, .rule(version: NameMatch.ruleVersion)) { .text(PeopleMatch.nameKey($0.account)) },
            SQLField("email", .text) { .optionalText($0.account.email?.rawValue) },
            SQLField("password_hash", .text) { .text($0.passwordHash.encoded) },
            SQLField("privacy_mode", .boolean) { .bool($0.account.privacyMode) },
            SQLField("created_at", .integer) { .time($0.account.createdAt) },
        ])

    public init(row: some SQLRow) throws(StoreError) {
        let id = try row.text("id")
        let username = try row.text("username"), firstName = try row.text("first_name"), lastName = try row.text("last_name")
        let email = try row.optionalText("email"), privacyMode = try row.bool("privacy_mode")
        let createdAt = try row.time("created_at"), hash = try row.text("password_hash")
        self = try readingStored("account \(id)") {
            StoredAccount(
                account: Account(
                    id: try UserID.stored(id), username: try Username(username),
                    firstName: try PersonName(firstName, field: "first_name"), lastName: try PersonName(lastName, field: "last_name"),
                    email: try email.map { try Email($0) }, privacyMode: privacyMode, createdAt: createdAt),
                passwordHash: PasswordHash(encoded: hash))
        }
    }
}

extension Session: SQLRecord {
    public static let schema = RecordSchema<Session>(
        "session", key: ["token_digest"],
        fields: [
            SQLField("token_digest", .bytes) { .bytes($0.digest.bytes) },
            SQLField("account_id", .text) { .text($0.userID.rawValue) },
            SQLField("created_at", .integer) { .time($0.createdAt) },
            SQLField("expires_at", .integer) { .time($0.expiresAt) },
        ])

    public init(row: some SQLRow) throws(StoreError) {
        self.init(
            digest: TokenDigest(bytes: try row.bytes("token_digest")), userID: try UserID.stored(try row.text("account_id")),
            createdAt: try row.time("created_at"), expiresAt: try row.time("expires_at"))
    }
}

extension RandomIdentifier {
    /// An id read back from a store: one that is not well formed is a corrupt store.
    public static func stored(_ text: String) throws(StoreError) -> Self {
        guard let id = Self(text) else { throw .corrupt("the id \(text) is malformed") }
        return id
    }
}
