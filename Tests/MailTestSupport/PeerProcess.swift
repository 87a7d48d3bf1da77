import Foundation
import ProcessTestSupport

/// A peer of the tests run as a child process (a Python script, through /usr/bin/env), its standard error kept
/// in a log file for when it does not come up. The mail relay and the push service both run this way.
public final class PeerProcess: @unchecked Sendable {
    /// Where its standard error goes: created empty as it starts.
    public let log: URL
    private let process: Process

    /// Starts `arguments`, its standard output to `output` (nothing by default) and its standard error to `log`.
    public init(_ arguments: [String], log: URL, output: Any = FileHandle.nullDevice) throws {
        self.log = log
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: log)
        try ChildProcesses.launch(process)
    }

    public var isRunning: Bool { process.isRunning }

    /// SIGKILL: a child of the test runner may inherit a mask that blocks SIGTERM, and would outlive the test.
    /// Then at most 10 s for Foundation to see it gone, rather than `waitUntilExit()`, which spins a run loop on
    /// the calling thread: called from an async test it holds one of the cooperative pool's threads (two on two
    /// cores) for as long as it waits, and once here it never returned while a store's migration starved for a
    /// thread. A killed child left unreaped past the bound is harmless to the tests.
    public func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { usleep(10_000) }
    }

    /// For a peer that did not come up: stops it, removes its `folder` (the log's too, when it is there) and returns
    /// what it logged, for the test's failure.
    public func abandon(removing folder: URL) -> String {
        stop()
        let logged = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(at: folder)
        return logged
    }
}
