import Foundation
import GeoCore
import Hummingbird
import HummingbirdTesting
import Logging
import Synchronization
import Testing
import VicinityCore
import VicinityHTTP

@Suite("Operations endpoints and request logs")
struct OperationsTests {
    @Test("health asks the store and reports how many places it holds")
    func healthy() async throws {
        let store = try await store(csulbRows, bangkokRows)
        let count = try await store.count()
        #expect(count == 14)
        try await withApp(store) { client in
            let response = try await client.execute(uri: "/health", method: .get)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "application/json")
            #expect(response.text == #"{"places":14,"status":"ok"}"#)
        }
    }

    @Test("health says the server is behind while it cannot read the record's changes, and is well again once it can")
    func behindTheRecord() async throws {
        let stores = StallableStores()
        let clock = ManualClock()
        let behindAfter = Duration.milliseconds(500)
        var settings = ServiceSettings()
        // A failed read is tried again after `wait`: short, so that the server is soon well again.
        settings.following = FollowRules(wait: .milliseconds(50), retention: .seconds(600), pruning: .seconds(60), behindAfter: behindAfter)
        try await withApp(stores: stores, clock: clock, settings: settings) { client in
            #expect(try await client.execute(uri: "/health", method: .get).status == .ok)
            let metrics = try await client.execute(uri: "/metrics", method: .get).text
            let age = metrics.split(separator: "\n").first { $0.hasPrefix("vicinity_change_feed_seconds_since_read ") }
            #expect(age.flatMap { Double($0.split(separator: " ").last ?? "") }.map { $0 >= 0 } == true, "\(age ?? "none")")
            // Every read from now on fails, so the last one stays where it was while the time passes.
            stores.feed.stalled.withLock { $0 = true }
            clock.advance(by: behindAfter + .milliseconds(1))
            let behind = try await client.execute(uri: "/health", method: .get)
            #expect(behind.status == .serviceUnavailable)
            #expect(behind.headers[.contentType] == "application/problem+json")
            #expect(behind.headers[.retryAfter] == "5")
            #expect(behind.text.contains("has not read the record's changes"))
            let waits = stores.feed.waits.value
            stores.feed.stalled.withLock { $0 = false }
            // The follower waits for changes after each read it has recorded. The first wait from now on may
            // follow a read begun before the time passed; the second follows one begun after.
            _ = try await waiting(for: "two reads after the feed is back") { try await stores.feed.waits.wait { $0 >= waits + 2 } }
            #expect(try await client.execute(uri: "/health", method: .get).status == .ok)
        }
    }

    @Test("health is a 503 problem when the store fails, with the cause logged")
    func unhealthy() async throws {
        let logs = LogRecorder()
        try await withApp(places: FailingStore(), campuses: FailingStore(), logs: logs) { client in
            let response = try await client.execute(uri: "/health", method: .get)
            #expect(response.status == .serviceUnavailable)
            #expect(response.headers[.contentType] == "application/problem+json")
            #expect(try response.decoded(as: ProblemWire.self).status == 503)
            #expect(!response.text.contains("secret"))
        }
        #expect(logs.records.contains { $0.level == .error && ($0.metadata["error"] ?? "").contains("secret.sqlite") })
    }

    @Test("metrics expose request counts and latency histograms per route in Prometheus text format")
    func metrics() async throws {
        let store = try await store(csulbRows)
        try await withApp(store) { client in
            _ = try await client.execute(uri: "/v1/places/nearby?lat=33.779842&lon=-118.112526", method: .get)
            _ = try await client.execute(uri: "/v1/places/nearby?lat=91&lon=0", method: .get)
            let response = try await client.execute(uri: "/metrics", method: .get)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
            let lines = response.text.split(separator: "\n")
            let route = #"http_route="/v1/places/nearby""#
            #expect(lines.contains { $0.hasPrefix("hb_requests{") && $0.contains(route) && $0.contains(#"http_response_status_code="200""#) })
            #expect(lines.contains { $0.hasPrefix("hb_requests{") && $0.contains(route) && $0.contains(#"http_response_status_code="400""#) })
            #expect(lines.contains { $0.hasPrefix("http_server_request_duration_bucket{") && $0.contains(route) })
            #expect(lines.contains("# TYPE http_server_request_duration histogram"))
        }
    }

    @Test("the OpenAPI document is served as application/yaml")
    func openAPIServed() async throws {
        try await withApp(InMemoryStore()) { client in
            let response = try await client.execute(uri: "/openapi.yaml", method: .get)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "application/yaml")
            #expect(response.text.hasPrefix("openapi: 3.1"))
        }
    }

    @Test("HEAD answers like GET on every endpoint, with the same status and Content-Length and no content")
    func headIsGetWithoutContent() async throws {
        let store = try await store(csulbRows)
        try await withApp(store) { client in
            for uri in ["/health", "/v1/places/nearby?lat=33.779842&lon=-118.112526", "/v1/places/csulb-hsci",
                        "/v1/places/no-such-place", "/v1/places/nearby?lat=91&lon=0", "/openapi.yaml"] {
                let get = try await client.execute(uri: uri, method: .get)
                let head = try await client.execute(uri: uri, method: .head)
                #expect(head.status == get.status, "\(uri)")
                #expect(head.headers[.contentType] == get.headers[.contentType], "\(uri)")
                #expect(head.headers[.contentLength] == String(get.body.readableBytes), "\(uri)")
                #expect(head.body.readableBytes == 0, "\(uri)")
            }
        }
    }

    @Test("each request is logged once with method, path, route, status and duration, never its query string")
    func requestLogs() async throws {
        let logs = LogRecorder()
        let store = try await store(csulbRows)
        try await withApp(store, logs: logs) { client in
            _ = try await client.execute(
                uri: "/v1/places/nearby?lat=33.779842&lon=-118.112526&token=hunter2", method: .get)
            _ = try await client.execute(uri: "/v1/places/csulb-hsci", method: .get)
        }
        let requests = logs.records.filter { $0.message == "Request handled" }
        #expect(requests.map { $0.metadata["http.path"] } == ["/v1/places/nearby", "/v1/places/csulb-hsci"])
        #expect(requests.map { $0.metadata["http.status"] } == ["400", "200"])
        #expect(requests.map { $0.metadata["http.route"] } == ["/v1/places/nearby", "/v1/places/{id}"])
        #expect(requests.allSatisfy { $0.metadata["http.method"] == "GET" && $0.metadata["duration_ms"] != nil })
        #expect(requests.allSatisfy { $0.metadata["hb.request.id"] != nil })
        let everything = logs.records.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
        #expect(!everything.contains("hunter2"))
        #expect(!everything.contains("33.779842"))
    }
}

