import Foundation
import Hummingbird
import Logging
import Testing
import VicinityCore
import VicinityHTTP
@testable import VicinityPostGIS

/// A database whose network stops answering without closing (a firewall dropping packets, a proxy stopped with
/// SIGSTOP): requests that need it are answered 503 with `Retry-After` within the configured times, and
/// served again once it answers, over a real server and a real PostgreSQL with a freezable proxy between them.
@Suite("A database that stops answering", .enabled(if: testPostgresURL != nil, "no PostgreSQL: run Scripts/test.sh"))
struct DatabaseOutageTests {
    /// Short, so that the test waits seconds for its 503s; long enough that a machine busy with every other test
    /// still makes and uses its connections within them before the freeze.
    static let statementTimeout = Duration.seconds(2)
    static let connectTimeout = Duration.seconds(3)
    static let connectionWait = Duration.seconds(10)

    /// The slowest the configuration allows for a 503: a statement unanswered past its answer deadline
    /// (statement timeout and connect timeout), or no connection within the wait.
    static var configuredBound: Duration { max(statementTimeout + connectTimeout, connectionWait) }

    static func request(_ path: String, token: String, port: Int) async throws -> (answer: String, took: Duration) {
        let started = ContinuousClock.now
        let connection = try await RawConnection.open(port: port)
        try await connection.send("GET \(path) HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n")
        let answer = try await connection.readUntilClosed(within: .seconds(60))
        await connection.close()
        return (answer, ContinuousClock.now - started)
    }

    @Test("requests needing a frozen database are answered 503 with Retry-After within the statement and connect timeouts, and served again once it thaws")
    func frozenNetwork() async throws {
        let url = try #require(testPostgresURL)
        let schema = "outage_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        var configuration = try PostGISConfiguration(url: url + (url.contains("?") ? "&" : "?") + "schema=\(schema)")
        let proxy = try await FreezableProxy.start(upstreamPort: configuration.port)
        configuration.host = "127.0.0.1"
        configuration.port = proxy.port
        configuration.statementTimeout = Self.statementTimeout
        configuration.connectTimeout = Self.connectTimeout
        configuration.connectionWait = Self.connectionWait
        let logs = LogRecorder()
        do {
            try await PostGISStore.withStore(configuration, logger: logs.logger) { record in
                let stores = try await IndexedStores(record: record, at: SystemClock().now)
                let services = Services(stores: stores, clock: SystemClock(), hasher: testHasher, settings: .standard)
                try await Self.withServer(services: services, logs: logs) { port in
                    try await Self.outage(port: port, proxy: proxy)
                }
                try await proxy.thaw()
                try await record.dropSchema()
            }
        } catch {
            await proxy.stop()
            throw error
        }
        await proxy.stop()
        #expect(logs.records.contains { $0.message == "the database is unavailable" && $0.level == .warning })
        // At least one request took a connection the pool held and sent its statement into the silence.
        #expect(logs.records.contains { $0.message == "closed a PostgreSQL connection whose statement went unanswered" })
    }

    static func outage(port: Int, proxy: FreezableProxy) async throws {
        // Signed in, with the pool's connections made, while the database answers.
        let signUp = try await RawConnection.open(port: port)
        try await signUp.send(ConnectionLimitTests.signUp("outage"))
        #expect(try await signUp.readUntilClosed(within: .seconds(60)).hasPrefix("HTTP/1.1 201"))
        await signUp.close()
        let body = #"{"username":"outage","password":"correct horse battery"}"#
        let signIn = try await RawConnection.open(port: port)
        try await signIn.send("POST /v1/sessions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body)
        let signedIn = try await signIn.readUntilClosed(within: .seconds(60))
        await signIn.close()
        let token = String(try #require(signedIn.firstMatch(of: /"token":"([A-Za-z0-9_-]{43})"/)?.1))
        #expect(try await request("/v1/me", token: token, port: port).answer.hasPrefix("HTTP/1.1 200 OK"))

        try await proxy.freeze()
        // Several at once: some take a connection the pool holds and send their statement into the silence,
        // others wait for a connection that cannot be made.
        let answers = try await withThrowingTaskGroup(of: (answer: String, took: Duration).self) { group in
            for _ in 0..<4 { group.addTask { try await request("/v1/me", token: token, port: port) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for (answer, took) in answers {
            #expect(answer.hasPrefix("HTTP/1.1 503 Service Unavailable"), "\(answer.prefix(300))")
            #expect(answer.contains("Retry-After: 5"))
            #expect(answer.contains("application/problem+json"))
            // Answered within the configured times, with room for a busy machine; without them it was never.
            #expect(took < configuredBound + .seconds(20), "answered after \(took)")
        }

        try await proxy.thaw()
        // A client comes back as it is told, if less patiently: its pause is its own, not a measure of anything.
        let served = try await waiting(for: "a request served after the thaw") {
            while true {
                let (answer, _) = try await request("/v1/me", token: token, port: port)
                if answer.hasPrefix("HTTP/1.1 200 OK") { return answer }
                #expect(answer.hasPrefix("HTTP/1.1 503"), "\(answer.prefix(300))")
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        #expect(served.contains(#""username":"outage""#))
    }

    /// Runs the application on a free port for `body`, and stops it after.
    static func withServer<S: Stores>(
        services: Services<S>, logs: LogRecorder, _ body: @Sendable (Int) async throws -> Void
    ) async throws {
        try await withListening({ onListening in
            buildApplication(services: services, port: 0, metrics: sharedRegistry, logger: logs.logger, onListening: onListening)
        }, body)
    }
}
