import Foundation
import HTTPTypes
import Hummingbird
import Logging
import VicinityCore

/// One structured log line per request, at debug: method, path, route, status, duration. Per-request lines are
/// for finding a fault, not for running the service (at info, 1.77M requests wrote 390 MB); the access log
/// (`AccessLogMiddleware`) is the record of every request an operator keeps.
///
/// The query string and headers are never logged: they are where tokens and positions travel, and a
/// position is personal data.
struct RequestLogMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        RequestLog.received(request.head, logger: context.logger)
        do {
            let response = try await next(request, context)
            RequestLog.handled(request.head, route: context.endpointPath, status: response.status, since: start, logger: context.logger)
            return response
        } catch {
            // Only reached if an error escapes the problem middleware; the router then answers with its status.
            let status = (error as? any HTTPResponseError)?.status ?? .internalServerError
            RequestLog.handled(request.head, route: context.endpointPath, status: status, since: start, logger: context.logger)
            throw error
        }
    }
}

/// The request log's two lines, written alike for the router's answers (`RequestLogMiddleware`) and those written
/// from the event loop (`ImmediateRoutesHandler`).
enum RequestLog {
    /// At trace only: with its "Request handled", a trace shows which requests were still under way.
    static func received(_ request: HTTPRequest, logger: Logger) {
        logger.trace(
            "Request received", metadata: ["http.method": "\(request.method.rawValue)", "http.path": "\(LoggedPath(request.path))"])
    }

    static func handled(
        _ request: HTTPRequest, route: String?, status: HTTPResponse.Status, since start: ContinuousClock.Instant, logger: Logger
    ) {
        guard logger.logLevel <= .debug else { return }
        let milliseconds = (ContinuousClock.now - start).milliseconds
        logger.debug(
            "Request handled",
            metadata: [
                "http.method": "\(request.method.rawValue)",
                "http.path": "\(LoggedPath(request.path))",
                "http.route": "\(route ?? "NotFound")",
                "http.status": "\(status.code)",
                "duration_ms": "\((milliseconds * 1000).rounded() / 1000)",
            ])
    }
}

/// A request path as it may appear in a log line: without the query string, and cut short so that a
/// hostile 4 KiB path does not flood the log.
struct LoggedPath: CustomStringConvertible {
    let description: String

    /// A request target: without its query string.
    init(_ target: String?) {
        let target = target ?? ""
        self.init(path: String(target.prefix { $0 != "?" }))
    }

    init(path: String) {
        description = path.count > 256 ? String(path.prefix(256)) + "…" : path
    }
}

/// Sends HEAD answers without their content (RFC 9110 §9.3.2): the router runs the GET logic for HEAD, and this
/// keeps its status and headers, Content-Length included, so that health checkers and caches can probe any
/// endpoint. It sits outside the problem mapping, so error answers lose their content too.
struct HeadMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let response = try await next(request, context)
        return request.method == .head ? response.createHeadResponse() : response
    }
}

/// Refuses request targets and bodies beyond `HTTPOptions`' limits before any handler runs.
struct RequestLimitsMiddleware<Context: RequestContext>: RouterMiddleware {
    let options: HTTPOptions

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.uri.string.utf8.count <= options.maximumRequestTargetBytes else {
            throw APIError.requestTargetTooLong(limit: options.maximumRequestTargetBytes)
        }
        if let length = request.headers[.contentLength] {
            guard let bytes = Int(length), bytes <= options.maximumBodyBytes else {
                throw APIError.bodyTooLarge(limit: options.maximumBodyBytes)
            }
            return try await next(request, context)
        }
        guard request.headers[.transferEncoding] != nil else { return try await next(request, context) }
        // A chunked body announces no length: read at most the limit and refuse the rest.
        var request = request
        do {
            _ = try await request.collectBody(upTo: options.maximumBodyBytes)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            throw APIError.bodyTooLarge(limit: options.maximumBodyBytes)
        }
        return try await next(request, context)
    }
}

/// Finds the client's address, for limits per client address: behind trusted reverse proxies the forwarded
/// one. The context groups it (an IPv6 client is its /64, not one of its 2^64 addresses) only when a route
/// asks for it, so that routes without such limits pay nothing.
///
/// Behind a proxy every connection comes from the proxy, so without this every client would share one
/// address and one client's failed sign-ins would lock out everyone. Only when the peer is a trusted proxy is
/// `X-Forwarded-For` read: from its right end, the first address that is not a trusted proxy is the client
/// (anyone can write the left end). From any other peer the header is ignored, so that clients cannot pick
/// their own address.
struct ClientAddressMiddleware: RouterMiddleware {
    typealias Context = VicinityRequestContext
    let addressing: ClientAddressing

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.addressGroups = addressing.groups
        context.clientAddress = addressing.client(peer: context.peerAddress, forwardedFor: request.headers.forwardedFor)
        return try await next(request, context)
    }
}

extension HTTPFields {
    /// Every `X-Forwarded-For` header as one list; nil without any.
    var forwardedFor: String? {
        let list = self[values: .xForwardedFor].joined(separator: ",")
        return list.isEmpty ? nil : list
    }

    /// Every `Accept-Encoding` header as one list, for `GzipEncoding.isAccepted(by:)`.
    var acceptEncoding: String { self[values: .acceptEncoding].joined(separator: ",") }
}

extension HTTPField.Name {
    /// The de facto proxy header (nginx `$proxy_add_x_forwarded_for`): client, then each proxy but the last.
    static var xForwardedFor: Self { Self("X-Forwarded-For")! }
}
