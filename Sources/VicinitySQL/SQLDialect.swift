import GeoCore
import VicinityCore

/// A statement's text with its arguments, in one store's dialect.
public struct SQLStatement: Sendable {
    public let text: String
    public let arguments: [SQLArgument]
    /// The columns a read or a write's `RETURNING` gives back, by name; empty for a write that returns none.
    public let returns: [String]

    public init(text: String, arguments: [SQLArgument], returns: [String]) {
        self.text = text
        self.arguments = arguments
        self.returns = returns
    }
}

/// One bound argument: a value, or (PostgreSQL's `= ANY`) an array of one kind.
public enum SQLArgument: Sendable {
    case value(SQLValue)
    case texts([String])
    case integers([Int64])
}

/// How each of the two SQL stores writes the shared statements (`SQLQuery`, `SQLWrite`): placeholders, casts,
/// geometry functions and row locks. Identifiers are the schema's own, never input; every value is bound.
public enum SQLDialect: Sendable {
    /// SQLite with SpatiaLite: `?` placeholders, JSON as text, `geom` POINTs made by `MakePoint`.
    case sqlite
    /// PostgreSQL with PostGIS: `$n` placeholders, `json`/`jsonb` casts, generated geography columns.
    case postgres

    /// SpatiaLite's POINT column beside a table's latitude and longitude (`SQLTable.point`).
    static let pointColumn = "geom"

    /// Every column of the table as a `SELECT` list reads it, each under its own name.
    public func columns(of table: SQLTable) -> String {
        table.columns.map(selected).joined(separator: ", ")
    }

    public func select(_ query: SQLQuery) -> SQLStatement {
        var builder = Builder(dialect: self)
        var text = "SELECT " + columns(of: query.table) + " FROM " + query.table.name
        let condition = builder.condition(query.condition, in: query.table)
        if condition != "1 = 1" { text += " WHERE " + condition }
        if !query.order.isEmpty {
            text += " ORDER BY " + query.order.map { order in
                let collated = self == .postgres && query.table.column(order.column)?.kind == .text
                return order.column + (collated ? " COLLATE \"C\"" : "") + (order.descending ? " DESC" : "")
            }.joined(separator: ", ")
        }
        if let limit = query.limit { text += " LIMIT " + builder.bind(.value(.integer(Int64(limit)))) }
        if self == .postgres {
            switch query.lock {
            case .none: break
            case .forUpdate: text += " FOR UPDATE"
            case .skipLocked: text += " FOR UPDATE SKIP LOCKED"
            }
        }
        return SQLStatement(text: text, arguments: builder.arguments, returns: query.table.columns.map(\.name))
    }

    /// `SELECT count(*) AS count` of the rows that meet the query's condition.
    public func count(_ query: SQLQuery) -> SQLStatement {
        var builder = Builder(dialect: self)
        var text = "SELECT count(*) AS count FROM " + query.table.name
        let condition = builder.condition(query.condition, in: query.table)
        if condition != "1 = 1" { text += " WHERE " + condition }
        return SQLStatement(text: text, arguments: builder.arguments, returns: ["count"])
    }

    /// The highest number the table's identity has given (`last`): SQLite's AUTOINCREMENT keeps it in
    /// `sqlite_sequence`, PostgreSQL's identity in its sequence (null before the first).
    public func lastNumber(_ table: SQLTable) -> SQLStatement {
        switch self {
        case .sqlite:
            SQLStatement(text: "SELECT seq AS last FROM sqlite_sequence WHERE name = ?", arguments: [.value(.text(table.name))], returns: ["last"])
        case .postgres:
            SQLStatement(
                text: "SELECT pg_sequence_last_value(pg_get_serial_sequence($1, $2)::regclass) AS last",
                arguments: [.value(.text(table.name)), .value(.text(identity(of: table)))], returns: ["last"])
        }
    }

