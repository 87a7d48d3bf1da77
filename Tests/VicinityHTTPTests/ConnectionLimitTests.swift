import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
import VicinityCore
import VicinityHTTP

/// The caps on what clients hold open, over real sockets: the deadline on a whole request and the cap per client
/// (the cap on all connections, and the room it makes, in `EvictionTests`). Each client is its own loopback
/// address (127.0.0.0/8 is all this machine).
///
/// Every bound on waiting here only keeps a broken server from holding the suite: a busy machine answers far
/// inside it, and no assertion measures how fast anything was.
@Suite("Connection limits, over real sockets")
struct ConnectionLimitTests {
    /// The start of a sign-up whose body never arrives in full.
    static let unfinishedSignUp = "POST /v1/users HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{"

    static func signUp(_ username: String) -> String {
        let body = #"{"username":"\#(username)","password":"correct horse battery","first_name":"Ada","last_name":"Byron"}"#
        return "POST /v1/users HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body
    }

    static let health = "GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"

    /// The whole-request deadline of the trickling tests: short, so that each waits a fraction of a second for
    /// it to pass. Nothing here must happen within it; a busy machine only makes the trickle send fewer bytes.
    static let requestTimeout = Duration.milliseconds(400)

    /// Sends one byte every `interval` (by default five times within `requestTimeout`) until the server closes
    /// the connection, as a slow-loris client does. The pause is the client's slowness, which the test is about.
    static func trickle(_ connection: RawConnection, every interval: Duration = requestTimeout / 5) -> Task<Void, Never> {
        Task {
            while !Task.isCancelled {
                do {
                    try await connection.send(" ")
                    try await Task.sleep(for: interval)
                } catch { return }
            }
        }
    }

    /// Runs the application on a free port for `body`, with no other client connected (a test client would
    /// hold connections of its own), and stops it after.
    static func withServer(
        options: HTTPOptions = .standard, logs: LogRecorder = LogRecorder(), _ body: @Sendable (Int) async throws -> Void
    ) async throws {
        try await withListening({ onListening in
            buildApplication(
                services: services(try await store(csulbRows)), options: options, port: 0, metrics: sharedRegistry,
                logger: logs.logger, onListening: onListening)
        }, body)
    }

    /// Whether a new connection from `local` is served at once. Asked once the client has seen the server close
    /// a connection: the server gives the place back as it closes, before the close reaches the client.
    static func served(port: Int, from local: String) async throws -> Bool {
        let connection = try await RawConnection.open(port: port, from: local)
        try? await connection.send(health)
        return try await connection.readUntilClosed(within: .seconds(60)).hasPrefix("HTTP/1.1 200 OK")
    }

