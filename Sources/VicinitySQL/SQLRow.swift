import VicinityCore

/// A row read by column name, never by position: what every record's mapping reads (`SQLRecord`), whichever
/// store fetched it. Each store adapts its own rows (GRDB's, postgres-nio's); a column the statement did not
/// select is `StoreError.database`, and a value of the wrong kind `StoreError.corrupt`: a bad row is an error,
/// never a crash.
public protocol SQLRow {
    func value(_ column: String) throws(StoreError) -> SQLValue
}

extension SQLRow {
    public func text(_ column: String) throws(StoreError) -> String {
        guard let text = try optionalText(column) else { throw Self.missing(column) }
        return text
    }

    public func optionalText(_ column: String) throws(StoreError) -> String? {
        switch try value(column) {
        case .null: return nil
        case .text(let text): return text
        case let other: throw Self.mismatch(column, other, "text")
        }
    }

    public func integer(_ column: String) throws(StoreError) -> Int64 {
        guard let value = try optionalInteger(column) else { throw Self.missing(column) }
        return value
    }

    public func optionalInteger(_ column: String) throws(StoreError) -> Int64? {
        switch try value(column) {
        case .null: return nil
        case .integer(let value): return value
        case let other: throw Self.mismatch(column, other, "an integer")
        }
    }

    public func whole(_ column: String) throws(StoreError) -> Int { Int(try integer(column)) }

    public func optionalWhole(_ column: String) throws(StoreError) -> Int? { try optionalInteger(column).map { Int($0) } }

    public func real(_ column: String) throws(StoreError) -> Double {
        guard let value = try optionalReal(column) else { throw Self.missing(column) }
        return value
    }

    /// A whole number stored in a real column reads as that number: SQLite may keep one as an integer.
    public func optionalReal(_ column: String) throws(StoreError) -> Double? {
        switch try value(column) {
        case .null: return nil
        case .real(let value): return value
        case .integer(let value): return Double(value)
        case let other: throw Self.mismatch(column, other, "a number")
        }
    }

    public func bool(_ column: String) throws(StoreError) -> Bool {
        guard let value = try optionalBool(column) else { throw Self.missing(column) }
        return value
    }

    /// SQLite's 0 and 1 read as false and true; any other integer is not a boolean.
    public func optionalBool(_ column: String) throws(StoreError) -> Bool? {
        switch try value(column) {
        case .null: return nil
        case .bool(let value): return value
        case .integer(0): return false
        case .integer(1): return true
        case let other: throw Self.mismatch(column, other, "a boolean")
        }
    }

    public func bytes(_ column: String) throws(StoreError) -> [UInt8] {
        guard let value = try optionalBytes(column) else { throw Self.missing(column) }
        return value
    }

    public func optionalBytes(_ column: String) throws(StoreError) -> [UInt8]? {
        switch try value(column) {
        case .null: return nil
        case .bytes(let value): return value
        case let other: throw Self.mismatch(column, other, "bytes")
        }
    }

    public func time(_ column: String) throws(StoreError) -> Timestamp {
        Timestamp(millisecondsSince1970: try integer(column))
    }

    public func optionalTime(_ column: String) throws(StoreError) -> Timestamp? {
        try optionalInteger(column).map(Timestamp.init(millisecondsSince1970:))
    }

    private static func missing(_ column: String) -> StoreError { .corrupt("column \(column) is null") }

    private static func mismatch(_ column: String, _ value: SQLValue, _ expected: String) -> StoreError {
        let found = switch value {
        case .null: "null"
        case .integer: "an integer"
        case .real: "a real number"
        case .text: "text"
        case .bytes: "bytes"
        case .bool: "a boolean"
        }
        return .corrupt("column \(column) holds \(found), not \(expected)")
    }
}

/// A row a plan read (`SQLPlan`), held whatever store fetched it: the values by their column's place in
/// `names`, which every row of one statement shares.
public struct FetchedRow: SQLRow, Sendable {
    let names: ColumnNames
    let values: [SQLValue]

    public init(names: ColumnNames, values: [SQLValue]) {
        self.names = names
        self.values = values
    }

    public func value(_ column: String) throws(StoreError) -> SQLValue {
        guard let index = names.index[column], values.indices.contains(index) else {
            throw .database("the statement selected no column \(column)")
        }
        return values[index]
    }
}

/// The columns of one statement's rows, by name: made once per statement and shared by its rows.
public final class ColumnNames: Sendable {
    let index: [String: Int]

    public init(_ names: [String]) {
        index = Dictionary(names.enumerated().map { ($0.element, $0.offset) }) { first, _ in first }
    }
}
