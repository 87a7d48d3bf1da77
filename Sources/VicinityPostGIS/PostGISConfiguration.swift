import Foundation
import NIOSSL
import PostgresNIO
import VicinityCore

/// Where a PostGIS record lives, read from a `postgres://user@host:port/database` URL the way libpq reads
/// one, so that operators write what `psql` takes.
///
/// The password comes from the URL, else `PGPASSWORD`, else the password file (`PGPASSFILE`, else
/// `~/.pgpass`, in libpq's format); `location`, what logs and start-up lines show, never holds it.
public struct PostGISConfiguration: Sendable, CustomStringConvertible {
    /// A URL this store cannot use, said in words.
    public struct Problem: Error, Hashable, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// How the connection is encrypted: libpq's `sslmode` values that mean something to this client.
    public enum TLSMode: String, Sendable, CaseIterable {
        /// Plain TCP.
        case disable
        /// Encrypted when the server offers it, its certificate unchecked; plain otherwise (libpq's default).
        case prefer
        /// Encrypted or no connection, the certificate unchecked.
        case require
        /// Encrypted, with the certificate checked against the system's roots and the host name.
        case verifyFull = "verify-full"
    }

    public var host: String
    public var port: Int
    public var username: String
    public var database: String
    var password: String?
    public var tls: TLSMode
    /// The schema the tables live in, created when missing; nil for the database's default (`public`).
    public var schema: String?
    /// Connections the pool opens at most. 16: the server's 2 cores are busy long before 16 statements run
    /// at once, and several fronts stay under PostgreSQL's default `max_connections` of 100.
    public var maximumConnections: Int = 16
    /// How long a statement waits for a connection before the store says the database is unavailable. 5 s:
    /// past the 1–2 s a busy pool takes to hand one over under load, and short enough that a client gets 503
    /// and retries rather than hanging while PostgreSQL restarts.
    public var connectionWait: Duration = .seconds(5)
    /// How long making a connection may take, TCP, TLS and PostgreSQL's start-up together (URL
    /// `connect_timeout`, in whole seconds, as libpq reads it). 5 s, the `connectionWait` a request waits for a
    /// connection anyway: a handshake on a LAN takes milliseconds, and one still going after that only ends
    /// after its request has been answered 503.
    public var connectTimeout: Duration = .seconds(5)
    /// PostgreSQL's `statement_timeout` on every connection (URL `statement_timeout`, as PostgreSQL writes it:
    /// `5s`, `500ms`, `1min`, a bare number of milliseconds; 0 for none). Nil leaves the server's own: commands
    /// that load or copy whole tables run as long as they need; `serve` takes `servingStatementTimeout`.
    public var statementTimeout: Duration?
    /// A pooled connection idle this long is checked with `SELECT 1` (postgres-nio's keep-alive, which stands in
    /// for TCP keepalive: postgres-nio sets no socket options); URL `keepalives_idle` in whole seconds, or
    /// `keepalives=0` for none, as libpq names them. 30 s, postgres-nio's own default, well inside the idle
    /// timeouts of the NAT gateways and firewalls between a server and its database (350 s on AWS's).
    public var keepAliveIdle: Duration? = .seconds(30)
    /// How many runs of a statement of the shared plans, in this process, before it runs prepared on each
    /// connection (URL `prepare_threshold`, psycopg's name and default of 5; `none` never prepares, for a pooler
    /// in front of PostgreSQL that does not keep a session's prepared statements). See `PreparedStatements`.
    public var prepareThreshold: Int? = PreparedStatements.defaultThreshold

    /// The statement timeout `serve` runs with when the URL gives none: 5 s, as long as a request waits for a
    /// connection (`connectionWait`) and hundreds of times what its statements take; past it the client gets
    /// 503 with `Retry-After` and comes back, rather than waiting on a statement stuck behind a lock.
    public static let servingStatementTimeout = Duration.seconds(5)

    /// How long a statement may go unanswered before its connection is taken for lost: the statement timeout,
    /// after which the server answers by itself, and a connect timeout's worth for that answer to arrive.
    /// Nil without a statement timeout: a statement may then run as long as it needs.
    var answerDeadline: Duration? {
        guard let statementTimeout, statementTimeout > .zero else { return nil }
        return statementTimeout + connectTimeout
    }

    public static let defaultPort = 5432

