import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// An answer whole as soon as its handler returns: status, fields and the body in one buffer.
///
/// Routes whose work never waits (`/v1/distance`: arithmetic on the query) give one, so that the same answer can
/// be written by the router or straight from the connection's event loop (`ImmediateRoutesHandler`), without a
/// task, a response writer or the middleware chain. Either way the client gets the same bytes.
struct ImmediateAnswer: Sendable {
    var status: HTTPResponse.Status
    var headers: HTTPFields
    var body: ByteBuffer

    /// As the router writes it; `Response` adds `Content-Length`.
    var response: Response { Response(status: status, headers: headers, body: .init(byteBuffer: body)) }
}

/// Works an answer out from the request alone; a thrown error is answered by the router's problem mapping.
typealias ImmediateHandler = @Sendable (Request) throws -> ImmediateAnswer

/// The routes an HTTP/1.1 connection answers from its event loop, and what the router's middleware gives their
/// answers on the way out (the request log, `RequestMetrics`, the access log, `Strict-Transport-Security`, `Date`
/// and `Server`). One value for the server, shared by its connections' handlers.
struct ImmediateRoutes: Sendable {
    /// What `ApplicationConfiguration.serverName` puts in every answer of the router.
    static let serverName = "Vicinity"

    private let handlers: [String: ImmediateHandler]
    let metrics: RequestMetrics
    let logger: Logger
    let accessLog: AccessLog?
    let addressing: ClientAddressing
    let strictTransportSecurity: Bool
    /// `HTTPOptions.maximumRequestTargetBytes`: a longer target is the router's, which refuses it.
    private let maximumTargetBytes: Int

    init(table: RouteTable, options: HTTPOptions, metrics: RequestMetrics, logger: Logger) {
        var handlers: [String: ImmediateHandler] = [:]
        for entry in table.entries {
            if let handler = entry.immediate { handlers[entry.info.path] = handler }
        }
        self.handlers = handlers
        self.metrics = metrics
        self.logger = logger
        accessLog = options.accessLog
        addressing = options.addressing
        strictTransportSecurity = options.tls != nil
        maximumTargetBytes = options.maximumRequestTargetBytes
    }

    /// The route's path and handler for a request answered here: a GET of an immediate route's exact path that
    /// announces no body, expects nothing and asks nothing of the connection but to keep it. Every other request,
    /// HEAD and a close included, is the router's: its answers are the rule, these only a shorter way to them.
    func route(for request: HTTPRequest) -> (path: String, handler: ImmediateHandler)? {
        guard request.method == .get, let target = request.path, target.utf8.count <= maximumTargetBytes else { return nil }
        let fields = request.headerFields
        guard fields[.contentLength] == nil, fields[.transferEncoding] == nil, fields[.expect] == nil else { return nil }
        if let connection = fields[.connection], connection.lowercased() != "keep-alive" { return nil }
        let path = String(target.prefix { $0 != "?" })
        return handlers[path].map { (path, $0) }
    }

    /// Puts an `ImmediateRoutesHandler` on an HTTP/1.1 connection set up by Hummingbird and `ConnectionGuard`:
    /// behind the request's progress, the last handler in front of the channel the router reads from.
    func answer(on channel: any Channel) throws {
        let pipeline = channel.pipeline.syncOperations
        let progress = try pipeline.handler(type: RequestProgressHandler.self)
        try pipeline.addHandler(ImmediateRoutesHandler(routes: self), position: .after(progress))
    }
}
