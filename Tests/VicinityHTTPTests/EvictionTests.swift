import Foundation
import Hummingbird
import Logging
import Prometheus
import Synchronization
import Testing
import VicinityBcrypt
import VicinityCore
@testable import VicinityHTTP

/// A full server makes room for a new connection by closing the one that has waited longest for a request,
/// then the oldest event stream, never one being answered: the order itself, and over real sockets, with each
/// client its own loopback address (127.0.0.0/8 is all this machine).
///
/// Every bound on waiting here only keeps a broken server from holding the suite; no assertion measures how fast
/// anything was.
@Suite("Making room at the connection cap")
struct EvictionTests {
    // MARK: The order, on the gate alone

    /// Connections named as they are admitted, and the names of those closed to make room, in order.
    final class Ledger: Sendable {
        private let closed = Mutex<[String]>([])
        var names: [String] { closed.withLock { $0 } }

        /// Admits a connection and makes it active, as the HTTP pipeline does once NIO has set it up.
        func admit(_ name: String, at gate: ConnectionGate, from client: String? = nil) -> ConnectionGate.Admission {
            let admission = gate.admit(client) { self.closed.withLock { $0.append(name) } }
            if case .admitted(let place) = admission { place.set(.waiting) }
            return admission
        }
    }

    static func place(_ admission: ConnectionGate.Admission) throws -> ConnectionPlace {
        guard case .admitted(let place) = admission else { throw Refused() }
        return place
    }

    struct Refused: Error {}

    @Test("a full server closes the connection waiting longest first, then the event stream open longest, and never one being answered")
    func order() throws {
        let gate = ConnectionGate(maximumConnections: 3, maximumPerClient: 3)
        let ledger = Ledger()
        let answering = try Self.place(ledger.admit("answering", at: gate))
        answering.set(.answering)
        let idle = try Self.place(ledger.admit("idle", at: gate))
        let stream = try Self.place(ledger.admit("stream", at: gate))
        stream.set(.answering)
        stream.set(.streaming)

        let second = try Self.place(ledger.admit("second", at: gate))
        #expect(ledger.names == ["idle"])
        second.set(.answering)
        let third = try Self.place(ledger.admit("third", at: gate))
        #expect(ledger.names == ["idle", "stream"], "no connection waits: the stream goes")
        third.set(.answering)
        guard case .refused(.serverFull) = ledger.admit("fourth", at: gate) else {
            Issue.record("a server whose every connection is being answered must refuse")
            return
        }
        #expect(ledger.names == ["idle", "stream"], "nothing being answered is closed")
        #expect(gate.open == 3)

        // Places given back after being taken over change nothing.
        idle.release()
        stream.release()
        #expect(gate.open == 3)
        for place in [answering, second, third] { place.release() }
        #expect(gate.open == 0)
    }

    @Test("waiting is counted from a connection's last answer, so an idle keep-alive answered a moment ago outlives one answered earlier")
    func waitingSinceLastAnswer() throws {
        let gate = ConnectionGate(maximumConnections: 2, maximumPerClient: 2)
        let ledger = Ledger()
        let first = try Self.place(ledger.admit("first", at: gate))
        _ = try Self.place(ledger.admit("second", at: gate))
        first.set(.answering)
        first.set(.waiting)
        _ = try Self.place(ledger.admit("third", at: gate))
        #expect(ledger.names == ["second"])
    }

    @Test("a connection still being set up is never closed to make room")
    func openingIsKept() throws {
        let gate = ConnectionGate(maximumConnections: 1, maximumPerClient: 1)
        guard case .admitted = gate.admit(nil, close: {}) else {
            Issue.record("an empty server admits")
            return
        }
        guard case .refused(.serverFull) = gate.admit(nil, close: {}) else {
            Issue.record("the one place is still opening")
            return
        }
    }

    @Test("a client at its own cap is refused, not given another's place")
    func clientCapComesFirst() throws {
        let gate = ConnectionGate(maximumConnections: 2, maximumPerClient: 1)
        let ledger = Ledger()
        _ = try Self.place(ledger.admit("a", at: gate, from: "192.0.2.1"))
        _ = try Self.place(ledger.admit("b", at: gate, from: "192.0.2.2"))
        guard case .refused(.clientFull) = ledger.admit("c", at: gate, from: "192.0.2.1") else {
            Issue.record("the client holds its one place")
            return
        }
        #expect(ledger.names.isEmpty)
    }