    /// The statements of a write, in order: one for most, several for a copy's rows and for numbering.
    public func statements(_ write: SQLWrite) -> [SQLStatement] {
        switch write {
        case .insertMany(let table, let rows, let conflict):
            switch self {
            case .sqlite:
                // One cached statement, run per row: SQLite takes rows at memory speed inside a transaction.
                return rows.map { self.write(.insert(table, $0, conflict: conflict)) }
            case .postgres:
                return rows.chunks(of: Self.rowsPerStatement(table)).map { manyRows(table, Array($0), conflict: conflict) }
            }
        case .continueNumbering(let table, let number):
            switch self {
            case .sqlite:
                return [
                    SQLStatement(text: "DELETE FROM sqlite_sequence WHERE name = ?", arguments: [.value(.text(table.name))], returns: []),
                    SQLStatement(
                        text: "INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)",
                        arguments: [.value(.text(table.name)), .value(.integer(number))], returns: []),
                ]
            case .postgres:
                // `setval(…, n, true)` says n was given; before any number, the sequence starts at 1 unused.
                let sequence = "pg_get_serial_sequence($1, $2)"
                let text = number > 0
                    ? "SELECT setval(\(sequence), $3, true) AS affected" : "SELECT setval(\(sequence), 1, false) AS affected"
                var arguments: [SQLArgument] = [.value(.text(table.name)), .value(.text(identity(of: table)))]
                if number > 0 { arguments.append(.value(.integer(number))) }
                return [SQLStatement(text: text, arguments: arguments, returns: [])]
            }
        case .setEach(let table, let sets, let key, let lockingFirst):
            switch self {
            case .sqlite:
                // One cached statement a set, as SQLite runs statements at memory speed.
                return sets.map { set in
                    var builder = Builder(dialect: self)
                    let text = builder.update(table, set.assignments, where: set.condition) + " RETURNING \(key)"
                    return SQLStatement(text: text, arguments: builder.arguments, returns: [key])
                }
            case .postgres:
                // A `WITH` per chunk, whose arguments stay well under the 65,535 a statement binds, of one update
                // for each shape of set (`Shape`) rather than one a set: PostgreSQL plans an update, with the
                // subqueries of its condition, once for all its rows, which go as one JSON argument where their
                // values allow (`JSONRows`), else as a `VALUES` list.
                return sets.chunks(of: Self.setsPerStatement).map { chunk in
                    var builder = Builder(dialect: self)
                    var parts: [String] = []
                    var gate: String?
                    if chunk.startIndex == 0, !lockingFirst.isEmpty {
                        // The whole list locked in the key's order before any update reaches a row (an update
                        // locks a row only once its condition holds), so two such statements never each hold a
                        // row the other waits for.
                        let collated = table.column(key)?.kind == .text ? " COLLATE \"C\"" : ""
                        let locked = Self.lockedFirst(
                            "SELECT \(key) FROM \(table.name) WHERE " + builder.condition(.among(key, lockingFirst), in: table)
                                + " ORDER BY \(key)\(collated) FOR UPDATE")
                        parts.append(locked.entry)
                        gate = locked.gate
                    }
                    let shapes = Shape.of(Array(chunk), in: table)
                    for (index, shape) in shapes.enumerated() {
                        // The names `Builder.bind` gives values while gathering.
                        let names = (1...shape.width).map { "g\($0)" }
                        let given: String
                        if let rows = JSONRows(shape.rows, names: names) {
                            given = rows.given(builder.bind(.value(.text(rows.json))))
                        } else {
                            let rows = shape.rows.map { row in
                                "(" + row.map { builder.bind($0.argument) + "::" + $0.type }.joined(separator: ", ") + ")"
                            }
                            given = "(VALUES \(rows.joined(separator: ", "))) AS given(\(names.joined(separator: ", ")))"
                        }
                        parts.append(
                            "s\(index) AS (UPDATE \(table.name) SET \(shape.assignments)"
                                + " FROM \(given)"
                                + " WHERE " + (gate.map { "(\(shape.condition)) AND \($0)" } ?? shape.condition)
                                + " RETURNING \(table.name).\(key))")
                    }
                    let read = shapes.indices.map { "SELECT \(key) FROM s\($0)" }.joined(separator: " UNION ALL ")
                    return SQLStatement(text: "WITH " + parts.joined(separator: ", ") + " " + read, arguments: builder.arguments, returns: [key])
                }
            }
        case .insertNumbered(let table, let rows, let numbering, let locking):
            switch self {
            case .sqlite:
                // One cached statement a row; SQLite's one writer numbers them in the order they run.
                return rows.map { self.write(.insert(table, $0, returning: [numbering])) }
            case .postgres:
                return rows.chunks(of: Self.rowsPerStatement(table)).map { chunk in
                    numberedRows(table, Array(chunk), numbering: numbering, locking: chunk.startIndex == 0 ? locking : [])
                }
            }
        default:
            return [self.write(write)]
        }
    }

