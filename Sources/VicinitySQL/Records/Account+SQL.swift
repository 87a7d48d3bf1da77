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
            SQLField("email_key", .text, .fixedRule) { .optionalText($0.account.email?.key) },
            SQLField("pending_email", .text) { .optionalText($0.account.pendingEmail?.rawValue) },
            SQLField("pending_email_key", .text, .fixedRule) { .optionalText($0.account.pendingEmail?.key) },
            SQLField("password_hash", .text) { .optionalText($0.passwordHash?.encoded) },
            SQLField("privacy_mode", .boolean) { .bool($0.account.privacyMode) },
            SQLField("created_at", .integer) { .time($0.account.createdAt) },
            SQLField("disabled", .boolean) { .bool($0.account.disabled) },
            SQLField("default_share", .text) { .text($0.account.defaultShare.rawValue) },
        ])

    public init(row: some SQLRow) throws(StoreError) {
        let id = try row.text("id")
        let username = try row.text("username"), firstName = try row.text("first_name"), lastName = try row.text("last_name")
        let email = try row.optionalText("email"), pending = try row.optionalText("pending_email")
        let privacyMode = try row.bool("privacy_mode"), disabled = try row.bool("disabled")
        let createdAt = try row.time("created_at"), hash = try row.optionalText("password_hash")
        let shareText = try row.text("default_share")
        guard let defaultShare = ShareLevel(rawValue: shareText) else { throw .corrupt("account \(id) shares by default \(shareText)") }
        self = try readingStored("account \(id)") {
            StoredAccount(
                account: Account(
                    id: try UserID.stored(id), username: try Username(username),
                    firstName: try PersonName(firstName, field: "first_name"), lastName: try PersonName(lastName, field: "last_name"),
                    email: try email.map { try Email($0) }, pendingEmail: try pending.map { try Email($0) },
                    privacyMode: privacyMode, createdAt: createdAt, disabled: disabled, defaultShare: defaultShare),
                passwordHash: hash.map(PasswordHash.init(encoded:)))
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
            SQLField("by_code", .boolean) { .bool($0.byCode) },
        ])

    public init(row: some SQLRow) throws(StoreError) {
        self.init(
            digest: TokenDigest(bytes: try row.bytes("token_digest")), userID: try UserID.stored(try row.text("account_id")),
            createdAt: try row.time("created_at"), expiresAt: try row.time("expires_at"), byCode: try row.bool("by_code"))
    }
}

extension StoredCode: SQLRecord {
    public static let schema = RecordSchema<StoredCode>(
        "mail_code", key: ["account_id", "purpose"],
        fields: [
            SQLField("account_id", .text) { .text($0.account.rawValue) },
            SQLField("purpose", .text) { .text($0.purpose.rawValue) },
            SQLField("email", .text) { .text($0.email.rawValue) },
            SQLField("code_hash", .text) { .text($0.hash.encoded) },
            SQLField("created_at", .integer) { .time($0.createdAt) },
            SQLField("expires_at", .integer) { .time($0.expiresAt) },
            SQLField("tries_left", .integer) { .whole($0.triesLeft) },
        ])

    public init(row: some SQLRow) throws(StoreError) {
        let account = try row.text("account_id"), purposeText = try row.text("purpose"), email = try row.text("email")
        guard let purpose = CodePurpose(rawValue: purposeText) else { throw .corrupt("a code of \(account) is for \(purposeText)") }
        self.init(
            account: try UserID.stored(account), purpose: purpose,
            email: try readingStored("a code of \(account)") { try Email(email) }, hash: PasswordHash(encoded: try row.text("code_hash")),
            createdAt: try row.time("created_at"), expiresAt: try row.time("expires_at"), triesLeft: try row.whole("tries_left"))
    }
}

extension RandomIdentifier {
    /// An id read back from a store: one that is not well formed is a corrupt store.
    public static func stored(_ text: String) throws(StoreError) -> Self {
        guard let id = Self(text) else { throw .corrupt("the id \(text) is malformed") }
        return id
    }
}
