import Metrics
import NIOCore
import Synchronization

/// Counts the open connections, in all and per client, says whether one more may be served, and when the
/// server is full, which connection makes room for it.
///
/// Every connection holds a file descriptor until it closes, so without a cap a client that opens
/// connections and sends nothing (or a byte now and then) runs the process out of descriptors, and with
/// them out of database files and threads. The total cap keeps the server under its descriptor limit; the
/// per-client cap keeps one client (an IPv4 address, an IPv6 /64: `AddressGroups`) from taking the whole of
/// it. Connections from a trusted proxy carry many clients and count only towards the total.
///
/// A full server does not turn the newcomer away while it holds connections that are doing nothing for
/// anyone: first come, first served would let whoever fills the cap first (an attacker with many addresses:
/// an IPv6 /48 holds 65,536 /64s) keep everyone else out for as long as it trickles bytes. Instead the
/// newcomer takes the place of, in this order:
/// 1. the connection that has waited longest for a request to answer: one whose request has not arrived in
///    full (a trickle), one holding an idle keep-alive, or one that has sent nothing yet, each counted from
///    when it was last answered or became active. Closing an idle connection is what HTTP lets a server do at any
///    time (RFC 9112 §9.6), and a trickle is cut by the request deadline anyway.
/// 2. else the event stream open longest: its client resumes it with `Last-Event-ID` and loses no event.
/// A connection whose request is being answered (a handler running, an answer being written) is never closed
/// to make room: if every place is such a one, the newcomer is refused 503 as before.
///
/// The newcomer takes over the place itself, in the same step under the lock, so the count never passes the
/// cap however many connections arrive at once; the connection closed for it gives back nothing when it goes.
final class ConnectionGate: Sendable {
    /// Why a connection was not served.
    enum Refusal: String, Sendable {
        case serverFull = "server_full"
        case clientFull = "client_full"
    }

    /// What a connection is doing, for the choice of which one makes room.
    enum Standing: String, Sendable {
        /// Admitted and still being set up: never closed to make room, since NIO hands a connection to the HTTP
        /// server only once it is active, and one closed before that is dropped with its writer unfinished,
        /// which NIO treats as a fatal misuse.
        case opening
        /// Nothing to answer: it has sent nothing yet, sits idle between requests or is sending one.
        case waiting
        /// A request read in full is being answered.
        case answering
        /// Its answer is an event stream, which never ends by itself.
        case streaming = "event_stream"
    }

    /// What `admit` decided.
    enum Admission: Sendable {
        case admitted(ConnectionPlace)
        case refused(Refusal)
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
    /// Told, under the lock, how many connections have arrived in all and how many are held after each change:
    /// for tests that must know the server has taken in every connection before they stop it.
    private let observe: (@Sendable (_ arrived: Int, _ open: Int) -> Void)?

    private struct Occupant {
        var client: String?
        var standing: Standing
        /// Closes the connection; called once, outside the lock, when it is closed to make room.
        var close: @Sendable () -> Void
    }

    private struct State {
        var occupants: [Int: Occupant] = [:]
        var perClient: [String: Int] = [:]
        var lingering = 0
        var nextID = 0
        /// Connections admitted or refused, since the gate was made.
        var arrived = 0
        /// Waiting connections, the longest waiting first.
        var waiting = AgeQueue()
        /// Event streams, the longest open first.
        var streams = AgeQueue()
        /// The most connections ever held at once.
        var peak = 0

        mutating func remove(_ id: Int) -> Occupant? {
            guard let occupant = occupants.removeValue(forKey: id) else { return nil }
            waiting.remove(id)
            streams.remove(id)
            if let client = occupant.client, let held = perClient[client] { perClient[client] = held > 1 ? held - 1 : nil }
            return occupant
        }
    }

