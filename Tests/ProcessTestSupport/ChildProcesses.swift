import Foundation
import Synchronization

/// How the tests start child processes (servers, peers, openssl, the command line under test): one at a time,
/// with pipes that no other child inherits.
///
/// Foundation on Linux learns that a child ended when a socket it shares with the child closes, and opens that
/// socket, like a `Pipe`, without close-on-exec. A child that another test starts at the same moment inherits
/// both and holds them open for as long as it runs: the first child's end then goes unnoticed (`waitUntilExit`
/// waits on a zombie until the other ends, which, when that is a server its test stops later, is never), and a
/// read to the end of its output waits for the other child too. A full run once hung exactly so.
public enum ChildProcesses {
    /// Held while a child is started and while a pipe is made: Foundation's socket is closed on this side by
    /// the time `run()` returns, and a pipe is marked close-on-exec before any child can be started.
    private static let starting = Mutex(())

    /// Starts `process`, no other child being started meanwhile.
    public static func launch(_ process: Process) throws {
        try starting.withLock { _ in try process.run() }
    }

    /// A pipe whose two ends no child keeps: given as a child's standard input, output or error, the child gets a
    /// copy of its own end, which exec leaves open.
    public static func pipe() -> Pipe {
        starting.withLock { _ in
            let pipe = Pipe()
            for handle in [pipe.fileHandleForReading, pipe.fileHandleForWriting] {
                _ = fcntl(handle.fileDescriptor, F_SETFD, FD_CLOEXEC)
            }
            return pipe
        }
    }
}
