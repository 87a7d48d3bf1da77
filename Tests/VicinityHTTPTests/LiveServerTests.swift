import Foundation
#if canImport(Glibc)
import Glibc
#endif
import GeoCore
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
import VicinityCore
import VicinityHTTP
import VicinitySpatiaLite

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

            let longTarget = try await client.execute(
                uri: "/v1/places?q=" + String(repeating: "a", count: 5000), method: .get)
            #expect(longTarget.status == .uriTooLong)
            #expect(longTarget.headers[.contentType] == "application/problem+json")

            let largeBody = try await client.execute(
                uri: "/health", method: .get, body: ByteBuffer(repeating: 0x78, count: 64 * 1024 + 1))
            #expect(largeBody.status == .contentTooLarge)
        }
    }

    @Test("a connection that sends nothing is closed after the idle timeout; one that asks is answered first")
    func idleConnectionsClose() async throws {
        let store = try await store(csulbRows)
        let app = buildApplication(
            services: services(store), options: HTTPOptions(idleTimeout: .milliseconds(300)),
            port: 0, metrics: sharedRegistry, logger: LogRecorder().logger)
        try await app.test(.live) { client in
            let port = try #require(client.port)
            let silent = try RawConnection(port: port)
            // Nothing sent: the server closes its side within the timeout, which a read sees as end of stream.
            #expect(try silent.readUntilClosed(within: .seconds(5)) == 0)

            let talking = try RawConnection(port: port)
            try talking.send("GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
            let answer = try talking.readUntilClosed(within: .seconds(5))
            #expect(answer > 0, "the request was answered before the idle timeout closed the connection")
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

/// A plain TCP connection to the server on loopback, for what an HTTP client library hides.
private final class RawConnection {
    private let socket: Int32

    init(port: Int) throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw POSIXError(.EBADF) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard status == 0 else { close(socket); throw POSIXError(.ECONNREFUSED) }
    }

    deinit { close(socket) }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        guard Glibc.send(socket, bytes, bytes.count, 0) == bytes.count else { throw POSIXError(.EIO) }
    }

    /// Reads until the server closes the connection and returns how many bytes came; throws if it stays open
    /// past `limit`.
    func readUntilClosed(within limit: Duration) throws -> Int {
        var timeout = timeval(tv_sec: Int(limit.components.seconds), tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var total = 0
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(socket, &buffer, buffer.count, 0)
            if count == 0 { return total }
            guard count > 0 else { throw POSIXError(.ETIMEDOUT) }
            total += count
        }
    }
}
