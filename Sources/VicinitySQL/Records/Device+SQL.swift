import VicinityCore

extension StoredDevice: SQLRecord {
    public static let schema = RecordSchema<StoredDevice>(
        "device", key: ["id"],
        fields: [
            SQLField("id", .text) { .text($0.device.id.rawValue) },
            SQLField("account_id", .text) { .text($0.device.owner.rawValue) },
            SQLField("name", .text) { .text($0.device.name.rawValue) },
            SQLField("kind", .text) { .text($0.device.kind.rawValue) },
            SQLField("secret_digest", .bytes) { .bytes($0.secretDigest.bytes) },
            SQLField("created_at", .integer) { .time($0.device.createdAt) },
            SQLField("last_used_at", .integer) { $0.device.lastUsedAt.map(SQLValue.time) ?? .null },
            SQLField("cards_digest", .text) { .optionalText($0.cardsDigest) },
        ])

    public init(row: some SQLRow) throws(StoreError) {
        let id = try row.text("id"), kindText = try row.text("kind"), name = try row.text("name")
        guard let kind = DeviceKind(rawValue: kindText) else { throw .corrupt("device \(id) is of kind \(kindText)") }
        self.init(
            device: Device(
                id: try DeviceID.stored(id), owner: try UserID.stored(try row.text("account_id")),
                name: try readingStored("device \(id)") { try DeviceName(name) }, kind: kind,
                createdAt: try row.time("created_at"), lastUsedAt: try row.optionalTime("last_used_at")),
            secretDigest: TokenDigest(bytes: try row.bytes("secret_digest")), cardsDigest: try row.optionalText("cards_digest"))
    }
}
