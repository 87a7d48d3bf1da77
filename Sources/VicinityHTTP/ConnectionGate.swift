import Metrics
import NIOCore
import Synchronization

/// Counts the open connections, in all and per client, and says whether one more may be served.
///
/// Every connection holds a file descriptor until it closes, so without a cap a client that opens
/// connections and sends nothing (or a byte now and then) runs the process out of descriptors, and with
/// them out of database files and threads. The total cap keeps the server under its descriptor limit; the
/// per-client cap keeps one client (an IPv4 address, an IPv6 /64: `AddressGroups`) from taking the whole of
/// it. Connections from a trusted proxy carry many clients and count only towards the total.
final class ConnectionGate: Sendable {
    /// Why a connection was not served.
    enum Refusal: String, Sendable {
        case serverFull = "server_full"
        case clientFull = "client_full"
    }

    /// A refused connection is answered 503 and then read until its client closes or for a moment, so the
    /// client reads the answer instead of a reset. At most this many linger at once; past that, a refusal is
    /// answered and closed at once, so that refused connections cannot hold descriptors in turn.
    static let lingeringRefusals = 256

    let maximumConnections: Int
    let maximumPerClient: Int
    /// The 503 each refusal is answered with, written once: a flood refuses thousands a second.
    private let answers: [Refusal: ByteBuffer]
    private let state = Mutex(State())
    private let openGauge = Meter(label: "vicinity_connections_open")

    private struct State {
        var open = 0
        var perClient: [String: Int] = [:]
        var lingering = 0
    }

    init(maximumConnections: Int, maximumPerClient: Int) {
        precondition(maximumConnections > 0 && maximumPerClient > 0, "connection caps must be positive")
        self.maximumConnections = maximumConnections
        self.maximumPerClient = maximumPerClient
        answers = [.serverFull: Problem(.serverFull).rawResponse(), .clientFull: Problem(.clientFull).rawResponse()]
    }

    /// The whole HTTP answer to a refused connection.
    func answer(to refusal: Refusal) -> ByteBuffer {
        answers[refusal] ?? Problem(refusal).rawResponse()
    }

    /// Admits a connection of `client` (nil: counted in the total only), or says why not. Every admitted
    /// connection must be `released` once, when it closes (`ConnectionPlace`).
    func admit(_ client: String?) -> Refusal? {
        let refusal: Refusal? = state.withLock { state in
            guard state.open < maximumConnections else { return .serverFull }
            if let client {
                let held = state.perClient[client, default: 0]
                guard held < maximumPerClient else { return .clientFull }
                state.perClient[client] = held + 1
            }
            state.open += 1
            return nil
        }
        if let refusal {
            Counter(label: "vicinity_connections_refused_total", dimensions: [("reason", refusal.rawValue)]).increment()
        } else {
            openGauge.increment()
        }
        return refusal
    }

    func release(_ client: String?) {
        state.withLock { state in
            state.open -= 1
            guard let client, let held = state.perClient[client] else { return }
            state.perClient[client] = held > 1 ? held - 1 : nil
        }
        openGauge.decrement()
    }

    /// Whether a refused connection may linger to be read; each true must be followed by `stoppedLingering`.
    func startLingering() -> Bool {
        state.withLock { state in
            guard state.lingering < Self.lingeringRefusals else { return false }
            state.lingering += 1
            return true
        }
    }

    func stoppedLingering() {
        state.withLock { $0.lingering -= 1 }
    }
}

/// An admitted connection's place under the gate's caps, given back once: as the server closes the connection
/// (`PlaceReleaseHandler`), or else when it has closed, whichever comes first.
final class ConnectionPlace: Sendable {
    private let gate: ConnectionGate
    private let client: String?
    private let released = Atomic<Bool>(false)

    init(gate: ConnectionGate, client: String?) {
        self.gate = gate
        self.client = client
    }

    func release() {
        guard !released.exchange(true, ordering: .relaxed) else { return }
        gate.release(client)
    }
}
