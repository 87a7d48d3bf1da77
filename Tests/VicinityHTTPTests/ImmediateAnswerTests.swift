import Foundation
import HTTPTypes
import Logging
import Metrics
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
import Prometheus
import Testing
import VicinityCore
@testable import VicinityHTTP

/// Routes answered from the connection's event loop (`ImmediateRoutesHandler`): the same answers as the router's,
/// in the order the requests came, counted and logged as the router's are.
@Suite("Answers from the event loop")
struct ImmediateAnswerTests {
    static let distance = "/v1/distance?from=33.779842,-118.112526&to=33.777267,-118.114777"

    /// Requests answered from the event loop over stores held in memory, rightly and wrongly asked.
    static let asked: [(target: String, fields: String)] = [
        (distance, ""),
        ("/v1/distance?from=33.779842", ""),
        ("/v1/places/nearby?lat=33.779842&lon=-118.112526&radius=500&limit=2", ""),
        ("/v1/places/nearby?lat=33.779842&lon=-118.112526&radius=500&limit=2", "Accept: application/geo+json\r\n"),
        ("/v1/places/nearby?lat=33.779842&lon=-118.112526&radius=500&fields=id,distance_m", ""),
        ("/v1/places/nearby?lat=33.779842&lon=-118.112526&radius=2000", "Accept-Encoding: gzip\r\n"),
        ("/v1/places/nearby?lat=91&lon=0", ""),
        ("/v1/places/closest?lat=33.779842&lon=-118.112526", ""),
        ("/v1/places/closest?lat=33.779842", ""),
    ]

