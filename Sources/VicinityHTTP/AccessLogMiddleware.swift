import HTTPTypes
import Hummingbird
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes one access log line (`AccessLogLine`) a request, once its answer's last byte has been handed to the
/// connection: the outermost middleware, so the status is the one the client gets and the bytes are the body it
/// got. An event stream's line is written when the stream ends, as nginx logs a request when it is done.
struct AccessLogMiddleware: RouterMiddleware {
    typealias Context = VicinityRequestContext

    let log: AccessLog
    let addressing: ClientAddressing

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        var line = AccessLogLine(
            client: addressing.client(peer: context.peerAddress, forwardedFor: request.headers.forwardedFor),
            arrival: time(nil), method: request.method.rawValue, path: request.uri.path, status: 0, bodyBytes: 0,
            duration: .zero)
        var response: Response
        do {
            response = try await next(request, context)
        } catch {
            // Only reached if an error escapes the problem middleware; the router then answers with its status.
            line.status = (error as? any HTTPResponseError)?.status.code ?? HTTPResponse.Status.internalServerError.code
            line.duration = ContinuousClock.now - start
            log.record(line.text)
            throw error
        }
        line.status = response.status.code
        let body = response.body, log = log, answered = line
        response.body = ResponseBody(contentLength: body.contentLength) { writer in
            let counting = CountingWriter(base: writer)
            var line = answered
            do {
                try await body.write(counting)
            } catch {
                line.bodyBytes = counting.count.bytes
                line.duration = ContinuousClock.now - start
                log.record(line.text)
                throw error
            }
            line.bodyBytes = counting.count.bytes
            line.duration = ContinuousClock.now - start
            log.record(line.text)
        }
        return response
    }
}

/// A body writer that counts the bytes it passes on.
private struct CountingWriter: ResponseBodyWriter {
    /// Shared with the middleware, which reads it once the body is written; one task uses both.
    final class Count {
        var bytes = 0
    }

    var base: any ResponseBodyWriter
    let count = Count()

    mutating func write(_ buffer: ByteBuffer) async throws {
        count.bytes += buffer.readableBytes
        try await base.write(buffer)
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
        try await base.finish(trailingHeaders)
    }
}