    @Test("admitting from eight tasks at once, the gate never holds more connections than its cap and gives every place back once")
    func capHoldsUnderConcurrency() async {
        let cap = 16
        let gate = ConnectionGate(maximumConnections: cap, maximumPerClient: 1_000)
        let ledger = Ledger()
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var held: [ConnectionPlace] = []
                    for round in 0..<2_000 {
                        if case .admitted(let place) = ledger.admit("\(worker).\(round)", at: gate, from: "10.0.0.\(worker)") {
                            // Some are being answered, some stream, the rest wait: every kind of place is in play.
                            switch round % 4 {
                            case 0: place.set(.answering)
                            case 1: place.set(.streaming)
                            default: break
                            }
                            held.append(place)
                        }
                        // Twelve each: two workers running at once are past the cap.
                        if held.count > 12 { held.removeFirst().release() }
                        // Turns taken, so that the workers interleave, and the threads every test shares are not held.
                        await Task.yield()
                    }
                    for place in held { place.release() }
                }
            }
        }
        #expect(gate.peak <= cap)
        #expect(gate.peak == cap, "the flood filled the server")
        #expect(!ledger.names.isEmpty, "room was made")
        #expect(gate.open == 0, "every place given back once, those taken over included")
    }

    // MARK: Over real sockets

    /// Runs the application behind `gate` (over the CSULB rows, unless `services` are given) on a free port for
    /// `body`, and stops it after.
    static func withServer(
        gate: ConnectionGate, services given: Services<InMemoryStore>? = nil, logs: LogRecorder = LogRecorder(),
        _ body: @Sendable (Int) async throws -> Void
    ) async throws {
        var chosen = given
        if chosen == nil { chosen = services(try await store(csulbRows)) }
        let chosenServices = try #require(chosen)
        try await withListening({ onListening in
            buildApplication(
                services: chosenServices, options: .standard, host: "127.0.0.1", port: 0,
                metrics: sharedRegistry, logger: logs.logger, background: [], gate: gate, onListening: onListening)
        }, body)
    }

    /// The value of one series of the shared registry, 0 when it has none yet. Other tests add to the same
    /// series, so tests compare it before and after and ask only that it grew by at least their own part.
    static func metric(_ series: String) -> Double {
        var bytes: [UInt8] = []
        sharedRegistry.emit(into: &bytes)
        let line = String(decoding: bytes, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix(series + " ") }
        return line.flatMap { $0.split(separator: " ").last.flatMap { Double($0) } } ?? 0
    }

    static let evictedWaiting = #"vicinity_connections_evicted_total{standing="waiting"}"#
    static let evictedStreams = #"vicinity_connections_evicted_total{standing="event_stream"}"#

    /// A request held open, kept on its connection: the next request and the close after it tell whether the
    /// server still serves it.
    static let keptHealth = "GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n"

    @Test("a full server makes room for a new connection by closing the one idle longest, and keeps serving the others")
    func fullServerMakesRoom() async throws {
        let gate = ConnectionGate(maximumConnections: 4, maximumPerClient: 4)
        let before = Self.metric(Self.evictedWaiting)
        try await Self.withServer(gate: gate) { port in
            // Four clients hold the four places, each answered once and keeping its connection, one after the
            // other: the first has been idle longest.
            var holders: [RawConnection] = []
            for address in ["127.0.0.11", "127.0.0.12", "127.0.0.13", "127.0.0.14"] {
                let holder = try await RawConnection.open(port: port, from: address)
                try await holder.send(Self.keptHealth)
                #expect(try await holder.received(containing: "\r\n\r\n", within: .seconds(60)).hasPrefix("HTTP/1.1 200 OK"))
                holders.append(holder)
            }

            let late = try await RawConnection.open(port: port, from: "127.0.0.15")
            try await late.send(ConnectionLimitTests.health)
            #expect(try await late.readUntilClosed(within: .seconds(60)).hasPrefix("HTTP/1.1 200 OK"))

            // The one idle longest was closed with nothing more said; the others are still served.
            let first = try await holders[0].readUntilClosed(within: .seconds(60))
            #expect(first.components(separatedBy: "HTTP/1.1 ").count == 2, "one answer, then the close: \(first)")
            for kept in holders.dropFirst() {
                try await kept.send(ConnectionLimitTests.health)
                let both = try await kept.readUntilClosed(within: .seconds(60))
                #expect(both.components(separatedBy: "HTTP/1.1 200 OK").count == 3, "two answers on a kept connection")
            }
        }
        #expect(gate.peak == 4)
        #expect(Self.metric(Self.evictedWaiting) >= before + 1)
    }

    /// Hashes passwords only once the test lets it: a sign-up stays in its handler, being answered, until then.
    final class HeldHasher: PasswordHasher {
        let entered = Watched(0)
        let released = Watched(false)

        func hash(_ password: Password) async throws -> PasswordHash {
            entered.update { $0 += 1 }
            _ = try await released.wait { $0 }
            return try await testHasher.hash(password)
        }

        func verify(_ password: String, against hash: PasswordHash) async throws -> Bool {
            try await testHasher.verify(password, against: hash)
        }
    }

    @Test("a full server whose every connection is being answered refuses a new one 503 at once, and the answer goes on")
    func fullOfAnswersRefuses() async throws {
        let gate = ConnectionGate(maximumConnections: 1, maximumPerClient: 1)
        let hasher = HeldHasher()
        let held = Services(stores: try await store(csulbRows), clock: ManualClock(), hasher: hasher, settings: .standard)
        try await Self.withServer(gate: gate, services: held) { port in
            let signUp = try await RawConnection.open(port: port, from: "127.0.0.16")
            try await signUp.send(ConnectionLimitTests.signUp("patient"))
            _ = try await waiting(for: "the sign-up to reach the hasher") { try await hasher.entered.wait { $0 == 1 } }

            let late = try await RawConnection.open(port: port, from: "127.0.0.18")
            let answer = try await late.readUntilClosed(within: .seconds(60))
            #expect(answer.hasPrefix("HTTP/1.1 503 Service Unavailable"))
            #expect(answer.contains("The server holds as many connections as it serves"))

            hasher.released.update { $0 = true }
            #expect(try await signUp.readUntilClosed(within: .seconds(60)).hasPrefix("HTTP/1.1 201 Created"))
        }
    }

    @Test("a full server closes an idle connection before any event stream, and the stream open longest when only streams are left")
    func streamsGoLast() async throws {
        let gate = ConnectionGate(maximumConnections: 2, maximumPerClient: 2)
        let before = Self.metric(Self.evictedStreams)
        try await Self.withServer(gate: gate) { port in
            let setUp = try await RawConnection.open(port: port, from: "127.0.0.19")
            try await setUp.send(ConnectionLimitTests.signUp("streamer"))
            #expect(try await setUp.readUntilClosed(within: .seconds(60)).hasPrefix("HTTP/1.1 201"))
            let body = #"{"username":"streamer","password":"correct horse battery"}"#
            let signIn = try await RawConnection.open(port: port, from: "127.0.0.19")
            try await signIn.send("POST /v1/sessions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body)
            let answer = try await signIn.readUntilClosed(within: .seconds(60))
            let token = try #require(answer.firstMatch(of: /"token":"([A-Za-z0-9_-]{43})"/)?.1)
            let openStream = "GET /v1/events HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(token)\r\n\r\n"

            let older = try await RawConnection.open(port: port, from: "127.0.0.20")
            try await older.send(openStream)
            #expect(try await older.received(containing: ": connected", within: .seconds(60)).contains(": connected"))
            let idle = try await RawConnection.open(port: port, from: "127.0.0.21")
            try await idle.send(Self.keptHealth)
            #expect(try await idle.received(containing: "\r\n\r\n", within: .seconds(60)).hasPrefix("HTTP/1.1 200 OK"))

            // The idle one goes, not the stream.
            let newer = try await RawConnection.open(port: port, from: "127.0.0.22")
            try await newer.send(openStream)
            #expect(try await newer.received(containing: ": connected", within: .seconds(60)).contains(": connected"))
            _ = try await idle.readUntilClosed(within: .seconds(60))

            // Only streams are left: the older one goes.
            let late = try await RawConnection.open(port: port, from: "127.0.0.23")
            try await late.send(ConnectionLimitTests.health)
            #expect(try await late.readUntilClosed(within: .seconds(60)).hasPrefix("HTTP/1.1 200 OK"))
            let olderStream = try await older.readUntilClosed(within: .seconds(60))
            #expect(olderStream.contains(": connected"))
            await newer.close()
        }
        #expect(Self.metric(Self.evictedStreams) >= before + 1)
    }

    /// Connections an attacker holds, each opened again as soon as the server closes it.
    final class Flood: Sendable {
        private struct State {
            var open: [RawConnection] = []
            var opened = 0
            var stopped = false
        }

        private let state = Mutex(State())

        /// How long a cut connection's client waits before it opens another. Every connection opened takes an
        /// attacker's place, whose client opens another in turn: the flood churns at its pause's pace, which is
        /// kept to a few dozen connections a second so that the threads every test shares stay free.
        static let pause = Duration.milliseconds(500)

        /// How many connections the attacker opened in all.
        var opened: Int { state.withLock { $0.opened } }

        /// Keeps `connection`'s place taken from `address`: when the server closes it, opens another after
        /// `Flood.pause` and starts the same request again, until `stop`.
        func hold(_ connection: RawConnection, from address: String, port: Int) async {
            var connection = connection
            while true {
                _ = try? await connection.readUntilClosed(within: .seconds(600))
                // The attacker's own pace, not a wait for anything.
                try? await Task.sleep(for: Self.pause)
                guard !stopped, let next = try? await RawConnection.open(port: port, from: address) else { return }
                guard keep(next) else {
                    await next.close()
                    return
                }
                try? await next.send(ConnectionLimitTests.unfinishedSignUp)
                connection = next
            }
        }

        var stopped: Bool { state.withLock { $0.stopped } }

        /// Counts a connection opened and records it to close at the end; false once the flood has stopped.
        func keep(_ connection: RawConnection) -> Bool {
            state.withLock { state in
                state.opened += 1
                guard !state.stopped else { return false }
                state.open.append(connection)
                return true
            }
        }

        func stop() async {
            let open = state.withLock { state in
                state.stopped = true
                defer { state.open = [] }
                return state.open
            }
            for connection in open { await connection.close() }
        }
    }

    @Test("an attacker holding the whole cap with partial requests from 39 addresses, opening another for each one cut, cannot keep a new client out: each new connection takes the place of the one waiting longest")
    func floodFromManyAddresses() async throws {
        let cap = 64
        let counts = Watched((arrived: 0, open: 0))
        let gate = ConnectionGate(maximumConnections: cap, maximumPerClient: 8) { arrived, open in
            counts.update { $0 = (arrived, open) }
        }
        let before = Self.metric(Self.evictedWaiting)
        let attackers = (2...40).map { "127.0.0.\($0)" }
        try await Self.withServer(gate: gate) { port in
            // Two partial requests from each of the 39 addresses, 78 for 64 places, all sent before the new
            // client comes: the server accepts in order, so by its turn the attacker holds every place.
            let flood = Flood()
            var first: [(String, RawConnection)] = []
            for _ in 0..<2 {
                for address in attackers {
                    let connection = try await RawConnection.open(port: port, from: address)
                    _ = flood.keep(connection)
                    try await connection.send(ConnectionLimitTests.unfinishedSignUp)
                    first.append((address, connection))
                }
            }
            let holding = Task {
                await withTaskGroup(of: Void.self) { group in
                    for (address, connection) in first {
                        group.addTask { await flood.hold(connection, from: address, port: port) }
                    }
                }
            }
            do {
                for round in 0..<5 {
                    let health = try await RawConnection.open(port: port, from: "127.0.0.41")
                    try await health.send(ConnectionLimitTests.health)
                    #expect(try await health.readUntilClosed(within: .seconds(60)).hasPrefix("HTTP/1.1 200 OK"))
                    await health.close()
                    let signUp = try await RawConnection.open(port: port, from: "127.0.0.41")
                    try await signUp.send(ConnectionLimitTests.signUp("newcomer\(round)"))
                    let answer = try await signUp.readUntilClosed(within: .seconds(60))
                    #expect(answer.hasPrefix("HTTP/1.1 201 Created"), "\(answer)")
                    await signUp.close()
                }
            } catch {
                await flood.stop()
                await holding.value
                throw error
            }
            await flood.stop()
            await holding.value
            // Every connection opened has reached the server and been closed there too, before it stops: one
            // accepted while the server shuts down would be dropped half set up.
            let opened = flood.opened + 10
            _ = try await waiting(for: "the server to take in and close every connection") {
                try await counts.wait { $0.arrived == opened && $0.open == 0 }
            }
        }
        #expect(gate.peak <= cap, "never more than the cap at once")
        #expect(gate.peak == cap, "the attacker filled the server")
        // At least the 14 partial requests past the cap and the ten new connections each took a place.
        #expect(Self.metric(Self.evictedWaiting) >= before + Double(2 * attackers.count - cap + 10))
    }
}