/// The in-memory store, with a change feed that can be made to fail as a database out of reach does.
final class StallableStores: Stores {
    let store = InMemoryStore()
    let feed: StallableFeed

    init() { feed = StallableFeed(store) }

    var places: InMemoryStore { store }
    var campuses: InMemoryStore { store }
    var accounts: InMemoryStore { store }
    var positions: InMemoryStore { store }
    var friends: InMemoryStore { store }
    var events: InMemoryStore { store }
    var votes: InMemoryStore { store }
    var changes: StallableFeed { feed }
    var outbox: InMemoryStore { store }
    var devices: InMemoryStore { store }
    var push: InMemoryStore { store }
    var guesses: MemoryGuessingLedger { store.guesses }
    var limits: MemoryWindowLedger { store.limits }
    var streamLeases: MemoryStreamLeases { store.streamLeases }
}

final class StallableFeed: ChangeFeed {
    let base: InMemoryStore
    let stalled = Mutex(false)
    /// Calls of `waitForChanges`: a follower makes one after each read it has recorded, and none after a failed one.
    let waits = Watched(0)

    init(_ base: InMemoryStore) { self.base = base }

    private func check() throws {
        if stalled.withLock({ $0 }) { throw StoreError.unavailable("stalled by the test") }
    }

    func changeCursor() async throws -> Int {
        try check()
        return try await base.changeCursor()
    }

    func changes(after cursor: Int) async throws -> ChangeRead<Int> {
        try check()
        return try await base.changes(after: cursor)
    }

    func waitForChanges(timeout: Duration) async throws {
        waits.update { $0 += 1 }
        try await base.waitForChanges(timeout: timeout)
    }
    func pruneChanges(olderThan age: Duration) async throws -> Int { try await base.pruneChanges(olderThan: age) }
}
