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

    /// An answer without its `Date` line, the one field that may differ between two answers a second apart.
    static func undated(_ answer: Substring) -> String {
        answer.components(separatedBy: "\r\n").filter { !$0.hasPrefix("Date: ") }.joined(separator: "\r\n")
    }

    @Test("a distance, or a distance asked wrongly, gets the same bytes from the connection as from the router")
    func sameAnswerEitherWay() async throws {
        try await ConnectionLimitTests.withServer { port in
            for (target, ending) in [(Self.distance, #""method":"haversine"}"#), ("/v1/distance?from=33.779842", #""type":"about:blank"}"#)] {
                // Behind a request the router is answering, a second one goes to the router too, to be answered after it.
                let routed = try await RawConnection.open(port: port)
                try await routed.send("GET /health HTTP/1.1\r\nHost: a\r\n\r\nGET \(target) HTTP/1.1\r\nHost: a\r\n\r\n")
                let both = try await routed.received(containing: "}HTTP/1.1 ", within: .seconds(60))
                let pair = try await routed.received(containing: ending, within: .seconds(60))
                await routed.close()
                #expect(both.hasPrefix("HTTP/1.1 200 OK\r\n") && both.contains(#/\{"places":\d+,"status":"ok"\}HTTP\/1\.1 /#), "\(both)")
                let fromRouter = try #require(pair.range(of: "}HTTP/1.1 ").map { pair[pair.index(after: $0.lowerBound)...] })

                let alone = try await RawConnection.open(port: port)
                try await alone.send("GET \(target) HTTP/1.1\r\nHost: a\r\n\r\n")
                let answer = try await alone.received(containing: ending, within: .seconds(60))
                await alone.close()
                #expect(Self.undated(answer[...]) == Self.undated(fromRouter))
                #expect(answer.contains("\r\nServer: Vicinity\r\n"))
                let date = try #require(answer.components(separatedBy: "\r\n").first { $0.hasPrefix("Date: ") })
                #expect(date.wholeMatch(of: /Date: [A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT/) != nil, "\(date)")
            }
        }
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

        func ask(_ target: String, method: HTTPRequest.Method = .get, fields: HTTPFields = [:]) throws {
            try channel.writeInbound(HTTPRequestPart.head(HTTPRequest(method: method, scheme: "http", authority: "a", path: target, headerFields: fields)))
            try channel.writeInbound(HTTPRequestPart.end(nil))
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

    @Test("errors, HEAD, a body, a close, other paths and other methods are left to the router")
    func leftToTheRouter() throws {
        let rig = try Rig()
        let cases: [(String, HTTPRequest.Method, HTTPFields)] = [
            ("/v1/distance?from=33.779842", .get, [:]),
            (Self.distance, .head, [:]),
            (Self.distance, .get, [.connection: "close"]),
            (Self.distance, .get, [.contentLength: "0"]),
            (Self.distance, .get, [.transferEncoding: "chunked"]),
            (Self.distance, .post, [:]),
            ("/v1/distance/?from=33.779842,-118.112526&to=33.777267,-118.114777", .get, [:]),
            ("/health", .get, [:]),
        ]
        for (target, method, fields) in cases {
            try rig.ask(target, method: method, fields: fields)
            #expect(try rig.handedOn() == [target], "\(method) \(target) \(fields)")
            #expect(try rig.answered() == [])
            try rig.routerAnswers()
            _ = try rig.answered()
        }
        try rig.ask(Self.distance, fields: [.connection: "keep-alive"])
        #expect(try rig.answered() == [.ok])
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
