import Hummingbird
import Logging

/// One structured log line per request: method, path, route, status, duration.
///
/// The query string and headers are never logged: they are where tokens and positions travel, and a
/// position is personal data.
struct RequestLogMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            log(request, context: context, status: response.status, since: start)
            return response
        } catch {
            // Only reached if an error escapes the problem middleware; the router then answers with its status.
            let status = (error as? any HTTPResponseError)?.status ?? .internalServerError
            log(request, context: context, status: status, since: start)
            throw error
        }
    }

    private func log(_ request: Request, context: Context, status: HTTPResponse.Status, since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        context.logger.log(
            level: status.code >= 500 ? .error : .info,
            "Request handled",
            metadata: [
                "http.method": "\(request.method.rawValue)",
                "http.path": "\(LoggedPath(request.uri.path))",
                "http.route": "\(context.endpointPath ?? "NotFound")",
                "http.status": "\(status.code)",
                "duration_ms": "\((milliseconds * 1000).rounded() / 1000)",
            ])
    }
}

/// A request path as it may appear in a log line: without the query string, and cut short so that a
/// hostile 4 KiB path does not flood the log.
struct LoggedPath: CustomStringConvertible {
    let description: String

    init(_ path: String) {
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
