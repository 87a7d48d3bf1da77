import Foundation
import Logging
import Metrics
import NIOPosix
import NIOSSL
import Synchronization

/// The certificate and key a TLS listener serves, read again from their files on request (SIGHUP) without
/// stopping the server.
///
/// A TLS context cannot change once made, so each new connection takes the context that is current as it is
/// accepted (`GuardedTLSChannel`); a reload makes a new context and swaps it in. Connections already open keep
/// the one they were accepted with, and with it their keys: nothing is dropped. Files that cannot be served
/// (missing, unreadable, a key for another certificate) leave the current ones in place.
public final class TLSCertificates: Sendable {
    public let files: TLSFiles
    private let state: Mutex<State>

    private struct State {
        var current: TLSIdentity
        /// Reloads asked for and applied, so that of two reloads that overlap the later one's files win.
        var requested = 0
        var applied = 0
    }

    /// Reads both files at once, for start: a bad file stops the server before it listens.
    public init(files: TLSFiles) throws(TLSFileProblem) {
        self.files = files
        state = Mutex(State(current: try TLSIdentity.load(files)))
    }

    /// What new connections are served with.
    public var current: TLSIdentity { state.withLock { $0.current } }

    /// Reads the files again and, when they can be served, serves every new connection with them; otherwise
    /// logs why and keeps what is served. Returns what is served afterwards, or the problem.
    ///
    /// The files are read and the context made on NIO's blocking-work pool, never on an event loop or a thread of
    /// Swift's concurrency pool, which a slow disk would otherwise hold up.
    @discardableResult
    public func reload(logger: Logger) async -> Result<TLSIdentity, TLSFileProblem> {
        let ticket = state.withLock { state in
            state.requested += 1
            return state.requested
        }
        let files = files
        let loaded: Result<TLSIdentity, TLSFileProblem>
        do {
            loaded = try await NIOThreadPool.singleton.runIfActive {
                Result { () throws(TLSFileProblem) in try TLSIdentity.load(files) }
            }
        } catch {
            loaded = .failure(TLSFileProblem(file: .certificate, path: files.certificate, description: "could not be read now: \(error)"))
        }
        switch loaded {
        case .success(let identity):
            let applied = state.withLock { state in
                guard ticket > state.applied else { return false }
                state.current = identity
                state.applied = ticket
                return true
            }
            guard applied else { return .success(current) }
            Counter(label: "vicinity_tls_reloads_total", dimensions: [("outcome", "reloaded")]).increment()
            logger.notice(
                "TLS certificate reloaded: new connections are served with it",
                metadata: [
                    "certificate": "\(files.certificate)", "sha256": "\(identity.fingerprint)",
                    "not_valid_after": "\(identity.notValidAfter.formatted(.iso8601))",
                ])
            return .success(identity)
        case .failure(let problem):
            Counter(label: "vicinity_tls_reloads_total", dimensions: [("outcome", "refused")]).increment()
            logger.error(
                "TLS certificate not reloaded: the one loaded before is still served",
                metadata: ["problem": "\(problem.file == .certificate ? "the certificate" : "the key") \(problem.description)"])
            return .failure(problem)
        }
    }
}