    /// Whether `text` names a server database rather than a file.
    public static func isURL(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// Reads the URL; `environment` supplies `PGPASSWORD`, `PGPASSFILE` and `HOME`.
    public init(url text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(Problem) {
        guard Self.isURL(text), let components = URLComponents(string: text) else {
            throw Problem(description: "a server database is given as postgres://user@host:port/database")
        }
        guard let host = components.host, !host.isEmpty else {
            throw Problem(description: "the database URL names no host (postgres://user@HOST:port/database)")
        }
        guard let username = components.user, !username.isEmpty else {
            throw Problem(description: "the database URL names no user (postgres://USER@host:port/database)")
        }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty, !database.contains("/") else {
            throw Problem(description: "the database URL names no database (postgres://user@host:port/DATABASE)")
        }
        self.host = host
        self.port = components.port ?? Self.defaultPort
        self.username = username
        self.database = database
        self.tls = .prefer
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                guard let mode = item.value.flatMap(TLSMode.init(rawValue:)) else {
                    throw Problem(description: "sslmode must be one of \(TLSMode.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                tls = mode
            case "schema":
                guard let name = item.value, Self.isPlainIdentifier(name) else {
                    throw Problem(description: "schema must be a plain name: lower-case letters, digits and _, not starting with a digit")
                }
                schema = name
            case "connect_timeout":
                connectTimeout = try Self.seconds(item, atLeast: 1)
            case "statement_timeout":
                statementTimeout = try Self.statementTimeout(item)
            case "keepalives_idle":
                keepAliveIdle = try Self.seconds(item, atLeast: 1)
            case "prepare_threshold":
                prepareThreshold = try Self.prepareThreshold(item)
            case "keepalives":
                switch item.value {
                case "0": keepAliveIdle = nil
                case "1": break
                default: throw Problem(description: "keepalives must be 0 or 1")
                }
            default:
                throw Problem(description: "the database URL's \(item.name) is not an option this service reads (\(Self.options.joined(separator: ", ")))")
            }
        }
        password = components.password
            ?? environment["PGPASSWORD"]
            ?? PasswordFile.password(
                path: environment["PGPASSFILE"] ?? environment["HOME"].map { $0 + "/.pgpass" },
                host: host, port: port, database: database, username: username)
    }

    /// The URL without its password: what may be shown.
    public var location: String {
        var text = "postgres://\(username)@\(host):\(port)/\(database)"
        var options: [String] = []
        if tls != .prefer { options.append("sslmode=\(tls.rawValue)") }
        if let schema { options.append("schema=\(schema)") }
        if connectTimeout != .seconds(5) { options.append("connect_timeout=\(connectTimeout.components.seconds)") }
        if let statementTimeout { options.append("statement_timeout=\(statementTimeout.wholeMilliseconds)ms") }
        if let keepAliveIdle {
            if keepAliveIdle != .seconds(30) { options.append("keepalives_idle=\(keepAliveIdle.components.seconds)") }
        } else {
            options.append("keepalives=0")
        }
        if prepareThreshold != PreparedStatements.defaultThreshold { options.append("prepare_threshold=\(prepareThreshold.map(String.init) ?? "none")") }
        if !options.isEmpty { text += "?" + options.joined(separator: "&") }
        return text
    }

    public var description: String { location }

    /// A name that needs no quoting in SQL, so that it can be written into statements as it is.
    static func isPlainIdentifier(_ name: String) -> Bool {
        guard let first = name.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first), name.utf8.count <= 63 else { return false }
        return name.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "_")
        }
    }

    /// The client's configuration.
    var client: PostgresClient.Configuration {
        var unverified = TLSConfiguration.makeClientConfiguration()
        unverified.certificateVerification = .none
        let tls: PostgresClient.Configuration.TLS = switch self.tls {
        case .disable: .disable
        case .prefer: .prefer(unverified)
        case .require: .require(unverified)
        case .verifyFull: .require(.makeClientConfiguration())
        }
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: tls)
        configuration.options.maximumConnections = maximumConnections
        configuration.options.connectTimeout = connectTimeout
        configuration.options.keepAliveBehavior = keepAliveIdle.map { .init(frequency: $0) }
        // Every connection opens with the schema first, so that unqualified names mean this record's tables;
        // PostGIS's types stay reachable in public.
        if let schema { configuration.options.additionalStartupParameters = [("search_path", "\(schema), public")] }
        configuration.options.additionalStartupParameters.append(("application_name", "vicinity"))
        // A setting in the start-up message holds for the whole session, as `SET` would, at no round trip.
        if let statementTimeout {
            configuration.options.additionalStartupParameters.append(("statement_timeout", "\(statementTimeout.wholeMilliseconds)"))
        }
        return configuration
    }
}

/// libpq's password file: lines of `host:port:database:username:password`, `*` matching anything, `\:` and
/// `\\` escaping; the first matching line wins.
enum PasswordFile {
    static func password(path: String?, host: String, port: Int, database: String, username: String) -> String? {
        guard let path, let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        for line in text.split(whereSeparator: \.isNewline) where !line.hasPrefix("#") {
            let fields = split(String(line))
            guard fields.count == 5 else { continue }
            let wanted = [host, String(port), database, username]
            if zip(fields.prefix(4), wanted).allSatisfy({ $0 == "*" || $0 == $1 }) { return fields[4] }
        }
        return nil
    }

    private static func split(_ line: String) -> [String] {
        var fields: [String] = []
        var current = ""
        var escaped = false
        for character in line {
            if escaped {
                current.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == ":", fields.count < 4 {
                fields.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        fields.append(current)
        return fields
    }
}
