import CZlib
import Foundation
import Hummingbird
import NIOCore

/// Compresses JSON and GeoJSON answers for clients that take gzip: a list of places or friends is mostly
/// repeated keys and shrinks several times, which a phone on a campus network feels. Answers the page's files
/// already compress themselves (`PageRoutes`), and streams (the event stream: no length known) pass as they are.
struct CompressionMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        guard AnswerCompression.varies(&response.headers, length: response.body.contentLength),
            GzipEncoding.isAccepted(by: request.headers.acceptEncoding)
        else { return response }
        let collected = Collected()
        try await response.body.write(collected)
        guard let gzipped = AnswerCompression.gzipped(collected.buffer, headers: &response.headers) else {
            response.body = .init(byteBuffer: collected.buffer)
            return response
        }
        response.body = .init(byteBuffer: gzipped)
        return response
    }

    /// The bytes a body writes, kept: a reference, since the body consumes the writer it is given.
    private final class Collected: ResponseBodyWriter, @unchecked Sendable {
        var buffer = ByteBuffer()

        func write(_ buffer: ByteBuffer) async throws {
            var buffer = buffer
            self.buffer.writeBuffer(&buffer)
        }

        func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }
}

/// Which answers are compressed and how: one rule for the router's answers (`CompressionMiddleware`) and those
/// written from the event loop (`ImmediateRoutesHandler`).
enum AnswerCompression {
    /// 1 KiB: a smaller answer and its headers fit one TCP segment (1460 bytes of payload on Ethernet)
    /// compressed or not, so compressing would cost CPU and save no round trip; the small answers (a distance,
    /// a position) are sent as they are.
    static var smallest: Int { 1024 }
    /// Larger answers are rare (a long GeoJSON list) and are compressed too, up to this size held in memory.
    static var largest: Int { 8 << 20 }
    /// The media types compressed: a switch, not a set: this runs for every answer.
    static func compresses(_ type: Substring) -> Bool {
        switch type {
        case "application/json", "application/geo+json", "application/problem+json": true
        default: false
        }
    }

    /// Whether an answer with these fields and this length is compressed for clients that
    /// take gzip; when it is, `Vary: Accept-Encoding` is added, since caches must keep the compressed and the plain
    /// answer apart, whichever this one is.
    static func varies(_ headers: inout HTTPFields, length: Int?) -> Bool {
        guard headers[.contentEncoding] == nil,
            let length, (smallest...largest).contains(length),
            let type = headers[.contentType]?.split(separator: ";").first, compresses(type)
        else { return false }
        headers[.vary] = headers[.vary].map { $0 + ", Accept-Encoding" } ?? "Accept-Encoding"
        return true
    }

    /// The body gzipped, with `Content-Encoding` set; nil (and the fields as they were) when zlib fails or the
    /// result is not smaller.
    static func gzipped(_ body: ByteBuffer, headers: inout HTTPFields) -> ByteBuffer? {
        guard let gzipped = GzipEncoding.compress(Data(body.readableBytesView), level: Z_BEST_SPEED) else { return nil }
        headers[.contentEncoding] = "gzip"
        return ByteBuffer(bytes: gzipped)
    }
}
