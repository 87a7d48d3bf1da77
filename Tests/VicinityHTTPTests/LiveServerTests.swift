import Foundation
import GeoCore
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
import VicinityCore
import VicinityHTTP
import VicinitySpatiaLite
import VicinitySQL

@Suite("Over a real socket")
struct LiveServerTests {
    @Test("the server on an ephemeral port over a temporary SpatiaLite database answers as the store does")
    func liveServer() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("vicinity-live-\(UUID().uuidString).sqlite").path
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let store = try SpatiaLiteStore(path: path, logger: Logger(label: "test"))
        defer { try? store.close() }
        _ = try await store.upsert(try places(fromCSV: csulbRows) + places(fromCSV: bangkokRows))
        let app = buildApplication(services: services(store), port: 0, metrics: sharedRegistry, logger: LogRecorder().logger)
        let expected = try await store.nearby(NearbyQuery(centre: Spot.hallOfScience, radius: SearchRadius(meters: 500)))

        try await app.test(.live) { client in
            let health = try await client.execute(uri: "/health", method: .get)
            #expect(health.status == .ok)
            #expect(health.text == #"{"places":14,"status":"ok"}"#)
            #expect(health.headers[.server] == "Vicinity")

            let nearby = try await client.execute(uri: "/v1/places/nearby?lat=33.779842&lon=-118.112526&radius=500", method: .get)
            #expect(nearby.status == .ok)
            let body = try JSONDecoder().decode(NearbyBody.self, from: Data(nearby.text.utf8))
            #expect(body.places.map(\.id) == expected.map(\.place.id.rawValue))
            #expect(body.places.map(\.distance_m) == expected.map(\.distance.meters))
            #expect(!body.places.isEmpty)

            let temples = try await client.execute(uri: "/v1/temples/recommended?lat=13.746549&lon=100.492766&limit=3", method: .get)
            #expect(temples.status == .ok)
            #expect(temples.text.contains("\"th-bkk-001\""))

            // Search text that means something to SQL LIKE or to the FTS5 query language is only text, and a NUL
            // (which FTS5 would read as the end of its query) is too.
            for text in ["sci%00ence", "%00", "%22", "%22%22%22", "%2A", "NEAR%28hall%20science%29", "hall%20OR%20wat", "%5C", "%25", "_", "%5Ehall"] {
                let search = try await client.execute(uri: "/v1/places?q=" + text, method: .get)
                #expect(search.status == .ok, "q=\(text) gave \(search.status)")
            }
            let science = try await client.execute(uri: "/v1/places?q=SCIEN", method: .get)
            #expect(science.text.contains("\"csulb-hsci\""))

            let head = try await client.execute(uri: "/health", method: .head)
            #expect(head.status == .ok)
            #expect(head.headers[.contentLength] == String(health.body.readableBytes))
            #expect(head.body.readableBytes == 0)

            let wrongMethod = try await client.execute(uri: "/v1/places/nearby", method: .post)
            #expect(wrongMethod.status == .methodNotAllowed)
            #expect(wrongMethod.headers[.allow] == "GET, HEAD")

            // A target over the limit closes the connection, which this client would reuse: `HeadLimitTests`.

            let largeBody = try await client.execute(
                uri: "/health", method: .get, body: ByteBuffer(repeating: 0x78, count: 64 * 1024 + 1))
            #expect(largeBody.status == .contentTooLarge)
        }
    }

    @Test("a connection that sends nothing is closed after the idle timeout; one that asks is answered first")
    func idleConnectionsClose() async throws {
        let store = try await store(csulbRows)
        let app = buildApplication(
            services: services(store), options: HTTPOptions(idleTimeout: .seconds(3)),
            port: 0, metrics: sharedRegistry, logger: LogRecorder().logger)
        try await app.test(.live) { client in
            let port = try #require(client.port)
            let silent = try await RawConnection.open(port: port)
            // Nothing sent: the server closes its side after the timeout, which a read sees as end of stream.
            // The bound only keeps a broken server from holding the suite; a busy machine never comes near it.
            #expect(try await silent.readUntilClosed(within: .seconds(60)).isEmpty)

            // The idle clock starts when the connection is accepted. On a machine so loaded that the request is
            // read only after the timeout, closing first is right; a second connection then gets its answer.
            var answered = false
            for _ in 0..<3 where !answered {
                let talking = try await RawConnection.open(port: port)
                try await talking.send("GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
                answered = try await talking.readUntilClosed(within: .seconds(60)).hasPrefix("HTTP/1.1 200 OK")
            }
            #expect(answered, "the request was answered before the idle timeout closed the connection")
        }
    }

    private struct NearbyBody: Decodable {
        struct Hit: Decodable {
            let id: String
            let distance_m: Double
        }
        let places: [Hit]
    }
}
