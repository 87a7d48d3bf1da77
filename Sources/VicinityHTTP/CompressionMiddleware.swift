import CZlib
import Foundation
import Hummingbird
import NIOCore

/// Compresses JSON and GeoJSON answers for clients that take gzip: a list of places or friends is mostly
/// repeated keys and shrinks several times, which a phone on a campus network feels. Answers the page's files
/// already compress themselves (`PageRoutes`), and streams (the event stream: no length known) pass as they are.
struct CompressionMiddleware<Context: RequestContext>: RouterMiddleware {
    /// 1 KiB: a smaller answer and its headers fit one TCP segment (1460 bytes of payload on Ethernet)
    /// compressed or not, so compressing would cost CPU and save no round trip; the small answers (a distance,
    /// a position) are sent as they are.
    static var smallest: Int { 1024 }
    /// Larger answers are rare (a long GeoJSON list) and are compressed too, up to this size held in memory.
    static var largest: Int { 8 << 20 }
    /// The media types compressed: a switch, not a set, since a generic type holds no static set and this runs
    /// for every answer.
    static func compresses(_ type: Substring) -> Bool {
        switch type {
        case "application/json", "application/geo+json", "application/problem+json": true
        default: false
        }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        guard response.headers[.contentEncoding] == nil,
            let length = response.body.contentLength, (Self.smallest...Self.largest).contains(length),
            let type = response.headers[.contentType]?.split(separator: ";").first, Self.compresses(type)
        else { return response }
        // Caches keep the compressed and the plain answer apart, whichever this one is.
        response.headers[.vary] = response.headers[.vary].map { $0 + ", Accept-Encoding" } ?? "Accept-Encoding"
        guard GzipEncoding.isAccepted(by: request.headers[values: .acceptEncoding].joined(separator: ",")) else { return response }
        let collected = Collected()
        try await response.body.write(collected)
        guard let gzipped = GzipEncoding.compress(Data(collected.buffer.readableBytesView), level: Z_BEST_SPEED) else {
            response.body = .init(byteBuffer: collected.buffer)
            return response
        }
        response.headers[.contentEncoding] = "gzip"
        response.body = .init(byteBuffer: ByteBuffer(bytes: gzipped))
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
