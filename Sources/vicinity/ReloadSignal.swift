import Dispatch
import Foundation
import Logging

/// SIGHUP turned into a reload, as daemons take it: the signal's default action would end the server.
///
/// Each signal starts the reload in a task of its own; the reload does its blocking work off the concurrency
/// pool (`TLSCertificates.reload`). Signals that arrive together may be delivered as one, which reads the files
/// once, after the last change.
final class ReloadSignal: Sendable {
    /// Kept for the life of the object: a released source stops delivering its signal.
    private nonisolated(unsafe) let source: any DispatchSourceSignal

    init(logger: Logger, reload: @escaping @Sendable () async -> Void) {
        signal(SIGHUP, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .global())
        source.setEventHandler {
            logger.info("SIGHUP received")
            Task { await reload() }
        }
        source.resume()
    }

    deinit { source.cancel() }
}