    init(
        maximumConnections: Int, maximumPerClient: Int,
        observe: (@Sendable (_ arrived: Int, _ open: Int) -> Void)? = nil
    ) {
        precondition(maximumConnections > 0 && maximumPerClient > 0, "connection caps must be positive")
        self.maximumConnections = maximumConnections
        self.maximumPerClient = maximumPerClient
        self.observe = observe
        answers = [.serverFull: Problem(.serverFull).rawResponse(), .clientFull: Problem(.clientFull).rawResponse()]
    }

    /// The whole HTTP answer to a refused connection.
    func answer(to refusal: Refusal) -> ByteBuffer {
        answers[refusal] ?? Problem(refusal).rawResponse()
    }

    /// Connections held now.
    var open: Int { state.withLock { $0.occupants.count } }

    /// The most connections held at once since the gate was made.
    var peak: Int { state.withLock { $0.peak } }

    /// Admits a connection of `client` (nil: counted in the total only), making room when the server is full,
    /// or says why not. `close` closes the connection, should it have to make room for another later. Every
    /// admitted connection's place must be `released` once, when it closes (`ConnectionPlace`).
    func admit(_ client: String?, close: @escaping @Sendable () -> Void) -> Admission {
        enum Decision {
            case admitted(Int, evicted: Occupant?)
            case refused(Refusal)
        }
        let decision: Decision = state.withLock { state in
            state.arrived += 1
            defer { observe?(state.arrived, state.occupants.count) }
            if let client, state.perClient[client, default: 0] >= maximumPerClient { return .refused(.clientFull) }
            var evicted: Occupant?
            if state.occupants.count >= maximumConnections {
                guard let victim = state.waiting.oldest ?? state.streams.oldest else { return .refused(.serverFull) }
                evicted = state.remove(victim)
            }
            let id = state.nextID
            state.nextID += 1
            state.occupants[id] = Occupant(client: client, standing: .opening, close: close)
            if let client { state.perClient[client, default: 0] += 1 }
            state.peak = max(state.peak, state.occupants.count)
            return .admitted(id, evicted: evicted)
        }
        switch decision {
        case .refused(let refusal):
            Counter(label: "vicinity_connections_refused_total", dimensions: [("reason", refusal.rawValue)]).increment()
            return .refused(refusal)
        case .admitted(let id, let evicted?):
            // One place changed hands: the open count stays as it was.
            Counter(label: "vicinity_connections_evicted_total", dimensions: [("standing", evicted.standing.rawValue)]).increment()
            evicted.close()
            return .admitted(ConnectionPlace(gate: self, id: id))
        case .admitted(let id, nil):
            openGauge.increment()
            return .admitted(ConnectionPlace(gate: self, id: id))
        }
    }

    /// Gives the place of connection `id` back; nothing when it was given back already or taken over.
    fileprivate func release(_ id: Int) {
        let removed = state.withLock { state in
            defer { observe?(state.arrived, state.occupants.count) }
            return state.remove(id)
        }
        guard removed != nil else { return }
        openGauge.decrement()
    }

    /// Records what connection `id` is doing; a waiting connection or a stream goes to the back of its queue.
    fileprivate func set(_ standing: Standing, of id: Int) {
        state.withLock { state in
            guard let before = state.occupants[id]?.standing, before != standing else { return }
            state.occupants[id]?.standing = standing
            state.waiting.remove(id)
            state.streams.remove(id)
            switch standing {
            case .waiting: state.waiting.append(id)
            case .streaming: state.streams.append(id)
            case .opening, .answering: break
            }
        }
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
/// (`PlaceReleaseHandler`), or else when it has closed, whichever comes first; or never, when the gate has
/// given it to a newcomer.
final class ConnectionPlace: Sendable {
    private let gate: ConnectionGate
    private let id: Int

    fileprivate init(gate: ConnectionGate, id: Int) {
        self.gate = gate
        self.id = id
    }

    func release() { gate.release(id) }

    /// Tells the gate what the connection is doing (`RequestProgressHandler`).
    func set(_ standing: ConnectionGate.Standing) { gate.set(standing, of: id) }
}
