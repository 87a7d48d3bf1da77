import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// What `vicinity serve` writes about itself: per-request lines only at debug or in the access log, and a
/// graceful stop that logs no error, over each store.
@Suite("What serve logs")
struct ServeLogTests {
    /// A blocking TCP connection to the server, used only from `CLI.offThePool`: the test target has no network
    /// library but Foundation's, which cannot hold an event stream open.
    final class Socket: @unchecked Sendable {
        let descriptor: CInt

        init(port: Int) throws {
            descriptor = socket(AF_INET, CInt(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard descriptor >= 0, connected == 0 else { throw Failed(what: "connect: \(String(cString: strerror(errno)))") }
        }

        deinit { close(descriptor) }

        struct Failed: Error { var what: String }

        func send(_ text: String) throws {
            let bytes = Array(text.utf8)
            guard bytes.withUnsafeBytes({ Glibc.send(descriptor, $0.baseAddress, $0.count, 0) }) == bytes.count else {
                throw Failed(what: "send")
            }
        }

        /// Reads until what has come contains `text`, or the server closes.
        func read(until text: String) throws -> String {
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !String(decoding: received, as: UTF8.self).contains(text) {
                let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { break }
                received += buffer[..<count]
            }
            return String(decoding: received, as: UTF8.self)
        }
    }

    /// The level of each line a swift-log stream handler wrote: the word after the time.
    static func levels(_ log: String) -> [(level: String, line: String)] {
        log.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ", maxSplits: 2)
            return words.count == 3 ? (String(words[1]), String(line)) : nil
        }
    }

    static func gracefulStop(database: String, scratch: Scratch) async throws {
        let accessLog = scratch.folder.appendingPathComponent("access.log").path
        let errorsPath = scratch.folder.appendingPathComponent("serve.log")
        _ = FileManager.default.createFile(atPath: errorsPath.path, contents: nil)
        let errors = try FileHandle(forWritingTo: errorsPath)
        let server = try CLI.makeProcess([
            "serve", "--port", "0", "--db", database, "--log-level", "debug", "--access-log", accessLog,
        ])
        defer { if server.isRunning { kill(server.processIdentifier, SIGKILL) } }
        let line = try await CLI.startUpLine(of: server, errors: errors)
        let base = try #require(line.split(separator: " ").dropFirst(2).first.map(String.init))
        let port = try #require(URL(string: base)?.port)
        let api = API(base: try #require(URL(string: base)))

        // Requests answered, an event stream open, an idle keep-alive and a head half sent when the stop comes.
        let person = try await api.signUpAndIn("stopper")
        #expect(try await api.send("GET", "/health").status == 200)
        let held = try await CLI.offThePool { () -> [Socket] in
            let stream = try Socket(port: port)
            try stream.send("GET /v1/events HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer \(person.token)\r\n\r\n")
            _ = try stream.read(until: ": connected")
            let idle = try Socket(port: port)
            try idle.send("GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n")
            _ = try idle.read(until: "\"status\":\"ok\"")
            let halfSent = try Socket(port: port)
            try halfSent.send("GET /health HTTP/1.1\r\nHost: loc")
            return [stream, idle, halfSent]
        }

        server.terminate()  // SIGTERM
        try await CLI.offThePool { server.waitUntilExit() }
        try errors.close()
        withExtendedLifetime(held) {}
        #expect(server.terminationReason == .exit)
        #expect(server.terminationStatus == 0)

        let log = try String(contentsOf: errorsPath, encoding: .utf8)
        let lines = Self.levels(log)
        #expect(!lines.isEmpty)
        #expect(!lines.contains { ["error", "critical"].contains($0.level) }, "\(lines.filter { ["error", "critical"].contains($0.level) }.map(\.line))")
        let handled = lines.filter { $0.line.contains("Request handled") }
        #expect(handled.count >= 4, "the per-request lines are there at debug")
        #expect(handled.allSatisfy { $0.level == "debug" }, "and only at debug")
        #expect(lines.last?.line.hasSuffix("Vicinity stopped") == true)

        let access = try String(contentsOfFile: accessLog, encoding: .utf8)
        let requests = access.split(separator: "\n").map { $0.split(separator: "\"").dropFirst().first.map(String.init) ?? "" }
        #expect(requests == [
            "POST /v1/users HTTP/1.1", "POST /v1/sessions HTTP/1.1", "GET /health HTTP/1.1", "GET /health HTTP/1.1",
            "GET /v1/events HTTP/1.1",
        ], "one line a request, the stream's once it ended: \(access)")
        #expect(access.split(separator: "\n").allSatisfy {
            $0.wholeMatch(of: /127\.0\.0\.1 - - \[[^\]]+\] "[^"]+" \d{3} \d+ \d+\.\d{3}/) != nil
        }, "\(access)")
    }

    @Test("a graceful stop (SIGTERM) over SpatiaLite, with a stream, an idle connection and a half-sent head open, logs no error; per-request lines come at debug and in the access log",
          .timeLimit(.minutes(2)))
    func gracefulStopOverSpatiaLite() async throws {
        let scratch = try Scratch()
        #expect(try await CLI.run(["import", "places", CLI.path("Data/csulb-buildings.csv"), "--db", scratch.database]).status == 0)
        try await Self.gracefulStop(database: scratch.database, scratch: scratch)
    }

    @Test("a graceful stop (SIGTERM) over PostgreSQL logs no error either",
          .enabled(if: PostGISCommandLineTests.server != nil, "no PostgreSQL: run Scripts/test.sh, or set VICINITY_TEST_POSTGRES_URL"),
          .timeLimit(.minutes(2)))
    func gracefulStopOverPostgreSQL() async throws {
        let scratch = try Scratch()
        let url = try PostGISCommandLineTests.url(secret: "unused")
        #expect(try await CLI.run(["import", "places", CLI.path("Data/csulb-buildings.csv"), "--db", url]).status == 0)
        try await Self.gracefulStop(database: url, scratch: scratch)
    }
}
