import ArgumentParser
import Foundation
import Logging
import VicinityRecord
import VicinitySpatiaLite

/// `vicinity restore`: a checked backup put in place of a SpatiaLite database, whole or not at all.
struct Restore: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Put a backup in place of a SpatiaLite database, after checking it.",
        discussion: """
            The backup is read, never changed. It is copied beside the database and the copy checked: SQLite's \
            integrity check, that it is a Vicinity database written by this version or an older one (an older \
            one is brought up to date), and the store's own checks. Only then does it replace the database, in \
            one rename, with the old file's -wal and -shm removed first; a backup that fails a check changes \
            nothing. A database another process has open (a running server) is refused: stop the server, \
            restore, start it again. For a postgres:// URL the command prints the pg_restore command and exits \
            with status 64. Exit status: 1 when the database is open in another process, 65 when the backup is \
            damaged or too new, 66 when there is none, 130 when interrupted.
            """
    )

    @Option(help: ArgumentHelp("The backup file to restore.", valueName: "backup"))
    var from: String

    @OptionGroup var database: DatabaseOptions

    @Flag(help: ArgumentHelp(
        "Restore even though another process has the database open.",
        discussion: """
            That process keeps the file it opened, now nameless: what it writes afterwards is lost, and it must \
            be stopped before anything opens the restored database.
            """))
    var evenIfOpen = false

    func validate() throws {
        if case .server(let configuration) = try database.location() {
            Console.error(PostgreSQLTools.restoreAdvice(configuration, file: from))
            throw ExitCode.validationFailure
        }
        if case .server = try? RecordLocation(from) {
            throw ValidationError("--from: a backup is a file; to move a PostgreSQL database into a file, use vicinity copy")
        }
    }

    func run() async throws {
        guard case .file(let path) = try database.location() else { throw ExitCode.validationFailure }
        let restore: StoreRestore
        do { restore = try StoreRestore(backup: from, target: path, evenIfOpen: evenIfOpen) } catch {
            throw ValidationError("\(error)")
        }
        let interruption = Interruption()
        let outcome: StoreRestore.Outcome
        do {
            outcome = try await restore.run(
                logger: Logger(label: "vicinity"), progress: Console.copyProgress(),
                stopRequested: { interruption.requested })
        } catch {
            var message = "vicinity: not restored, \(path) unchanged: \(error)"
            if case .inUse = error { message += " (or give --even-if-open)" }
            Console.error(message)
            throw error.exitCode(after: interruption)
        }
        print("""
            restored \(from) into \(path)\(outcome.replaced ? ", replacing what it held" : ""): \(outcome.report.places) \
            places, \(outcome.copy.pages) pages of \(outcome.copy.pageSize) bytes (\(Megabytes(outcome.copy.bytes))): integrity ok
            """)
    }
}
