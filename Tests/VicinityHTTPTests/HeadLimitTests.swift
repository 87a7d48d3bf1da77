import Foundation
import Testing
import VicinityHTTP

/// The limits on a request's head, over real sockets: what the HTTP decoder refuses before any handler runs is
/// answered as problem+json, as everything else is.
@Suite("Request head limits, over real sockets")
struct HeadLimitTests {
    /// A request for a place whose id makes the target `bytes` long.
    static func search(targetBytes bytes: Int, headers: String = "") -> String {
        let prefix = "/v1/places/"
        return "GET \(prefix)\(String(repeating: "a", count: bytes - prefix.utf8.count)) HTTP/1.1\r\nHost: localhost\r\n\(headers)Connection: close\r\n\r\n"
    }

    static func answer(to request: String, port: Int) async throws -> String {
        let connection = try await RawConnection.open(port: port)
        try await connection.send(request)
        return try await connection.readUntilClosed(within: .seconds(60))
    }

    @Test("a request target of 8 KiB is served; one byte more is 414 problem+json and the connection closes, whatever the length")
    func targetLimit() async throws {
        try await ConnectionLimitTests.withServer { port in
            let longest = try await Self.answer(to: Self.search(targetBytes: 8 * 1024), port: port)
            #expect(longest.hasPrefix("HTTP/1.1 404 Not Found"), "served: no place has this id; \(longest.prefix(200))")
            for bytes in [8 * 1024 + 1, 100 * 1024] {
                let refused = try await Self.answer(to: Self.search(targetBytes: bytes), port: port)
                #expect(refused.hasPrefix("HTTP/1.1 414 URI Too Long"), "\(bytes): \(refused.prefix(200))")
                #expect(refused.contains("Content-Type: application/problem+json"))
                #expect(refused.contains("Connection: close"))
                #expect(refused.contains(#""detail":"The path and query string may be at most 8192 bytes.""#))
            }
        }
    }

    @Test("a header line over 8 KiB, or a head over 32 KiB, is 431 problem+json")
    func headerLimit() async throws {
        try await ConnectionLimitTests.withServer { port in
            let long = "X-Padding: \(String(repeating: "b", count: 8 * 1024 + 1))\r\n"
            let refused = try await Self.answer(to: Self.search(targetBytes: 32, headers: long), port: port)
            #expect(refused.hasPrefix("HTTP/1.1 431 Request Header Fields Too Large"), "\(refused.prefix(200))")
            #expect(refused.contains(#""status":431"#))

            let many = (0..<5).map { "X-Padding-\($0): \(String(repeating: "c", count: 7 * 1024))\r\n" }.joined()
            let tooMany = try await Self.answer(to: Self.search(targetBytes: 32, headers: many), port: port)
            #expect(tooMany.hasPrefix("HTTP/1.1 431 Request Header Fields Too Large"), "\(tooMany.prefix(200))")
        }
    }

    @Test("a target too long after a pipelined request waits for the earlier answer, whole, then is answered 414")
    func afterPipelined() async throws {
        try await ConnectionLimitTests.withServer { port in
            let health = "GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n"
            let answers = try await Self.answer(to: health + Self.search(targetBytes: 9 * 1024), port: port)
            let parts = answers.components(separatedBy: "HTTP/1.1 ")
            #expect(parts.count == 3, "\(answers.prefix(400))")
            #expect(parts.dropFirst().first?.hasPrefix("200 OK") == true)
            #expect(parts.last?.hasPrefix("414 URI Too Long") == true)
            #expect(parts.last?.contains(#""status":414"#) == true, "a whole problem+json answer")
        }
    }
}