    @Test("distances and place reads, asked rightly or wrongly, get the same answers from the connection as from the router")
    func sameAnswerEitherWay() async throws {
        let record = try await store(csulbRows)
        let stores = try await IndexedStores(record: record, at: ManualClock().now)
        try await withListening({ onListening in
            buildApplication(
                services: services(stores), port: 0, metrics: sharedRegistry, logger: LogRecorder().logger, onListening: onListening)
        }) { port in
            var statuses: Set<String> = [], encodings: Set<String> = []
            for (target, fields) in Self.asked {
                let request = "GET \(target) HTTP/1.1\r\nHost: a\r\n\(fields)\r\n"
                // Behind a request the router is answering, a second one goes to the router too, to be answered after it.
                let routed = try await RawConnection.open(port: port)
                try await routed.send("GET /health HTTP/1.1\r\nHost: a\r\n\r\n" + request)
                let pair = try await routed.answers(2, within: .seconds(60))
                await routed.close()
                try #require(pair.count == 2)
                #expect(String(buffer: pair[0]).hasSuffix(#"{"places":6,"status":"ok"}"#), "\(String(buffer: pair[0]))")

                let alone = try await RawConnection.open(port: port)
                try await alone.send(request)
                let answer = try #require(try await alone.answers(1, within: .seconds(60)).first)
                await alone.close()
                #expect(
                    Self.undated(answer) == Self.undated(pair[1]),
                    "\(target) \(fields): \(String(decoding: Self.undated(answer), as: UTF8.self)) against \(String(decoding: Self.undated(pair[1]), as: UTF8.self))")
                let head = Self.head(answer)
                #expect(head.contains("Server: Vicinity"))
                let date = try #require(head.first { $0.hasPrefix("Date: ") })
                #expect(date.wholeMatch(of: /Date: [A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT/) != nil, "\(date)")
                statuses.insert(String(head[0].prefix(12)))
                encodings.formUnion(head.filter { $0.hasPrefix("Content-Encoding: ") || $0.hasPrefix("Link: ") }.map { String($0.prefix(6)) })
            }
            #expect(statuses == ["HTTP/1.1 200", "HTTP/1.1 400"], "answers and errors both compared")
            #expect(encodings == ["Conten", "Link: "], "a compressed answer and a page with a next link among them")
        }
    }

    @Test("over places and campuses held in memory, the reads by position are answered from the event loop; over others, only distances")
    func whichRoutes() async throws {
        let record = try await store(csulbRows)
        func immediate<S: Stores>(_ stores: S) -> [String] {
            routeTable(services: services(stores), metrics: PrometheusCollectorRegistry()).entries
                .filter { $0.immediate != nil }.map(\.info.path).sorted()
        }
        #expect(immediate(try await IndexedStores(record: record, at: ManualClock().now)) == [
            "/v1/distance", "/v1/places/closest", "/v1/places/nearby",
        ])
        #expect(immediate(record) == ["/v1/distance"])
    }

    /// An answer's head lines.
    static func head(_ answer: ByteBuffer) -> [String] {
        let text = String(decoding: answer.readableBytesView, as: UTF8.self)
        return text.components(separatedBy: "\r\n\r\n")[0].components(separatedBy: "\r\n")
    }

    /// An answer's bytes without its `Date` line, the one field that may differ between two answers a second apart.
    static func undated(_ answer: ByteBuffer) -> [UInt8] {
        let bytes = Array(answer.readableBytesView)
        guard let start = bytes.firstRange(of: Array("\r\nDate: ".utf8)),
            let end = bytes[start.upperBound...].firstRange(of: Array("\r\n".utf8))
        else { return bytes }
        return Array(bytes[..<start.lowerBound] + bytes[end.lowerBound...])
    }

    /// The handler alone on a channel, over the real route table, with its own metrics registry (the process's is
    /// shared by every test, so counts there are not this test's).
    struct Rig {
        let channel: EmbeddedChannel
        let registry = PrometheusCollectorRegistry()

        init(options: HTTPOptions = .standard, logs: LogRecorder = LogRecorder()) throws {
            let table = routeTable(services: services(InMemoryStore()), options: options, metrics: registry)
            let routes = ImmediateRoutes(
                table: table, options: options, metrics: RequestMetrics(factory: PrometheusMetricsFactory(registry: registry)),
                logger: logs.logger)
            channel = EmbeddedChannel(handler: ImmediateRoutesHandler(routes: routes))
        }

        /// A request read whole; with `endingRead` false, as one of several in the same read.
        func ask(_ target: String, method: HTTPRequest.Method = .get, fields: HTTPFields = [:], endingRead: Bool = true) throws {
            let head = HTTPRequestPart.head(HTTPRequest(method: method, scheme: "http", authority: "a", path: target, headerFields: fields))
            if endingRead {
                try channel.writeInbound(head)
                try channel.writeInbound(HTTPRequestPart.end(nil))
            } else {
                channel.pipeline.syncOperations.fireChannelRead(NIOAny(head))
                channel.pipeline.syncOperations.fireChannelRead(NIOAny(HTTPRequestPart.end(nil)))
            }
        }

        /// The router's answer to a request handed on to it, as it passes the handler on its way out.
        func routerAnswers() throws {
            try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .ok)))
            try channel.writeOutbound(HTTPResponsePart.end(nil))
        }

        /// The paths of requests handed on to the router since last asked, each checked to be whole.
        func handedOn() throws -> [String] {
            var paths: [String] = []
            while let part = try channel.readInbound(as: HTTPRequestPart.self) {
                switch part {
                case .head(let head): paths.append(head.path ?? "")
                case .body: Issue.record("no request here has a body")
                case .end: break
                }
            }
            return paths
        }

        /// The statuses of answers written by the handler since last asked (the router's answers pass too, so read
        /// them before it answers).
        func answered() throws -> [HTTPResponse.Status] {
            var statuses: [HTTPResponse.Status] = []
            while let part = try channel.readOutbound(as: HTTPResponsePart.self) {
                if case .head(let head) = part { statuses.append(head.status) }
            }
            return statuses
        }

        var metricsText: String { String(decoding: registry.emitToBuffer(), as: UTF8.self) }
    }

    @Test("while the router owes an answer, later requests wait for the router too, and are answered here again once it has answered")
    func orderKept() throws {
        let rig = try Rig()
        try rig.ask(Self.distance)
        #expect(try rig.answered() == [.ok])
        #expect(try rig.handedOn() == [])

        try rig.ask("/health")
        try rig.ask(Self.distance)
        try rig.ask(Self.distance)
        #expect(try rig.handedOn() == ["/health", Self.distance, Self.distance])
        #expect(try rig.answered() == [])
        try rig.routerAnswers()
        try rig.routerAnswers()
        _ = try rig.answered()
        // One answer still owed: still the router's.
        try rig.ask(Self.distance)
        #expect(try rig.handedOn() == [Self.distance])
        try rig.routerAnswers()
        try rig.routerAnswers()
        _ = try rig.answered()
        try rig.ask(Self.distance)
        #expect(try rig.answered() == [.ok])
        #expect(try rig.handedOn() == [])
    }

    @Test("a connection that is not writable, more than sixteen requests in one read, or a request that asked to close leave the rest to the router")
    func boundedByTheClient() throws {
        let rig = try Rig()
        // A client that does not take its answers: once NIO's outbound buffer is over its mark, the router answers,
        // one at a time as the client reads.
        rig.channel.isWritable = false
        try rig.ask(Self.distance)
        #expect(try rig.handedOn() == [Self.distance])
        #expect(try rig.answered() == [])
        rig.channel.isWritable = true
        try rig.routerAnswers()
        _ = try rig.answered()

        // One read full of pipelined requests: sixteen answered here, then the router's turn.
        for _ in 0..<20 { try rig.ask(Self.distance, endingRead: false) }
        #expect(try rig.answered().count == ImmediateRoutesHandler.answersPerRead)
        #expect(try rig.handedOn().count == 20 - ImmediateRoutesHandler.answersPerRead)
        for _ in 0..<(20 - ImmediateRoutesHandler.answersPerRead) { try rig.routerAnswers() }
        _ = try rig.answered()
        rig.channel.pipeline.syncOperations.fireChannelReadComplete()
        try rig.ask(Self.distance)
        #expect(try rig.answered() == [.ok], "a new read, answered here again")

        // After a request that asked to close, whose answer ends the connection's output.
        try rig.ask("/health", fields: [.connection: "close"])
        try rig.routerAnswers()
        _ = try rig.answered()
        _ = try rig.handedOn()
        try rig.ask(Self.distance)
        #expect(try rig.handedOn() == [Self.distance])
        #expect(try rig.answered() == [])
    }

    @Test("errors, HEAD, a body, a close, other paths and other methods are left to the router")
    func leftToTheRouter() throws {
        let rig = try Rig()
        let cases: [(String, HTTPRequest.Method, HTTPFields)] = [
            ("/v1/distance?from=33.779842", .get, [:]),
            (Self.distance, .head, [:]),
            (Self.distance, .get, [.contentLength: "0"]),
            (Self.distance, .get, [.transferEncoding: "chunked"]),
            (Self.distance, .post, [:]),
            ("/v1/distance/?from=33.779842,-118.112526&to=33.777267,-118.114777", .get, [:]),
            ("/health", .get, [:]),
            // Last: after it, nothing more on the connection is answered here (`boundedByTheClient`).
            (Self.distance, .get, [.connection: "close"]),
        ]
        for (target, method, fields) in cases {
            try rig.ask(target, method: method, fields: fields)
            #expect(try rig.handedOn() == [target], "\(method) \(target) \(fields)")
            #expect(try rig.answered() == [])
            try rig.routerAnswers()
            _ = try rig.answered()
        }
        let fresh = try Rig()
        try fresh.ask(Self.distance, fields: [.connection: "keep-alive"])
        #expect(try fresh.answered() == [.ok])
    }

    @Test("answers given here count in the router's request metrics and have its request log lines, under the route")
    func counted() throws {
        let logs = LogRecorder()
        let rig = try Rig(logs: logs)
        for _ in 0..<3 { try rig.ask(Self.distance) }
        #expect(try rig.answered() == [.ok, .ok, .ok])
        let lines = rig.metricsText.split(separator: "\n")
        let series = #"{http_route="/v1/distance",http_request_method="GET",http_response_status_code="200"}"#
        #expect(lines.contains("hb_requests\(series) 3"), "\(rig.metricsText)")
        #expect(lines.contains { $0.hasPrefix("http_server_request_duration_count\(series) 3") }, "\(rig.metricsText)")
        #expect(lines.contains(#"http_server_active_requests{http_request_method="GET"} 0.0"#) || lines.contains(#"http_server_active_requests{http_request_method="GET"} 0"#), "\(rig.metricsText)")
        let handled = logs.records.filter { $0.message == "Request handled" }
        #expect(handled.count == 3)
        #expect(handled.allSatisfy {
            $0.level == .debug && $0.metadata["http.route"] == "/v1/distance" && $0.metadata["http.path"] == "/v1/distance"
                && $0.metadata["http.status"] == "200" && $0.metadata["hb.request.id"] != nil
        }, "\(handled.map(\.metadata))")
        #expect(Set(handled.compactMap { $0.metadata["hb.request.id"] }).count == 3, "one id a request")
    }

    @Test("over TLS the answers carry Strict-Transport-Security, as the router's do")
    func strictTransportSecurity() async throws {
        var options = HTTPOptions.standard
        options.tls = try await TLSServingTests.Issuer.make("immediate").tlsOptions()
        let rig = try Rig(options: options)
        try rig.ask(Self.distance)
        let head = try #require(try rig.channel.readOutbound(as: HTTPResponsePart.self))
        guard case .head(let response) = head else {
            Issue.record("an answer starts with its head")
            return
        }
        #expect(response.headerFields[.strictTransportSecurity] == "max-age=63072000")
    }

    @Test("a connection set up but never taken up by the server (it stopped first) is closed, not dropped unfinished")
    func droppedConnectionCloses() async throws {
        let channel = NIOAsyncTestingChannel()
        let value = try await channel.testingEventLoop.executeInContext {
            try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(wrappingChannelSynchronously: channel)
        }
        var connection: HTTP1Connection? = HTTP1Connection(value)
        #expect(connection?.channel === channel)
        let closed = Watched(false)
        channel.closeFuture.whenComplete { _ in closed.update { $0 = true } }
        connection = nil
        // Polled, so that a channel never closed fails the test instead of holding the run.
        for _ in 0..<600 where !closed.value { try await Task.sleep(for: .milliseconds(100)) }
        #expect(closed.value)
    }
}
