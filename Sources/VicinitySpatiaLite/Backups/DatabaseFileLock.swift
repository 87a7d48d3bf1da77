import Foundation

/// SQLite's exclusive lock on a database file, taken without opening the file with SQLite: it fails while
/// another process has the database open, and while held it keeps other connections from reading it.
///
/// Why the POSIX locks themselves rather than a SQLite connection asking for `BEGIN EXCLUSIVE`: opening the file
/// with SQLite has effects (a leftover WAL is recovered into it; the last connection to close checkpoints and
/// deletes `-wal` by name, which after a swap names the new file's), and a damaged file, the kind a restore is
/// meant to replace, cannot be opened at all. The locks answer without opening: in WAL mode, which every store
/// file is in, each connection holds a read lock on the database file's shared range from its first read until
/// it closes, and one on the `-shm` file's dead-man switch while it has the WAL index mapped, idle or not (a
/// rollback-mode connection holds them only during a transaction). So a write lock on both, which is SQLite's
/// EXCLUSIVE lock, is refused while a server has the file open, and once held it makes another connection's
/// read wait (`SQLITE_BUSY`, retried for the busy timeout) until it is released.
///
/// The locks are the process's (`fcntl` F_SETLK): they go when the descriptors close, when this value is
/// released or the process ends, and a process killed while holding them leaves none behind.
public final class DatabaseFileLock {
    /// SQLite's lock bytes of a database file (os.h): PENDING_BYTE at 0x40000000, RESERVED_BYTE after it, then
    /// the 510 bytes from SHARED_FIRST that readers lock.
    static let databaseLockBytes: (start: Int, length: Int) = (0x4000_0000, 1 + 1 + 510)
    /// The dead-man switch of a WAL index (os_unix.c): UNIX_SHM_DMS = UNIX_SHM_BASE + SQLITE_SHM_NLOCK, with
    /// UNIX_SHM_BASE = (22 + SQLITE_SHM_NLOCK) * 4 and SQLITE_SHM_NLOCK = 8, so byte 128 of `-shm`.
    static let walIndexLockBytes: (start: Int, length: Int) = (128, 1)

    private var descriptors: [Int32] = []

    /// Locks the database at `path` and its WAL index, each if it exists; refuses with `BackupProblem.inUse`
    /// when another process holds either.
    public init(path: String) throws(BackupProblem) {
        do {
            for (file, bytes) in [(path, Self.databaseLockBytes), (path + "-shm", Self.walIndexLockBytes)]
            where FileManager.default.fileExists(atPath: file) {
                descriptors.append(try Self.lock(file, bytes, database: path))
            }
        } catch {
            release()
            throw error
        }
    }

    /// Opens `file` and takes a write lock on `bytes` of it; returns the descriptor, which holds the lock.
    private static func lock(_ file: String, _ bytes: (start: Int, length: Int), database: String) throws(BackupProblem) -> Int32 {
        let descriptor = open(file, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { throw .fileSystem(operation: "open", path: file, errno: errno) }
        var lock = request(F_WRLCK, bytes)
        guard fcntl(descriptor, F_SETLK, &lock) != 0 else { return descriptor }
        let code = errno
        defer { close(descriptor) }
        guard code == EAGAIN || code == EACCES else { throw .fileSystem(operation: "lock", path: file, errno: code) }
        var holder = request(F_WRLCK, bytes)
        let process = fcntl(descriptor, F_GETLK, &holder) == 0 && holder.l_type != Int16(F_UNLCK) ? holder.l_pid : nil
        throw .inUse(path: database, process: process)
    }

    /// Releases the locks (closing a descriptor releases the process's locks on its file).
    public func release() {
        for descriptor in descriptors { close(descriptor) }
        descriptors = []
    }

    deinit { release() }

    private static func request(_ type: Int32, _ bytes: (start: Int, length: Int)) -> flock {
        var lock = flock()
        lock.l_type = Int16(type)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = off_t(bytes.start)
        lock.l_len = off_t(bytes.length)
        return lock
    }
}
