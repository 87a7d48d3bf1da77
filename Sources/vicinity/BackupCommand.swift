import ArgumentParser
import Foundation
import Logging
import VicinityCore
import VicinityRecord
import VicinitySpatiaLite

/// `vicinity backup`: a consistent, checked copy of a SpatiaLite database while a server serves it and writes.
struct Backup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy a SpatiaLite database, while it is served and written to, into a checked backup file.",
        discussion: """
            --db names the database to copy, which must exist (it is opened read-only and never created). The \
            backup is one moment of it: it holds every write committed before the copy began and none after, \
            while the server goes on answering and writing (SQLite's online backup of one read snapshot, \
            \(SnapshotCopy.pagesPerStep) pages a step). It is made beside FILE, checked (SQLite's integrity \
            check and the store's own), and given the name FILE only then: a failed or interrupted backup leaves \
            no FILE. FILE is a normal SpatiaLite file that `vicinity serve --db FILE` serves and `vicinity \
            restore` puts back. A PostgreSQL database is backed up with pg_dump: for a postgres:// URL the \
            command prints what to run and exits with status 64. Exit status: 1 when FILE exists (without \
            --replace) or is open in another process, 65 when the database is damaged, 66 when there is none, \
            130 when interrupted.
            """
    )

    @OptionGroup var database: DatabaseOptions

    @Option(name: .customLong("to"), help: ArgumentHelp("The backup file to make.", valueName: "file"))
    var target: String

    @Flag(help: "Replace FILE if it exists (refused while another process has it open).")
    var replace = false

    func validate() throws {
        if case .server(let configuration) = try database.location() {
            Console.error(PostgreSQLTools.backupAdvice(configuration, file: target))
            throw ExitCode.validationFailure
        }
        if case .server = try? RecordLocation(target) {
            throw ValidationError("--to: a SpatiaLite database is backed up into a file; to move it into PostgreSQL, use vicinity copy")
        }
    }

    func run() async throws {
        guard case .file(let path) = try database.location() else { throw ExitCode.validationFailure }
        let backup: OnlineBackup
        do { backup = try OnlineBackup(source: path, target: target, replacing: replace) } catch {
            throw ValidationError("\(error)")
        }
        let interruption = Interruption()
        let outcome: OnlineBackup.Outcome
        do {
            outcome = try await backup.run(
                logger: Logger(label: "vicinity"), progress: Console.copyProgress(),
                stopRequested: { interruption.requested })
        } catch {
            Console.error("vicinity: no backup made, \(target) \(FileManager.default.fileExists(atPath: target) ? "unchanged" : "not created"): \(error)")
            throw error.exitCode(after: interruption)
        }
        print("""
            backed up \(path) into \(target): \(outcome.report.places) places, \(outcome.copy.pages) pages of \
            \(outcome.copy.pageSize) bytes (\(Megabytes(outcome.copy.bytes))); copied in \(Seconds(outcome.copying)), \
            checked in \(Seconds(outcome.checking)): integrity ok
            """)
    }
}

extension BackupProblem {
    /// The exit status, in the other commands' terms: sysexits(3) for bad input, 1 for a refusal.
    var exitCode: ExitCode {
        switch self {
        case .missing: Import.noInput
        case .unreadable, .damaged, .notAStore, .newerVersion: Import.dataError
        case .sameFile: .validationFailure
        case .targetExists, .inUse, .leftovers, .unwritable, .fileSystem: .failure
        case .interrupted: ExitCode(128 + SIGINT)
        }
    }

    /// The exit status when `interruption` may have been the cause: 128 plus the signal that arrived.
    func exitCode(after interruption: Interruption) -> ExitCode {
        if case .interrupted = self { interruption.exitCode } else { exitCode }
    }
}

extension Console {
    /// Pages copied, on a terminal, then a line saying that the checks, which take longer, have begun.
    static func copyProgress() -> (@Sendable (Int, Int) -> Void)? {
        guard let pages = progress("copying pages") else { return nil }
        return { done, total in
            pages(done, total)
            if done == total { error("checking the copy: SQLite's integrity check, the spatial and name indexes") }
        }
    }
}

/// A size in MiB with one decimal, for messages.
struct Megabytes: CustomStringConvertible {
    let bytes: Int
    init(_ bytes: Int) { self.bytes = bytes }
    var description: String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
}

/// A duration in seconds with two decimals, for messages.
struct Seconds: CustomStringConvertible {
    let duration: Duration
    init(_ duration: Duration) { self.duration = duration }
    var description: String { String(format: "%.2f s", duration.milliseconds / 1000) }
}
