import CoreMetrics
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTPTypes

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Answers the immediate routes' requests (`ImmediateRoutes`) on the connection's event loop, where they are read,
/// and hands every other request on to Hummingbird's router.
///
/// Behind Hummingbird's router, an answer waits for a task to be scheduled, goes through seven middlewares and a
/// response writer, and hops back to the event loop to be written: for `/v1/distance` that was most of the CPU
/// an answer cost (docs/BENCHMARKS.md, "The HTTP floor, layer by layer"). Here it is the route's own handler and
/// one write. The answer is the router's own (the same handler, `ImmediateAnswer`), with what the router's
/// middleware would give it: the request log, `RequestMetrics`, the access log, `Vary` and gzip
/// (`AnswerCompression`), `Strict-Transport-Security`, `Date` and `Server`. Errors are not answered here: a
/// handler that throws hands the request on, and the router's problem mapping answers it.
///
/// It sits last in the pipeline, right in front of the channel Hummingbird reads requests from, so that every
/// handler in front of it (the connection gate's standing, the request deadline, the idle timeout, the close at
/// shutdown) sees its requests and answers as it sees the router's.
///
/// Invariant: answers leave in the order requests came (HTTP/1.1 has no other way to pair them). A request is
/// answered here only when the router owes no answer on this connection; after a request handed on, every later
/// one is handed on too until the router has written that answer's end.
///
/// What a client can make it hold is bounded as on the router's way: a request is answered here only while the
/// connection is writable (NIO's outbound buffer under its high-water mark, 64 KiB), and at most
/// `answersPerRead` in one read; the rest go to the router, which answers one at a time, waits for the client to
/// take each answer, and stops reading while requests queue. So a client that pipelines requests and never reads
/// holds one answer beyond the mark, not one per request, and one read full of pipelined requests does not keep
/// the event loop from its other connections. After a request that asked to close the connection, nothing more
/// is answered here: the router closes the output once that answer is out.
final class ImmediateRoutesHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// A request to be answered here once its end is read.
    private struct Held {
        var head: HTTPRequest
        var path: String
        var handler: ImmediateHandler
        var start: ContinuousClock.Instant
        var arrival: time_t
    }

    /// Answers written here within one read. A client that does not pipeline sends one request a read; 16 lets
    /// a pipelining one go on quickly while each read costs the event loop at most sixteen answers' work.
    static let answersPerRead = 16

    private let routes: ImmediateRoutes
    /// Requests handed on to the router whose answers have not been written to their end.
    private var owedByRouter = 0
    private var answeredThisRead = 0
    /// Once a request handed on asked to close the connection.
    private var closing = false
    private var held: Held?
    private var date = HTTPDate()
    /// The connection's own copies of the series it records in, so that an answer takes no lock to find them.
    private lazy var underWay = routes.metrics.underWay(.get)
    private var series: [RequestMetrics.Key: RequestMetrics.Series] = [:]

    init(routes: ImmediateRoutes) {
        self.routes = routes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            if owedByRouter == 0, held == nil, !closing, answeredThisRead < Self.answersPerRead, context.channel.isWritable,
                let route = routes.route(for: head)
            {
                held = Held(
                    head: head, path: route.path, handler: route.handler, start: .now, arrival: time(nil))
                return
            }
            noteHandedOn(head)
            context.fireChannelRead(data)
        case .body:
            // A held request announced no body, so the decoder sends none; should one come, the router takes all.
            if let held = held.take() { handOn(held.head, context: context) }
            context.fireChannelRead(data)
        case .end:
            guard let held = held.take() else {
                context.fireChannelRead(data)
                return
            }
            if !answer(held, context: context) {
                handOn(held.head, context: context)
                context.fireChannelRead(data)
            }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        answeredThisRead = 0
        context.fireChannelReadComplete()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { owedByRouter = max(0, owedByRouter - 1) }
        context.write(data, promise: promise)
    }

    private func handOn(_ head: HTTPRequest, context: ChannelHandlerContext) {
        noteHandedOn(head)
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }

    private func noteHandedOn(_ head: HTTPRequest) {
        owedByRouter += 1
        if let connection = head.headerFields[.connection], connection.lowercased().contains("close") { closing = true }
    }

    /// Writes the answer; false when the handler threw, for the router to answer.
    private func answer(_ held: Held, context: ChannelHandlerContext) -> Bool {
        let underWay = underWay
        underWay.increment()
        defer { underWay.decrement() }
        var logger = routes.logger
        // As Hummingbird's own request logger, for the request log's lines; made only when they are written.
        if logger.logLevel <= .debug { logger[metadataKey: "hb.request.id"] = .stringConvertible(RequestID()) }
        guard let answer = try? held.handler(Request(head: held.head, body: RequestBody(buffer: ByteBuffer()))) else {
            return false
        }
        // Only now: a request handed on to the router is logged there.
        RequestLog.received(held.head, logger: logger)
        var headers = answer.headers
        var body = answer.body
        // Fields in the router's order: `Response` puts in the length, compression then adds to it.
        headers[.contentLength] = String(body.readableBytes)
        if AnswerCompression.varies(&headers, length: body.readableBytes),
            GzipEncoding.isAccepted(by: held.head.headerFields.acceptEncoding),
            let gzipped = AnswerCompression.gzipped(body, headers: &headers)
        {
            body = gzipped
        }
        headers[.contentLength] = String(body.readableBytes)
        if routes.strictTransportSecurity { headers[.strictTransportSecurity] = StrictTransportSecurityMiddleware<VicinityRequestContext>.value }
        headers[.date] = date.now()
        headers[.server] = ImmediateRoutes.serverName
        let bodyBytes = body.readableBytes
        context.write(wrapOutboundOut(.head(HTTPResponse(status: answer.status, headerFields: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        answeredThisRead += 1
        let elapsed = ContinuousClock.now - held.start

        let key = RequestMetrics.Key(route: held.path, method: .get, status: answer.status)
        let found: RequestMetrics.Series
        if let kept = series[key] {
            found = kept
        } else {
            found = routes.metrics.series(key)
            series[key] = found
        }
        found.answered(after: elapsed)
        RequestLog.handled(held.head, route: held.path, status: answer.status, since: held.start, logger: logger)
        if let accessLog = routes.accessLog {
            let line = AccessLogLine(
                client: routes.addressing.client(
                    peer: context.channel.remoteAddress?.ipAddress, forwardedFor: held.head.headerFields.forwardedFor),
                arrival: held.arrival, method: held.head.method.rawValue, path: held.path, status: answer.status.code,
                bodyBytes: bodyBytes, duration: elapsed)
            accessLog.record(line.text)
        }
        return true
    }
}