    /// One PostgreSQL statement inserting rows under numbers taken from the identity's sequence beforehand and
    /// given out in ascending order by the rows' places, so the numbers follow the rows' order whatever order
    /// the rows are inserted in; the numbers are read back sorted. Gaps are as the sequence leaves them anyway.
    /// `locking`'s advisory keys are all held, in their one order, before the first number is taken (`lockedFirst`).
    private func numberedRows(_ table: SQLTable, _ rows: [[SQLValue]], numbering: String, locking: [SQLLockKey]) -> SQLStatement {
        precondition(table.point == nil, "numbered rows of \(table) carry no point")
        var builder = Builder(dialect: self)
        var locked = "", gate = ""
        if !locking.isEmpty {
            let first = Self.lockedFirst(builder.advisoryLocks(SQLLockKey.inLockingOrder(locking)))
            locked = first.entry + ", "
            gate = " WHERE " + first.gate
        }
        let names = table.columns.map(\.name).joined(separator: ", ")
        let numbers: String, given: String, selected: String
        let places = rows.enumerated().map { [Builder.Given(argument: .value(.integer(Int64($0 + 1))), type: "int8")] + Builder.Given.row($1, of: table) }
        if let json = JSONRows(places, names: ["place"] + table.columns.map(\.name)) {
            // One argument, read twice: the rows, and a number for each. Not `generate_series` up to its length,
            // which a plan for the given argument counts exactly and a generic plan cannot, so that PostgreSQL
            // would plan at every run; both take 100 elements here.
            let argument = builder.bind(.value(.text(json.json)))
            numbers = "json_array_elements(\(argument)::json)"
            given = json.given(argument)
            selected = table.columns.map { Self.cast("given.\($0.name)", to: $0) }.joined(separator: ", ")
        } else {
            let tuples = rows.enumerated().map { place, values in
                precondition(values.count == table.columns.count, "a row of \(table) has a value per column")
                return "(\(place + 1), " + zip(table.columns, values).map { builder.placeholder($1, for: $0) }.joined(separator: ", ") + ")"
            }
            // The count is ours, not input.
            numbers = "generate_series(1, \(rows.count))"
            given = "(VALUES \(tuples.joined(separator: ", "))) AS given(place, \(names))"
            selected = table.columns.map { "given." + $0.name }.joined(separator: ", ")
        }
        // Identifiers are the schema's own: not input.
        let text = "WITH " + locked + "taken AS (SELECT nextval(pg_get_serial_sequence('\(table.name)', '\(numbering)')) AS number"
            + " FROM \(numbers)\(gate)),"
            + " numbered AS (SELECT number, row_number() OVER (ORDER BY number) AS place FROM taken),"
            + " inserted AS (INSERT INTO \(table.name) (\(numbering), \(names)) OVERRIDING SYSTEM VALUE"
            + " SELECT numbered.number, \(selected)"
            + " FROM \(given) JOIN numbered USING (place)"
            + " RETURNING \(numbering))"
            + " SELECT \(numbering) FROM inserted ORDER BY \(numbering)"
        return SQLStatement(text: text, arguments: builder.arguments, returns: [numbering])
    }

    /// Rows of `table` in one PostgreSQL statement: it binds at most 65,535 parameters, one a column each row.
    private static func rowsPerStatement(_ table: SQLTable) -> Int { max(1, 60_000 / max(1, table.columns.count)) }

