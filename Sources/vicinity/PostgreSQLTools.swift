import Foundation
import VicinityPostGIS

/// What `backup` and `restore` say when `--db` names a PostgreSQL server: PostgreSQL is backed up with its own
/// tools, which already do what `vicinity backup` does for a file: `pg_dump` reads one consistent snapshot (a
/// repeatable-read transaction) while the server goes on writing, and `pg_restore --single-transaction` restores
/// all of it or nothing. The commands are printed for the operator to run, not run: they belong to the
/// PostgreSQL installation, and its version must match the server's.
enum PostgreSQLTools {
    /// The connection as libpq reads it: the URL without its password (libpq takes that from PGPASSWORD or the
    /// password file, as vicinity does) and without `schema`, which libpq does not know.
    static func connection(_ configuration: PostGISConfiguration) -> String {
        let url = "postgres://\(configuration.username)@\(configuration.host):\(configuration.port)/\(configuration.database)"
        return configuration.tls == .prefer ? url : url + "?sslmode=\(configuration.tls.rawValue)"
    }

    /// `pg_dump` in its custom format (`-Fc`: compressed, and what `pg_restore` reads).
    static func dump(_ configuration: PostGISConfiguration, into file: String) -> String {
        "pg_dump -Fc --no-owner\(schemaOption(configuration)) --file=\(quoted(file)) --dbname=\(quoted(connection(configuration)))"
    }

    /// `pg_restore` over what the database holds, in one transaction: a failure changes nothing.
    static func restore(_ configuration: PostGISConfiguration, from file: String) -> String {
        "pg_restore --clean --if-exists --no-owner --single-transaction\(schemaOption(configuration)) --dbname=\(quoted(connection(configuration))) \(quoted(file))"
    }

    /// The message `backup` prints.
    static func backupAdvice(_ configuration: PostGISConfiguration, file: String) -> String {
        """
        vicinity: backup copies SpatiaLite files; \(configuration.location) is a PostgreSQL database, which is backed \
        up with PostgreSQL's pg_dump (one consistent snapshot, taken while the server runs):
          \(dump(configuration, into: file))
        and restored with:
          \(restore(configuration, from: file))
        The password comes from PGPASSWORD or ~/.pgpass, as for vicinity.
        """
    }

    /// The message `restore` prints.
    static func restoreAdvice(_ configuration: PostGISConfiguration, file: String) -> String {
        """
        vicinity: restore puts back SpatiaLite files; \(configuration.location) is a PostgreSQL database, which is \
        restored from a pg_dump -Fc file with PostgreSQL's pg_restore, all of it or nothing (stop the servers first):
          \(restore(configuration, from: file))
        Such a file is made with:
          \(dump(configuration, into: file))
        The password comes from PGPASSWORD or ~/.pgpass, as for vicinity.
        """
    }

    private static func schemaOption(_ configuration: PostGISConfiguration) -> String {
        configuration.schema.map { " --schema=\($0)" } ?? ""
    }

    /// Single quotes for a POSIX shell, so that `&` and `?` in a URL or spaces in a path stay one word.
    private static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
