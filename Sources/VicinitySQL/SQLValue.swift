import VicinityCore

/// One value of a row as both SQL stores exchange it with their database: what a record's columns are written
/// as and read back as, whichever database is behind. JSON columns carry their text and geometry columns
/// their WKB bytes; each store's dialect adds the casts and functions its database needs (`SQLDialect`).
public enum SQLValue: Hashable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case bytes([UInt8])
    /// SQLite keeps booleans as the integers 0 and 1; PostgreSQL has `boolean`.
    case bool(Bool)
}

extension SQLValue {
    public static func optionalText(_ value: String?) -> SQLValue { value.map(SQLValue.text) ?? .null }
    public static func optionalReal(_ value: Double?) -> SQLValue { value.map(SQLValue.real) ?? .null }
    public static func optionalBool(_ value: Bool?) -> SQLValue { value.map(SQLValue.bool) ?? .null }
    public static func optionalBytes(_ value: [UInt8]?) -> SQLValue { value.map(SQLValue.bytes) ?? .null }
    public static func whole(_ value: Int) -> SQLValue { .integer(Int64(value)) }
    public static func optionalWhole(_ value: Int?) -> SQLValue { value.map { .integer(Int64($0)) } ?? .null }
    /// Times are whole milliseconds since 1970 in both stores (`Timestamp`), so that copies between them are exact.
    public static func time(_ value: Timestamp) -> SQLValue { .integer(value.millisecondsSince1970) }
    public static func optionalTime(_ value: Timestamp?) -> SQLValue { value.map(time) ?? .null }
}

extension SQLValue {
    /// Whether a value read back from a database holds `written`: SQLite gives a boolean back as 0 or 1.
    public func isStored(as written: SQLValue) -> Bool {
        switch (self, written) {
        case (.integer(let number), .bool(let flag)): number == (flag ? 1 : 0)
        default: self == written
        }
    }
}