    @Test("an event stream its client closes frees the client's place at once, not at the next heartbeat")
    func closedStreamFreesItsPlace() async throws {
        // A heartbeat far beyond the wait below: only the client's close can free the place in time.
        let options = HTTPOptions(eventHeartbeat: .seconds(300), maximumConnections: 64, maximumConnectionsPerClient: 1)
        try await Self.withServer(options: options) { port in
            let setUp = try await RawConnection.open(port: port, from: "127.0.0.41")
            try await setUp.send(Self.signUp("leaver"))
            #expect(try await setUp.readUntilClosed(within: .seconds(60)).hasPrefix("HTTP/1.1 201"))
            let body = #"{"username":"leaver","password":"correct horse battery"}"#
            let signIn = try await RawConnection.open(port: port, from: "127.0.0.43")
            try await signIn.send("POST /v1/sessions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body)
            let answer = try await signIn.readUntilClosed(within: .seconds(60))
            let token = try #require(answer.firstMatch(of: /"token":"([A-Za-z0-9_-]{43})"/)?.1)

            let stream = try await RawConnection.open(port: port, from: "127.0.0.42")
            try await stream.send("GET /v1/events HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(token)\r\n\r\n")
            let opened = try await stream.received(containing: ": connected", within: .seconds(60))
            #expect(opened.contains(": connected"), "\(opened)")
            // The one place of 127.0.0.42 is the stream's.
            let refused = try await RawConnection.open(port: port, from: "127.0.0.42")
            #expect(try await refused.readUntilClosed(within: .seconds(60)).hasPrefix("HTTP/1.1 503"))
            try await stream.leave(within: .seconds(60))
            #expect(try await Self.served(port: port, from: "127.0.0.42"))
        }
    }

    @Test("more trickling connections than a client may hold: the rest are refused 503 at once, others are served throughout, and the trickling requests are cut at the deadline with 408")
    func tricklingClient() async throws {
        let options = HTTPOptions(requestTimeout: Self.requestTimeout, maximumConnections: 64, maximumConnectionsPerClient: 8)
        try await Self.withServer(options: options) { port in
            // Twelve connections from one client, all open before any sends a byte: admitted or refused as they
            // arrive, none closed by the deadline meanwhile.
            var connections: [RawConnection] = []
            for _ in 0..<12 { connections.append(try await RawConnection.open(port: port, from: "127.0.0.21")) }
            let held = connections
            try await withThrowingTaskGroup(of: (Int, String).self) { group in
                for (index, connection) in held.enumerated() {
                    group.addTask { (index, try await connection.readUntilClosed(within: .seconds(120))) }
                }
                var answers: [Int: String] = [:]
                var tricklers: [Task<Void, Never>] = []
                defer { for trickler in tricklers { trickler.cancel() } }
                var started: ContinuousClock.Instant?
                for try await (index, answer) in group {
                    answers[index] = answer
                    let refused = answers.values.filter { $0.hasPrefix("HTTP/1.1 503 Service Unavailable") }.count
                    guard refused == 4, started == nil else { continue }
                    // The refusals are in: the others are the admitted ones. They start their requests and
                    // trickle, and another client is served meanwhile.
                    started = .now
                    for (index, connection) in held.enumerated() where answers[index] == nil {
                        try await connection.send(Self.unfinishedSignUp)
                        tricklers.append(Self.trickle(connection))
                    }
                    let other = try await RawConnection.open(port: port, from: "127.0.0.2")
                    try await other.send(Self.health)
                    #expect(try await other.readUntilClosed(within: .seconds(60)).hasPrefix("HTTP/1.1 200 OK"))
                    let signUp = try await RawConnection.open(port: port, from: "127.0.0.2")
                    try await signUp.send(Self.signUp("ada"))
                    #expect(try await signUp.readUntilClosed(within: .seconds(60)).hasPrefix("HTTP/1.1 201 Created"))
                }
                let refusals = answers.values.filter { $0.hasPrefix("HTTP/1.1 503 Service Unavailable") }
                let timeouts = answers.values.filter { $0.hasPrefix("HTTP/1.1 408 Request Timeout") }
                #expect(refusals.count == 4)
                #expect(refusals.allSatisfy { $0.contains("Retry-After: 1") && $0.contains("as many connections as one client may") })
                #expect(timeouts.count == 8, "\(answers.values.filter { !$0.hasPrefix("HTTP/1.1 503") })")
                #expect(timeouts.allSatisfy { $0.contains("application/problem+json") })
                // Cut by the deadline, not before it, although bytes kept coming.
                let since = try #require(started)
                #expect(ContinuousClock.now - since >= Self.requestTimeout)
            }

            // Their places are free again once the server has closed its side too: the same client is served.
            #expect(try await Self.served(port: port, from: "127.0.0.21"))
        }
    }

    @Test("a request head that never ends is answered 408 and closed at the deadline, however often a byte comes")
    func tricklingHead() async throws {
        try await Self.withServer(options: HTTPOptions(requestTimeout: Self.requestTimeout)) { port in
            let connection = try await RawConnection.open(port: port)
            let started = ContinuousClock.now
            try await connection.send("GET /health HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
            let trickler = Self.trickle(connection)
            defer { trickler.cancel() }
            let answer = try await connection.readUntilClosed(within: .seconds(60))
            #expect(answer.hasPrefix("HTTP/1.1 408 Request Timeout"))
            // The answer tells the deadline in whole seconds, rounded up.
            #expect(answer.contains(#""detail":"The request did not arrive in full within 1 s of its first byte.""#))
            #expect(ContinuousClock.now - started >= Self.requestTimeout)
        }
    }

    @Test("a request that starts after an earlier one on the same connection is cut at its own deadline, not the earlier one's")
    func laterRequestOwnDeadline() async throws {
        try await Self.withServer(options: HTTPOptions(requestTimeout: Self.requestTimeout)) { port in
            let connection = try await RawConnection.open(port: port)
            try await connection.send("GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
            _ = try await connection.received(containing: #""status":"ok"}"#, within: .seconds(60))
            // Into the first request's deadline, so that the second one starts before it would have run out.
            try await Task.sleep(for: Self.requestTimeout * 0.6)
            let started = ContinuousClock.now
            try await connection.send("GET /health HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
            let trickler = Self.trickle(connection)
            defer { trickler.cancel() }
            let answers = try await connection.readUntilClosed(within: .seconds(60))
            #expect(answers.components(separatedBy: "HTTP/1.1 ").last?.hasPrefix("408 Request Timeout") == true, "\(answers)")
            #expect(ContinuousClock.now - started >= Self.requestTimeout)
        }
    }

    @Test("a pipelined request whose body never ends is answered 408 by the router after the one before is answered whole")
    func pipelinedTrickle() async throws {
        try await Self.withServer(options: HTTPOptions(requestTimeout: Self.requestTimeout)) { port in
            let connection = try await RawConnection.open(port: port)
            // Both heads in one write: the second comes with no bytes of its own to start its clock.
            try await connection.send("GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n" + Self.unfinishedSignUp)
            let trickler = Self.trickle(connection)
            defer { trickler.cancel() }
            let answers = try await connection.readUntilClosed(within: .seconds(60))
            let parts = answers.components(separatedBy: "HTTP/1.1 ")
            #expect(parts.count == 3, "\(answers)")
            #expect(parts.dropFirst().first?.hasPrefix("200 OK") == true)
            #expect(parts.last?.hasPrefix("408 Request Timeout") == true)
            #expect(parts.last?.contains(#""status":408"#) == true, "a whole problem+json answer, not bytes inside another")
        }
    }

    @Test("a client that stops reading the answers it asked for is cut, not held for good")
    func stalledReader() async throws {
        let logs = LogRecorder()
        // Short, so that the cut comes soon: this client reads nothing until then, however long that is.
        try await Self.withServer(options: HTTPOptions(stalledReaderTimeout: .milliseconds(300)), logs: logs) { port in
            let connection = try await RawConnection.open(port: port, reading: false)
            // Far more than the socket buffers hold: the OpenAPI document, asked for 400 times in one go.
            let ask = "GET /openapi.yaml HTTP/1.1\r\nHost: localhost\r\n\r\n"
            try await connection.send(String(repeating: ask, count: 400))
            let cut = "Closed a connection whose client stopped reading"
            _ = try await logs.records(until: "the cut of the stalled reader") { $0.contains { $0.message == cut } }
            try await connection.startReading()
            let answers = try await connection.readUntilClosed(within: .seconds(60))
            #expect(answers.components(separatedBy: "HTTP/1.1 200 OK").count - 1 < 400, "cut before every answer went out")
        }
    }

    @Test("a client that drops mid-request is logged at debug as 499, never as a server fault")
    func clientAbort() async throws {
        let logs = LogRecorder()
        // A deadline far off: the client leaves only once the server has its request, and only its leaving may
        // end the request, however long a busy machine takes to get there.
        try await Self.withServer(options: HTTPOptions(requestTimeout: .seconds(600)), logs: logs) { port in
            let connection = try await RawConnection.open(port: port)
            try await connection.send(Self.unfinishedSignUp)
            // Gone once the request is in the server's hands, with its body still to come.
            _ = try await logs.records(until: "the request to arrive") { $0.contains { $0.message == "Request received" } }
            await connection.close()
            let logged = try await logs.records(until: "the request's log line") { $0.contains { $0.message == "Request handled" } }
                .filter { $0.message == "Request handled" }
            #expect(logged.map { $0.metadata["http.status"] } == ["499"])
            #expect(logged.map(\.level) == [.debug])
            #expect(!logs.records.contains { $0.level >= .error }, "\(logs.records.map(\.message))")
        }
    }
}