    /// PostgreSQL's transaction-scoped advisory locks on `keys`, in one statement (`SQLPlan.lock`).
    public func advisoryLocks(_ keys: [SQLLockKey]) -> SQLStatement {
        precondition(self == .postgres, "SQLite has one writer and takes no advisory locks")
        var builder = Builder(dialect: self)
        return SQLStatement(text: builder.advisoryLocks(keys), arguments: builder.arguments, returns: [])
    }

    /// A PostgreSQL `WITH` entry, `locked`, that runs `select` (which takes locks) to its end, and the condition
    /// that makes a write of the same statement wait for it: the count of its rows, an init plan PostgreSQL runs
    /// once before the write's first row. Every lock `select` takes is held before the write locks a row.
    private static func lockedFirst(_ select: String) -> (entry: String, gate: String) {
        ("locked AS MATERIALIZED (\(select))", "(SELECT count(*) FROM locked) >= 0")
    }

    /// Rows bound as one JSON argument, an array of objects, that `json_to_recordset` reads back as the relation
    /// `given` with a typed column per member: a statement's text is then the same for any number of rows, so
    /// PostgreSQL parses it, and plans it where a generic plan serves, once a connection (`PreparedStatements`)
    /// rather than at every run, as it must a `VALUES` list of each length. Nil when a value has no JSON form
    /// that reads back as itself (bytes, lists, a real that is not finite), or a column's rows differ in type.
    private struct JSONRows {
        let json: String
        /// `name type, …`, for `AS given(…)`.
        let columns: String

        /// The relation `given`, read from `argument`, the placeholder `json` is bound to.
        func given(_ argument: String) -> String {
            "json_to_recordset(\(argument)::json) AS given(\(columns))"
        }

        init?(_ rows: [[Builder.Given]], names: [String]) {
            guard let first = rows.first, first.count == names.count else { return nil }
            var json = "["
            for (place, row) in rows.enumerated() {
                json += place == 0 ? "{" : ",{"
                for (index, given) in row.enumerated() {
                    guard given.type == first[index].type, case .value(let value) = given.argument, let member = Self.json(value) else {
                        return nil
                    }
                    json += (index == 0 ? "" : ",") + Builder.jsonString(names[index]) + ":" + member
                }
                json += "}"
            }
            self.json = json + "]"
            columns = zip(names, first).map { "\($0) \($1.type)" }.joined(separator: ", ")
        }

        private static func json(_ value: SQLValue) -> String? {
            switch value {
            case .null: "null"
            case .integer(let number): String(number)
            case .real(let number): number.isFinite ? "\(number)" : nil
            case .text(let text): Builder.jsonString(text)
            case .bool(let flag): flag ? "true" : "false"
            case .bytes: nil
            }
        }
    }

    /// Sets of `SQLWrite.setEach` alike but for their values (the same columns set, the same condition), written
    /// on PostgreSQL as one `UPDATE … FROM … AS given` whose text names each value by its place in a row of
    /// `given`. Shapes go in the order of their text, whatever order the sets came in, so that chunks of the same
    /// shapes are one statement's text; a set's values are its row. The updates of one statement change
    /// different rows (`SQLWrite.setEach`), so their order changes nothing else.
    private struct Shape {
        let key: String
        let assignments: String
        let condition: String
        var rows: [[Builder.Given]] = []
        var width: Int { rows.first?.count ?? 0 }

        static func of(_ sets: [SQLSet], in table: SQLTable) -> [Shape] {
            var shapes: [Shape] = []
            var places: [String: Int] = [:]
            for set in sets {
                precondition(!set.assignments.isEmpty, "a set of \(table) sets a column")
                var gathering = Builder(dialect: .postgres)
                gathering.given = []
                let assignments = gathering.assignments(table, set.assignments)
                let condition = gathering.condition(set.condition, in: table)
                let row = gathering.given ?? []
                // Alike only if typed alike too: a column of the list has one type.
                let key = assignments + "\u{0}" + condition + "\u{0}" + row.map(\.type).joined(separator: ",")
                if let place = places[key] {
                    shapes[place].rows.append(row)
                } else {
                    places[key] = shapes.count
                    shapes.append(Shape(key: key, assignments: assignments, condition: condition, rows: [row]))
                }
            }
            return shapes.sorted { $0.key < $1.key }
        }
    }

