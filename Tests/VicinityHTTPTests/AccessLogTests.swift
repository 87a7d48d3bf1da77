import Foundation
import Testing
@testable import VicinityHTTP

/// The access log as an operator reads it: one line a request in the Common Log Format with the seconds it took,
/// written off the request's path, and nothing a query string carries.
@Suite("The access log")
struct AccessLogTests {
    /// `ADDRESS - - [DD/Mon/YYYY:HH:MM:SS +0000] "METHOD PATH HTTP/1.1" STATUS BYTES SECONDS`.
    static var line: Regex<(Substring, Substring, Substring, Substring, Substring, Substring, Substring)> { /^(\S+) - - \[\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} \+0000\] "([A-Z]+) (\S+) HTTP\/1\.1" (\d{3}) (\d+) (\d+\.\d{3})$/ }

    static func scratchFile() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("vicinity-access-\(UUID().uuidString).log").path
    }

    @Test("each request is one line: the client, the time, the method and path without the query string, the status, the body's bytes and the seconds")
    func lines() async throws {
        let path = Self.scratchFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let log = try AccessLog(path: path)
        let bodies = Watched<[String]>([])
        try await ConnectionLimitTests.withServer(options: HTTPOptions(accessLog: log)) { port in
            for request in [
                "GET /v1/places/nearby?lat=33.779842&lon=-118.112526&radius=150 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
                "HEAD /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
                "GET /v1/nowhere HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
            ] {
                let connection = try await RawConnection.open(port: port, from: "127.0.0.7")
                try await connection.send(request)
                let answer = try await connection.readUntilClosed(within: .seconds(60))
                bodies.update { $0.append(answer.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")) }
                await connection.close()
            }
        }
        await log.flush()
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 4 && lines.last == "", "three lines, each ended: \(text)")
        let parsed = lines.dropLast().compactMap { try? Self.line.wholeMatch(in: String($0))?.output }
        #expect(parsed.count == 3, "\(text)")
        #expect(parsed.map { String($0.1) } == ["127.0.0.7", "127.0.0.7", "127.0.0.7"])
        #expect(parsed.map { "\($0.2) \($0.3) \($0.4)" } == ["GET /v1/places/nearby 200", "HEAD /health 200", "GET /v1/nowhere 404"])
        #expect(parsed.map { Int($0.5) } == bodies.value.map { $0.utf8.count }, "the bytes of each body as sent")
        #expect(parsed[1].5 == "0", "HEAD sends no body")
        #expect(!text.contains("33.779842") && !text.contains("radius"), "never a query string")
    }

    @Test("behind a trusted proxy the line names the client it forwarded")
    func forwardedClient() async throws {
        let path = Self.scratchFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let log = try AccessLog(path: path)
        try await ConnectionLimitTests.withServer(options: HTTPOptions(trustedProxies: ["127.0.0.8"], accessLog: log)) { port in
            let connection = try await RawConnection.open(port: port, from: "127.0.0.8")
            try await connection.send("GET /health HTTP/1.1\r\nHost: localhost\r\nX-Forwarded-For: 203.0.113.9\r\nConnection: close\r\n\r\n")
            _ = try await connection.readUntilClosed(within: .seconds(60))
            await connection.close()
        }
        await log.flush()
        #expect(try String(contentsOfFile: path, encoding: .utf8).hasPrefix("203.0.113.9 - - ["))
    }

    @Test("an answer written from the connection's event loop is logged as the router's are, with the client a trusted proxy forwarded")
    func immediateAnswers() async throws {
        let path = Self.scratchFile()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let log = try AccessLog(path: path)
        let body = Watched("")
        try await ConnectionLimitTests.withServer(options: HTTPOptions(trustedProxies: ["127.0.0.8"], accessLog: log)) { port in
            let connection = try await RawConnection.open(port: port, from: "127.0.0.8")
            try await connection.send(
                "GET \(ImmediateAnswerTests.distance) HTTP/1.1\r\nHost: localhost\r\nX-Forwarded-For: 203.0.113.9\r\n\r\n")
            let answer = try await connection.received(containing: #""method":"haversine"}"#, within: .seconds(60))
            await connection.close()
            body.update { $0 = answer.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n") }
        }
        await log.flush()
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let parsed = text.split(separator: "\n").compactMap { try? Self.line.wholeMatch(in: String($0))?.output }
        #expect(parsed.count == 1, "\(text)")
        #expect(parsed.map { "\($0.1) \($0.2) \($0.3) \($0.4)" } == ["203.0.113.9 GET /v1/distance 200"])
        #expect(parsed.map { Int($0.5) } == [body.value.utf8.count])
        #expect(!text.contains("33.779842"), "never a query string")
    }

    @Test("bytes that could forge a line or a field, in the path or the client, are written \\xHH, and the time and seconds in their fixed forms")
    func escaping() {
        let line = AccessLogLine(
            client: nil, arrival: 1_795_505_743, method: "GET", path: "/a\"b\\c\n\u{7F}é", status: 200, bodyBytes: 12,
            duration: .milliseconds(1234) + .microseconds(600))
        #expect(line.text == #"- - - [24/Nov/2026:07:35:43 +0000] "GET /a\x22b\x5Cc\x0A\x7F\xC3\xA9 HTTP/1.1" 200 12 1.234"# + "\n")
        // A client forwarded through a trusted proxy is what that client sent: a space in it would start a new field.
        let forwarded = AccessLogLine(
            client: "203.0.113.9 - admin \"", arrival: 1_795_505_743, method: "GET", path: "/", status: 200, bodyBytes: 0,
            duration: .zero)
        #expect(forwarded.text.hasPrefix(#"203.0.113.9\x20-\x20admin\x20\x22 - - [24/Nov/2026"#), "\(forwarded.text)")
        #expect(AccessLogLine.seconds(.milliseconds(4)) == "0.004")
        #expect(AccessLogLine.seconds(.seconds(61) + .milliseconds(50)) == "61.050")
    }

    @Test("a file that cannot be opened is refused, naming why")
    func unwritable() {
        #expect(throws: AccessLog.Unwritable.self) { try AccessLog(path: "/nonexistent-folder/access.log") }
    }
}
