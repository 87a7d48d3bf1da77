import ArgumentParser
import Dispatch
import Foundation
import Synchronization

/// SIGINT and SIGTERM turned into a request to stop, which a long copy asks for between its steps, so that the
/// command removes the file it was making before it exits: the signals' default action would end the process
/// with the half-made file left on the disk.
final class Interruption: Sendable {
    private let received = Mutex<Int32?>(nil)
    /// Kept for the life of the process: a released source stops delivering its signal.
    private nonisolated(unsafe) let sources: [any DispatchSourceSignal]

    init() {
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            sources.append(DispatchSource.makeSignalSource(signal: number, queue: .global()))
        }
        self.sources = sources
        for (source, number) in zip(sources, [SIGINT, SIGTERM]) {
            source.setEventHandler { [self] in received.withLock { $0 = $0 ?? number } }
            source.resume()
        }
    }

    /// Whether a signal has arrived.
    var requested: Bool { received.withLock { $0 != nil } }

    /// 128 plus the signal's number, as a shell reports a process the signal ended: 130 for SIGINT.
    var exitCode: ExitCode { ExitCode(128 + (received.withLock { $0 } ?? SIGINT)) }
}