    /// Sets of `SQLWrite.setEach` in one PostgreSQL statement: an alert's change binds about a dozen values.
    private static var setsPerStatement: Int { 1_000 }

    private func identity(of table: SQLTable) -> String {
        table.columns.first { $0.origin == .identity }?.name ?? "id"
    }

    /// A column of `given` as written into `column`: JSON is read as its text (`Builder.Given.postgresType`) and
    /// cast where it is written, as `Builder.placeholder` casts a bound one.
    private static func cast(_ expression: String, to column: SQLColumn) -> String {
        if case .json(let type) = column.kind { return "\(expression)::\(type)" }
        return expression
    }

    /// One PostgreSQL `INSERT` of several rows.
    private func manyRows(_ table: SQLTable, _ rows: [[SQLValue]], conflict: SQLConflict) -> SQLStatement {
        var builder = Builder(dialect: self)
        let overriding = table.columns.contains { $0.origin == .identity } ? " OVERRIDING SYSTEM VALUE" : ""
        let names = table.columns.map(\.name)
        let source: String
        if let given = JSONRows(rows.map { Builder.Given.row($0, of: table) }, names: names) {
            source = "SELECT " + table.columns.map { Self.cast("given.\($0.name)", to: $0) }.joined(separator: ", ")
                + " FROM " + given.given(builder.bind(.value(.text(given.json))))
        } else {
            let tuples = rows.map { values in
                "(" + zip(table.columns, values).map { builder.placeholder($1, for: $0) }.joined(separator: ", ") + ")"
            }
            source = "VALUES " + tuples.joined(separator: ", ")
        }
        return SQLStatement(
            text: "INSERT INTO \(table.name) (\(names.joined(separator: ", ")))\(overriding) " + source
                + onConflict(conflict, table, names: names) + " RETURNING 1 AS affected",
            arguments: builder.arguments, returns: [])
    }

    /// What an insert of the columns `names` does with a row whose key is taken.
    private func onConflict(_ conflict: SQLConflict, _ table: SQLTable, names: [String]) -> String {
        switch conflict {
        case .fail: ""
        case .ignore: " ON CONFLICT DO NOTHING"
        case .replace:
            " ON CONFLICT (\(table.key.joined(separator: ", "))) DO UPDATE SET "
                + names.filter { !table.key.contains($0) }.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        }
    }

    /// A write; on PostgreSQL every write returns a row per row it touched (`1 AS affected` when it asked for
    /// no column), which is how its count is read.
    public func write(_ write: SQLWrite) -> SQLStatement {
        var builder = Builder(dialect: self)
        var text: String
        var returning: [String] = []
        switch write {
        case .insert(let table, let values, let conflict, let wanted):
            precondition(values.count == table.columns.count, "a row of \(table) has a value per column")
            var names = table.columns.map(\.name)
            var placeholders = zip(table.columns, values).map { builder.placeholder($1, for: $0) }
            if let point = pointValues(table, values) {
                names.append(Self.pointColumn)
                placeholders.append(builder.point(point))
            }
            // PostgreSQL takes a number its identity would give only when told to (a copy keeps its numbers).
            let overriding = self == .postgres && table.columns.contains { $0.origin == .identity } ? " OVERRIDING SYSTEM VALUE" : ""
            text = "INSERT INTO \(table.name) (\(names.joined(separator: ", ")))\(overriding) VALUES (\(placeholders.joined(separator: ", ")))"
            text += onConflict(conflict, table, names: names)
            returning = wanted
        case .update(let table, let values, _):
            precondition(values.count == table.columns.count, "a row of \(table) has a value per column")
            // Bound in the order the text names them: SQLite's `?` are numbered by place.
            var assignments: [String] = []
            for (column, value) in zip(table.columns, values) where !table.key.contains(column.name) {
                assignments.append(column.name + " = " + builder.placeholder(value, for: column))
            }
            if let point = pointValues(table, values) { assignments.append(Self.pointColumn + " = " + builder.point(point)) }
            var keys: [String] = []
            for (column, value) in zip(table.columns, values) where table.key.contains(column.name) {
                keys.append(column.name + " = " + builder.placeholder(value, for: column))
            }
            text = "UPDATE \(table.name) SET \(assignments.joined(separator: ", ")) WHERE \(keys.joined(separator: " AND "))"
        case .set(let table, let assignments, let condition):
            text = builder.update(table, assignments, where: condition)
        case .delete(let table, let condition):
            text = "DELETE FROM \(table.name) WHERE \(builder.condition(condition, in: table))"
        case .increment(let table, let column, let condition):
            text = "UPDATE \(table.name) SET \(column) = \(column) + 1 WHERE \(builder.condition(condition, in: table))"
        case .insertMany, .continueNumbering, .setEach, .insertNumbered:
            preconditionFailure("\(write) takes several statements: `statements(_:)` writes them")
        }
        if !returning.isEmpty {
            text += " RETURNING " + returning.joined(separator: ", ")
        } else if self == .postgres {
            text += " RETURNING 1 AS affected"
        }
        return SQLStatement(text: text, arguments: builder.arguments, returns: returning)
    }

