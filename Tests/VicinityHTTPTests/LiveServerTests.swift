import Hummingbird
import HummingbirdTesting
import Testing
import VicinityCore
import VicinityHTTP

@Suite("Over a real socket")
struct LiveServerTests {
    @Test("the application buildApplication returns serves requests and problems over HTTP/1.1")
    func liveServer() async throws {
        let store = try await store(csulbRows)
        let app = buildApplication(
            locator: Locator(places: store, campuses: store), metrics: sharedRegistry, logger: LogRecorder().logger)
        try await app.test(.live) { client in
            let health = try await client.execute(uri: "/health", method: .get)
            #expect(health.status == .ok)
            #expect(health.text == #"{"places":6,"status":"ok"}"#)
            #expect(health.headers[.server] == "Vicinity")

            let wrongMethod = try await client.execute(uri: "/v1/places/nearby", method: .post)
            #expect(wrongMethod.status == .methodNotAllowed)
            #expect(wrongMethod.headers[.allow] == "GET")

            let longTarget = try await client.execute(
                uri: "/v1/places?q=" + String(repeating: "a", count: 5000), method: .get)
            #expect(longTarget.status == .uriTooLong)
            #expect(longTarget.headers[.contentType] == "application/problem+json")

            let largeBody = try await client.execute(
                uri: "/health", method: .get, body: ByteBuffer(repeating: 0x78, count: 64 * 1024 + 1))
            #expect(largeBody.status == .contentTooLarge)
        }
    }
}
