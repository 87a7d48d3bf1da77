import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Takes out of HTTP/2 answers the fields that only HTTP/1.1 has: RFC 9113 §8.2.2 forbids connection-specific
/// fields in HTTP/2, and NIO's HTTP/2 code rejects an answer that carries one, so the stream would be reset
/// instead of answered.
///
/// The routes and the problem mapping write one answer for both protocols: `Connection: close` on a 408 or a 413
/// asks an HTTP/1.1 client to open a new connection, where HTTP/2 ends only the stream.
final class ConnectionFieldsHandler: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// RFC 9113 §8.2.2's list: `Connection` and the fields it has been used to name.
    static let connectionSpecific: [HTTPField.Name] = [
        .connection, HTTPField.Name("Keep-Alive")!, HTTPField.Name("Proxy-Connection")!, .transferEncoding,
        HTTPField.Name("Upgrade")!,
    ]

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .head(var head) = unwrapOutboundIn(data),
            Self.connectionSpecific.contains(where: { head.headerFields[$0] != nil })
        else {
            context.write(data, promise: promise)
            return
        }
        for name in Self.connectionSpecific { head.headerFields[name] = nil }
        context.write(wrapOutboundOut(.head(head)), promise: promise)
    }
}