    /// How a column is read: geometry as WKB, JSON as its text.
    private func selected(_ column: SQLColumn) -> String {
        switch (self, column.kind) {
        case (.sqlite, .multiPolygon): "AsBinary(\(column.name)) AS \(column.name)"
        case (.postgres, .multiPolygon): "ST_AsBinary(\(column.name)) AS \(column.name)"
        case (.postgres, .json): "\(column.name)::text AS \(column.name)"
        default: column.name
        }
    }

    /// The point a located row's SpatiaLite geometry is made from; nil where the database makes it itself.
    private func pointValues(_ table: SQLTable, _ values: [SQLValue]) -> (latitude: SQLValue, longitude: SQLValue)? {
        guard self == .sqlite, let point = table.point,
            let latitude = table.columns.firstIndex(where: { $0.name == point.latitude }),
            let longitude = table.columns.firstIndex(where: { $0.name == point.longitude })
        else { return nil }
        return (values[latitude], values[longitude])
    }

    /// Collects arguments and writes their placeholders.
    private struct Builder {
        let dialect: SQLDialect
        var arguments: [SQLArgument] = []

        /// `UPDATE … SET … WHERE …` of `SQLWrite.set`.
        mutating func update(_ table: SQLTable, _ assignments: [(column: String, value: SQLValue)], where condition: SQLCondition) -> String {
            let set = self.assignments(table, assignments)
            return "UPDATE \(table.name) SET \(set) WHERE " + self.condition(condition, in: table)
        }

        /// `column = value, …` of an update.
        mutating func assignments(_ table: SQLTable, _ assignments: [(column: String, value: SQLValue)]) -> String {
            precondition(
                !assignments.contains { $0.column == table.point?.latitude || $0.column == table.point?.longitude },
                "a located row of \(table) moves only by a whole update, which moves its point too")
            var set: [String] = []
            for assignment in assignments {
                let column = table.column(assignment.column) ?? SQLColumn(name: assignment.column, kind: .text, origin: .field)
                set.append(assignment.column + " = " + placeholder(assignment.value, for: column))
            }
            return set.joined(separator: ", ")
        }

        /// A `SELECT` taking the keys' transaction-scoped advisory locks in the order given: `unnest` yields its
        /// rows in the arrays' order, and each row's lock is taken as the scan reaches it.
        mutating func advisoryLocks(_ keys: [SQLLockKey]) -> String {
            let spaces = bind(.integers(keys.map { Int64($0.space.rawValue) })), texts = bind(.texts(keys.map(\.key)))
            return "SELECT pg_advisory_xact_lock(space, hashtext(key)) FROM unnest(\(spaces)::int4[], \(texts)::text[]) AS keys(space, key)"
        }

