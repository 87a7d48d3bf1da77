import Foundation

/// Puts a finished database file under its final name in one step that a crash cannot leave half done: the file
/// is made beside the target (one file system, so a rename is atomic), synced, renamed over the target, and the
/// folder synced so that the new name survives a power cut too.
public enum FilePlacement {
    /// SQLite's companions of a database file: its WAL, the WAL's index and a rollback journal. One left beside
    /// a file that is not its own is read into that file as if it belonged to it, which corrupts it; so they go
    /// before the new file takes the name, never after.
    public static let companionSuffixes = ["-wal", "-shm", "-journal"]

    /// A new name for the file being made: beside `target`, and plainly named after it so that one left behind
    /// by a killed process is recognised for what it is.
    public static func partialName(for target: String) -> String {
        target + ".partial-" + String(UInt32.random(in: .min ... .max), radix: 16)
    }

    /// Refuses what `place` would refuse, so that a long copy is not made for nothing. `evenIfOpen` skips the
    /// check that no other process has the target open.
    public static func checkTarget(_ target: String, replacing: Bool, evenIfOpen: Bool = false) throws(BackupProblem) {
        let lock = try claim(target, replacing: replacing, evenIfOpen: evenIfOpen)
        lock?.release()
    }

    /// Moves the finished `file` to `target`. Without `replacing`, an existing target is refused and the file
    /// takes the name only if it is still free (a hard link, which fails rather than replaces). With it, the
    /// target's companions are removed while the target is locked, then the file is renamed over it.
    public static func place(_ file: String, at target: String, replacing: Bool, evenIfOpen: Bool = false) throws(BackupProblem) {
        try sync(file)
        let lock = try claim(target, replacing: replacing, evenIfOpen: evenIfOpen)
        defer { lock?.release() }
        for companion in companionSuffixes.map({ target + $0 }) where FileManager.default.fileExists(atPath: companion) {
            guard unlink(companion) == 0 else { throw .fileSystem(operation: "remove", path: companion, errno: errno) }
        }
        if replacing {
            guard rename(file, target) == 0 else { throw .fileSystem(operation: "rename \(file) to", path: target, errno: errno) }
        } else {
            guard link(file, target) == 0 else {
                let code = errno
                if code == EEXIST { throw .targetExists(path: target) }
                throw .fileSystem(operation: "link \(file) to", path: target, errno: code)
            }
            unlink(file)
        }
        try sync(folderOf: target)
    }

    /// Removes `file` and whatever companions SQLite left beside it; for a file that will not be placed.
    public static func discard(_ file: String) {
        for path in [file] + companionSuffixes.map({ file + $0 }) { unlink(path) }
    }

    /// Checks that `target` may be written and, unless `evenIfOpen`, locks it if it exists.
    private static func claim(_ target: String, replacing: Bool, evenIfOpen: Bool) throws(BackupProblem) -> DatabaseFileLock? {
        let folder = (target as NSString).deletingLastPathComponent
        var isFolder: ObjCBool = false
        if !folder.isEmpty, !(FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder) && isFolder.boolValue) {
            throw .unwritable(path: target, reason: "the folder \(folder) does not exist")
        }
        let exists = FileManager.default.fileExists(atPath: target)
        if exists, !replacing { throw .targetExists(path: target) }
        let lock = evenIfOpen ? nil : try DatabaseFileLock(path: target)
        let leftovers = companionSuffixes.map { target + $0 }.filter { FileManager.default.fileExists(atPath: $0) }
        if !exists, !replacing, !leftovers.isEmpty {
            lock?.release()
            throw .leftovers(paths: leftovers)
        }
        return lock
    }

    /// Waits until the file's contents are on the disk.
    static func sync(_ file: String) throws(BackupProblem) {
        let descriptor = open(file, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .fileSystem(operation: "open", path: file, errno: errno) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw .fileSystem(operation: "sync", path: file, errno: errno) }
    }

    /// Waits until the folder's entries (a new or renamed name) are on the disk.
    static func sync(folderOf path: String) throws(BackupProblem) {
        let folder = (path as NSString).deletingLastPathComponent
        try sync(folder.isEmpty ? "." : folder)
    }
}
