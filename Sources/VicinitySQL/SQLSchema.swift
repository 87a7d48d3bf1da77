import VicinityCore

/// One column of a table as both SQL stores declare it in their migrations.
public struct SQLColumn: Hashable, Sendable {
    public enum Kind: Hashable, Sendable {
        case text
        case integer
        case real
        case boolean
        case bytes
        /// JSON text: `TEXT` in SQLite, the named type (`json` or `jsonb`) in PostgreSQL.
        case json(postgresType: String)
        /// A MultiPolygon (SRID 4326), exchanged as WKB.
        case multiPolygon
    }

    /// How a column's value comes about.
    public enum Origin: Hashable, Sendable {
        /// A field of the record.
        case field
        /// Worked out from the record's fields by a rule that never changes (`username_key`): written, never read.
        case fixedRule
        /// Numbered by the database when a row is inserted without it (an event's number); written only by a
        /// copy of a whole record, which keeps the numbers it had.
        case identity
        /// Worked out by a rule of VicinityCore of this version (`NameMatch.ruleVersion`, `VoteTimes.ruleVersion`):
        /// written, never read, and recomputed for every row when a store opens a database whose rows were
        /// made by another version (`DerivedColumns`).
        case rule(version: Int)
    }

    public let name: String
    public let kind: Kind
    public let origin: Origin
}

/// The latitude and longitude columns from which SpatiaLite keeps a row's `geom` POINT (with its R*Tree) and
/// PostgreSQL generates its `location` geography.
public struct PointColumns: Hashable, Sendable {
    public let latitude: String
    public let longitude: String
}

/// A table as the shared statements see it: its columns, its key and what the store does besides.
public struct SQLTable: Hashable, Sendable, CustomStringConvertible {
    public let name: String
    public let columns: [SQLColumn]
    /// The primary key's columns.
    public let key: [String]
    public let point: PointColumns?
    /// Whether its writes are in the change feed (by trigger), so that the store wakes the feed's readers
    /// once a write commits.
    public let followed: Bool

    public var description: String { name }

    public func column(_ name: String) -> SQLColumn? { columns.first { $0.name == name } }
}

/// One column with how a record gives its value.
public struct SQLField<Record>: Sendable {
    public let column: SQLColumn
    let value: @Sendable (Record) -> SQLValue

    public init(_ name: String, _ kind: SQLColumn.Kind, _ origin: SQLColumn.Origin = .field, _ value: @escaping @Sendable (Record) -> SQLValue) {
        column = SQLColumn(name: name, kind: kind, origin: origin)
        self.value = value
    }

    /// The same column of a record that holds this one (`Event` holds its `EventDraft`): one field list for both.
    func reading<Whole>(_ part: @escaping @Sendable (Whole) -> Record) -> SQLField<Whole> {
        let value = value
        return SQLField<Whole>(column.name, column.kind, column.origin) { value(part($0)) }
    }
}

/// A record's columns, written once: the table the shared statements read and write, and each column's value
/// for a record. Reading a record back is its `init(row:)`, by the same names.
public struct RecordSchema<Record>: Sendable {
    public let table: SQLTable
    let fields: [SQLField<Record>]

    public init(
        _ name: String, key: [String], point: PointColumns? = nil, followed: Bool = false, fields: [SQLField<Record>]
    ) {
        precondition(key.allSatisfy { key in fields.contains { $0.column.name == key } }, "the key of \(name) is among its columns")
        table = SQLTable(name: name, columns: fields.map(\.column), key: key, point: point, followed: followed)
        self.fields = fields
    }

    /// The record's values in the order of `table.columns`.
    public func values(_ record: Record) -> [SQLValue] { fields.map { $0.value(record) } }

    /// The value of one column for the record.
    public func value(_ column: String, of record: Record) -> SQLValue? {
        fields.first { $0.column.name == column }.map { $0.value(record) }
    }
}

/// A value kept as one row of one table, mapped by `schema` and `init(row:)` in one place for both SQL stores.
public protocol SQLRecord: Sendable {
    static var schema: RecordSchema<Self> { get }
    /// The record read back by column name; a row that breaks a rule of the domain is `StoreError.corrupt`.
    init(row: some SQLRow) throws(StoreError)
}

extension SQLRecord {
    public var sqlValues: [SQLValue] { Self.schema.values(self) }
    public static var table: SQLTable { schema.table }
}

/// Runs `body`, which reads a stored record, turning a rule it breaks into `StoreError.corrupt` naming `what`.
public func readingStored<Value>(_ what: @autoclosure () -> String, _ body: () throws -> Value) throws(StoreError) -> Value {
    do {
        return try body()
    } catch let error as StoreError {
        throw error
    } catch let error as ValidationError {
        throw .corrupt("\(what()): \(error.field) \(error.message)")
    } catch {
        throw .corrupt("\(what()): \(error)")
    }
}