        /// Binds a value, whose column (when it is one's) types a null; while `given` gathers, the value goes there
        /// instead and is named by its place in it.
        mutating func bind(_ argument: SQLArgument, column: SQLColumn? = nil) -> String {
            if given != nil {
                given?.append(Given(argument: argument, type: Given.postgresType(of: argument, column: column)))
                return "given.g\(given?.count ?? 0)"
            }
            arguments.append(argument)
            return dialect == .sqlite ? "?" : "$\(arguments.count)"
        }

        /// While not nil, values are gathered here rather than bound (`Shape.of`, for `SQLWrite.setEach`).
        var given: [Given]?

        /// A value of a set of `SQLWrite.setEach`, bound in its row of the `VALUES` list `given` on PostgreSQL.
        struct Given {
            var argument: SQLArgument
            /// Its PostgreSQL type: every row of the list is cast, so that a column of nulls is typed too.
            var type: String

            /// A row of `table`'s values, each typed as bound into its column.
            static func row(_ values: [SQLValue], of table: SQLTable) -> [Given] {
                precondition(values.count == table.columns.count, "a row of \(table) has a value per column")
                return zip(table.columns, values).map { Given(argument: .value($1), type: postgresType(of: .value($1), column: $0)) }
            }

            static func postgresType(of argument: SQLArgument, column: SQLColumn?) -> String {
                switch argument {
                case .value(.integer): "int8"
                case .value(.real): "float8"
                case .value(.text): "text"
                case .value(.bytes): "bytea"
                case .value(.bool): "bool"
                case .texts: "text[]"
                case .integers: "int8[]"
                case .value(.null):
                    switch column?.kind {
                    case .integer: "int8"
                    case .real: "float8"
                    case .boolean: "bool"
                    case .bytes, .multiPolygon: "bytea"
                    // JSON is bound as its text and cast where it is written (`placeholder`).
                    case .text, .json, nil: "text"
                    }
                }
            }
        }

        /// A value written into a column of this kind.
        mutating func placeholder(_ value: SQLValue, for column: SQLColumn) -> String {
            let bound = bind(.value(value), column: column)
            switch (dialect, column.kind) {
            case (.postgres, .json(let type)): return "\(bound)::\(type)"
            case (.sqlite, .multiPolygon): return "GeomFromWKB(\(bound), 4326)"
            case (.postgres, .multiPolygon): return "ST_GeomFromWKB(\(bound), 4326)"
            default: return bound
            }
        }

        mutating func point(_ point: (latitude: SQLValue, longitude: SQLValue)) -> String {
            let longitude = bind(.value(point.longitude))
            let latitude = bind(.value(point.latitude))
            return "MakePoint(\(longitude), \(latitude), 4326)"
        }

