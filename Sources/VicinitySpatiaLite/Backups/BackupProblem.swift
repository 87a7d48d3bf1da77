import Foundation

/// Why a backup or a restore stopped, said so that the operator knows what to fix. Whatever the problem, the
/// file being made is removed and the file that was to be replaced is as it was.
public enum BackupProblem: Error, Sendable, CustomStringConvertible {
    /// The database to copy is not there.
    case missing(path: String)
    /// SQLite cannot read the file as a database at all, or fails while copying it.
    case unreadable(path: String, reason: String)
    /// The file being made cannot be written: its folder is missing or read-only, or the disk is full.
    case unwritable(path: String, reason: String)
    /// SQLite's or the store's own checks found faults in the copy of `path`.
    case damaged(path: String, problems: [String])
    /// A SQLite file, but not one the store wrote: it has no migrations of the store.
    case notAStore(path: String)
    /// Made by a newer version of the program: migrations this version does not know were applied to it.
    case newerVersion(path: String, unknownMigrations: [String])
    /// The copy would be made over the file it copies.
    case sameFile(path: String)
    /// The target exists and replacing it was not asked for.
    case targetExists(path: String)
    /// Another process has the database open: a running server, most likely.
    case inUse(path: String, process: Int32?)
    /// SQLite's companion files lie beside a target that does not exist; SQLite would read them into the new
    /// file as if they belonged to it.
    case leftovers(paths: [String])
    /// SIGINT or SIGTERM arrived before the copy was complete.
    case interrupted
    /// A file system call failed.
    case fileSystem(operation: String, path: String, errno: Int32)

    public var description: String {
        switch self {
        case .missing(let path):
            "there is no database at \(path): check the path"
        case .unreadable(let path, let reason):
            "\(path) cannot be read as a SQLite database (\(reason))"
        case .unwritable(let path, let reason):
            "cannot write \(path) (\(reason))"
        case .damaged(let path, let problems):
            "\(path) is damaged: \(problems.prefix(5).joined(separator: "; "))"
                + (problems.count > 5 ? "; and \(problems.count - 5) more problem(s)" : "")
        case .notAStore(let path):
            "\(path) is a SQLite file but not a Vicinity database: it holds none of the store's migrations"
        case .newerVersion(let path, let unknown):
            "\(path) was written by a newer version of vicinity (migrations this version does not know: "
                + "\(unknown.sorted().joined(separator: ", "))): use that version or a newer one"
        case .sameFile(let path):
            "the copy and the database it copies are the same file, \(path): name another file"
        case .targetExists(let path):
            "\(path) already exists: give --replace to replace it, or choose another name"
        case .inUse(let path, let process):
            "\(path) is open in another process\(process.map { " (pid \($0))" } ?? ""), a running server most likely: stop it first"
        case .leftovers(let paths):
            "\(paths.joined(separator: ", ")) lie(s) beside a database that does not exist; SQLite would apply them to "
                + "the new file: remove them, or give --replace to have them removed"
        case .interrupted:
            "interrupted (SIGINT or SIGTERM) before the file was complete"
        case .fileSystem(let operation, let path, let code):
            "cannot \(operation) \(path): \(String(cString: strerror(code)))"
        }
    }
}
