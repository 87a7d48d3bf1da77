import VicinityCore

extension StreamLease: SQLRecord {
    public static let schema = RecordSchema<StreamLease>(
        "stream_lease", key: ["id"],
        fields: [
            SQLField("id", .text) { .text($0.id.rawValue) },
            SQLField("account_id", .text) { .text($0.user.rawValue) },
            SQLField("opened_at", .integer) { .time($0.openedAt) },
            SQLField("expires_at", .integer) { .time($0.expiresAt) },
        ])

    public init(row: some SQLRow) throws(StoreError) {
        self.init(
            id: try StreamLeaseID.stored(try row.text("id")), user: try UserID.stored(try row.text("account_id")),
            openedAt: try row.time("opened_at"), expiresAt: try row.time("expires_at"))
    }
}