        mutating func condition(_ condition: SQLCondition, in table: SQLTable) -> String {
            switch condition {
            case .all:
                return "1 = 1"
            case .equals(let column, .null), .isNull(let column):
                return "\(column) IS NULL"
            case .notNull(let column), .notEquals(let column, .null):
                return "\(column) IS NOT NULL"
            case .equals(let column, let value):
                return "\(column) = \(bind(.value(value), column: table.column(column)))"
            case .notEquals(let column, let value):
                return "\(column) <> \(bind(.value(value), column: table.column(column)))"
            case .same(let column, let value):
                let bound = bind(.value(value), column: table.column(column))
                return dialect == .sqlite ? "\(column) IS \(bound)" : "\(column) IS NOT DISTINCT FROM \(bound)"
            case .compare(let column, let comparison, let value):
                return "\(column) \(comparison.rawValue) \(bind(.value(value), column: table.column(column)))"
            case .among(let column, let values):
                guard !values.isEmpty else { return "1 = 0" }
                switch dialect {
                case .sqlite:
                    // One statement for any number of values, which SQLite caches, instead of one per length.
                    let list = values.map { value -> String in
                        switch value {
                        case .integer(let number): String(number)
                        case .text(let text): Self.jsonString(text)
                        default: preconditionFailure("a list to match holds text or integers")
                        }
                    }
                    return "\(column) IN (SELECT value FROM json_each(\(bind(.value(.text("[" + list.joined(separator: ",") + "]"))))))"
                case .postgres:
                    if case .integer = values[0] {
                        return "\(column) = ANY(\(bind(.integers(values.compactMap { if case .integer(let n) = $0 { n } else { nil } }))))"
                    }
                    return "\(column) = ANY(\(bind(.texts(values.compactMap { if case .text(let t) = $0 { t } else { nil } }))))"
                }
            case .startsWith(let column, let prefix):
                return "\(column) LIKE \(bind(.value(.text(Self.escapedLike(prefix) + "%")))) ESCAPE '\\'"
            case .contains(let column, let part):
                return "\(column) LIKE \(bind(.value(.text("%" + Self.escapedLike(part) + "%")))) ESCAPE '\\'"
            case .near(let centre, let radius):
                switch dialect {
                case .sqlite:
                    // The R*Tree keeps rectangles rounded outwards to 32-bit floats, so a point inside the box is
                    // never missed.
                    let box = BoundingBox(around: centre, radius: radius)
                    var ranges: [String] = []
                    for range in box.longitudeRanges {
                        ranges.append(
                            "rowid IN (SELECT pkid FROM idx_\(table.name)_\(SQLDialect.pointColumn) WHERE xmin <= "
                                + bind(.value(.real(range.upperBound))) + " AND xmax >= " + bind(.value(.real(range.lowerBound)))
                                + " AND ymin <= " + bind(.value(.real(box.maxLatitude))) + " AND ymax >= "
                                + bind(.value(.real(box.minLatitude))) + ")")
                    }
                    return "(" + ranges.joined(separator: " OR ") + ")"
                case .postgres:
                    let longitude = bind(.value(.real(centre.longitude))), latitude = bind(.value(.real(centre.latitude)))
                    let meters = bind(.value(.real(CandidateRadius.meters(radius))))
                    return "ST_DWithin(location, ST_SetSRID(ST_MakePoint(\(longitude), \(latitude)), 4326)::geography, \(meters), false)"
                }
            case .and(let parts):
                guard !parts.isEmpty else { return "1 = 1" }
                return joined(parts, by: " AND ", in: table)
            case .or(let parts):
                guard !parts.isEmpty else { return "1 = 0" }
                return joined(parts, by: " OR ", in: table)
            case .exists(let other, let inner):
                // In a set of `SQLWrite.setEach` on PostgreSQL, `OFFSET 0` keeps the subquery a probe of its table
                // per row of `given`: made a join, a generic plan, which takes `given` for 100 rows whatever its
                // length, may read the whole table (`JSONRows`).
                let fence = dialect == .postgres && given != nil ? " OFFSET 0" : ""
                return "EXISTS (SELECT 1 FROM \(other.name) WHERE \(self.condition(inner, in: other))\(fence))"
            }
        }

        private mutating func joined(_ parts: [SQLCondition], by separator: String, in table: SQLTable) -> String {
            var rendered: [String] = []
            for part in parts { rendered.append(condition(part, in: table)) }
            return "(" + rendered.joined(separator: separator) + ")"
        }

        /// `%`, `_` and the escape character itself taken literally in a `LIKE` pattern.
        static func escapedLike(_ text: String) -> String {
            var escaped = ""
            for character in text {
                if character == "\\" || character == "%" || character == "_" { escaped.append("\\") }
                escaped.append(character)
            }
            return escaped
        }

        /// A JSON string literal, for SQLite's `json_each` lists.
        static func jsonString(_ text: String) -> String {
            var bytes: [UInt8] = []
            JSONValue.writeString(text, to: &bytes)
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}

/// Candidate radii with a margin. PostGIS measures on a sphere of radius 6,371,008.7714 m and GeoCore on one
/// of 6,371,008.8 m (`Earth.meanRadius`), so PostGIS's distances are the smaller by 4.5 parts in 10⁹; a
/// margin of one part in a million and a centimetre covers that and any rounding, and ranking removes
/// what the margin lets in.
public enum CandidateRadius {
    public static func meters(_ radius: Distance) -> Double { radius.meters * (1 + 1e-6) + 0.01 }
}
