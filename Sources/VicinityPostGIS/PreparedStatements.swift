import Logging
import PostgresNIO
import Synchronization
import VicinitySQL

/// Which statements this process runs as named prepared statements: PostgreSQL then parses a statement once a
/// connection, and from its sixth run there plans it once for all (a generic plan) wherever that plan costs no
/// more than planning each time, where an unnamed statement is parsed and planned at every run. Planning was half
/// of the time of a group's alert changes over PostGIS (`docs/BENCHMARKS.md`, "Alerts and position updates");
/// PostgreSQL's CPU for a position update fell by a tenth ("Prepared statements over PostgreSQL").
///
/// A statement is known by its shape: its text and the types of its arguments (a null argument leaves its type
/// to the server, so it is another shape). A shape is prepared once this process has run it `threshold` times
/// (statements run once, as migrations are, never take a name), and only while fewer than `capacity` shapes
/// have names: a name, once given, holds for the life of the process on every connection that runs it (postgres-nio
/// keeps each connection's prepared statements until the connection closes, and has no way to drop one), so the
/// cap bounds what each server process holds for each connection.
///
/// Invariants:
/// - a shape's name is the same on every connection, and no two shapes share one;
/// - the text a name stands for never changes, so a connection that prepared it runs the same statement;
/// - sightings are counted in a table cleared whenever it reaches `4 × capacity` shapes, so statements of
///   ever-new texts (lists of every length) cost a bounded memory.
final class PreparedStatements: Sendable {
    /// Runs before a shape is prepared: psycopg's `prepare_threshold` default, the same idea (a statement run
    /// a few times is likely to be run again).
    static let defaultThreshold = 5
    /// psycopg's `prepared_max` default, per connection as here.
    static let defaultCapacity = 100

    struct Shape: Hashable, Sendable {
        let text: String
        let types: [PostgresDataType]
    }

    private struct Book {
        var sightings: [Shape: Int] = [:]
        var names: [Shape: String] = [:]
    }

    let threshold: Int
    let capacity: Int
    private let book = Mutex(Book())

    init(threshold: Int = defaultThreshold, capacity: Int = defaultCapacity) {
        self.threshold = threshold
        self.capacity = capacity
    }

    /// The name `shape` runs under, counting this run; nil while it runs unnamed.
    func name(for shape: Shape) -> String? {
        book.withLock { book in
            if let name = book.names[shape] { return name }
            guard book.names.count < capacity else { return nil }
            let seen = book.sightings[shape, default: 0] + 1
            guard seen >= threshold else {
                if book.sightings.count >= 4 * capacity { book.sightings.removeAll(keepingCapacity: true) }
                book.sightings[shape] = seen
                return nil
            }
            book.sightings[shape] = nil
            let name = "vicinity_\(book.names.count + 1)"
            book.names[shape] = name
            return name
        }
    }

    /// How many shapes have names.
    var named: Int { book.withLock { $0.names.count } }
}

/// A statement with its arguments, bound for postgres-nio, and its shape.
struct BoundStatement: Sendable {
    let shape: PreparedStatements.Shape
    let bindings: PostgresBindings

    init(_ statement: SQLStatement) throws {
        var bindings = PostgresBindings(capacity: statement.arguments.count)
        var types: [PostgresDataType] = []
        types.reserveCapacity(statement.arguments.count)
        for argument in statement.arguments {
            switch argument {
            case .value(.null): bindings.appendNull(); types.append(.null)
            case .value(.integer(let value)): try bindings.append(value); types.append(Int64.psqlType)
            case .value(.real(let value)): try bindings.append(value); types.append(Double.psqlType)
            case .value(.text(let value)): try bindings.append(value); types.append(String.psqlType)
            case .value(.bytes(let value)): try bindings.append(ByteBuffer(bytes: value)); types.append(ByteBuffer.psqlType)
            case .value(.bool(let value)): try bindings.append(value); types.append(Bool.psqlType)
            case .texts(let values): try bindings.append(values); types.append([String].psqlType)
            case .integers(let values): try bindings.append(values); types.append([Int64].psqlType)
            }
        }
        self.shape = PreparedStatements.Shape(text: statement.text, types: types)
        self.bindings = bindings
    }

    /// The statement as an unnamed one.
    var query: PostgresQuery { PostgresQuery(unsafeSQL: shape.text, binds: bindings) }
}

/// postgres-nio takes a prepared statement's name, text and argument types from its type, read where the
/// statement is handed to the connection; this type reads them from the task that hands it over, so that one
/// type carries every shape.
struct NamedStatement: PostgresPreparedStatement {
    struct Naming: Sendable {
        let name: String
        let shape: PreparedStatements.Shape
    }

    @TaskLocal static var naming: Naming?

    static var name: String { naming?.name ?? "" }
    static var sql: String { naming?.shape.text ?? "" }
    static var bindingDataTypes: [PostgresDataType] { naming?.shape.types ?? [] }

    private let bindings: PostgresBindings

    private init(bindings: PostgresBindings) { self.bindings = bindings }

    func makeBindings() -> PostgresBindings { bindings }
    func decodeRow(_ row: PostgresRow) -> PostgresRow { row }

    /// The rows of `statement` under `name`, prepared on `connection` at its first run there.
    static func rows(_ statement: BoundStatement, named name: String, on connection: PostgresConnection, logger: Logger) async throws -> [PostgresRow] {
        try await $naming.withValue(Naming(name: name, shape: statement.shape)) {
            var rows: [PostgresRow] = []
            for try await row in try await connection.execute(NamedStatement(bindings: statement.bindings), logger: logger) {
                rows.append(row)
            }
            return rows
        }
    }
}
