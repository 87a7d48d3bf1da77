import HummingbirdCore
import HummingbirdHTTP2
import Logging
import NIOCore
import NIOHTTP2
import NIOSSL
import NIOTLS

/// TLS connections behind the same `ConnectionGate` and deadlines as plain ones, speaking HTTP/2 or HTTP/1.1 as
/// the client chose by ALPN.
///
/// Each connection is served with the certificate current when it is accepted (`TLSCertificates`), so a reload
/// reaches new handshakes at once and leaves open connections as they are. After the handshake, HTTP/1.1 is
/// Hummingbird's own channel with the whole-request deadline behind the TLS handler; HTTP/2 is Hummingbird's
/// HTTP/2 channel, its place under the cap told whether any stream is open (`HTTP2StandingHandler`), each
/// stream with its own deadline (`StreamDeadlineHandler`) and without the connection-level fields HTTP/2 forbids
/// (`ConnectionFieldsHandler`). A connection still in its handshake may make room for a newcomer, and is closed
/// if the handshake has not ended within the request deadline.
///
/// A refused connection is closed before any handshake. Answering it 503, as a plain connection is, would cost a
/// handshake (a signature with the server's key) for every refusal: the work a flood would have the server do.
struct GuardedTLSChannel: ServerChildChannel {
    typealias Negotiated = NIONegotiatedHTTPVersion<HTTP1Connection, HTTP2Channel.Value>

    enum Value: ServerChildChannelValue {
        /// The protocol the client chose, known once the handshake is done.
        case admitted(any Channel, EventLoopFuture<Negotiated>)
        /// Closed at once; nothing more to do.
        case refused(any Channel)

        var channel: any Channel {
            switch self {
            case .admitted(let channel, _): channel
            case .refused(let channel): channel
            }
        }
    }

    let http1: HTTP1Channel
    let http2: HTTP2Channel
    let certificates: TLSCertificates
    let guarding: ConnectionGuard
    /// The routes HTTP/1.1 connections answer from the event loop.
    let immediate: ImmediateRoutes

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        guard case .admitted(let place) = guarding.admit(channel, logger: logger) else {
            channel.close(promise: nil)
            return channel.eventLoop.makeSucceededFuture(.refused(channel))
        }
        let http1 = http1, http2 = http2, guarding = guarding, immediate = immediate
        return channel.eventLoop.makeCompletedFuture {
            let pipeline = channel.pipeline.syncOperations
            let tls = NIOSSLServerHandler(context: certificates.current.context)
            try pipeline.addHandler(tls)
            try guarding.guardConnection(channel, place: place, logger: logger)
            // Until a protocol is agreed nothing of the HTTP server holds the connection, so it may make room for
            // a newcomer as an idle one does; and a handshake gets no longer than a whole request would.
            place.set(.waiting)
            let handshakeDeadline = channel.eventLoop.scheduleTask(in: TimeAmount(guarding.requestTimeout)) {
                channel.close(promise: nil)
            }
            let negotiation = NIOTypedApplicationProtocolNegotiationHandler<Negotiated> { result in
                switch result {
                case .negotiated("h2"):
                    return http2.setup(channel: channel, logger: logger).flatMapThrowing { value in
                        try channel.pipeline.syncOperations.addHandler(HTTP2StandingHandler(place: place))
                        return .http2(value)
                    }
                case .negotiated("http/1.1"), .fallback:
                    return http1.setup(channel: channel, logger: logger).flatMapThrowing { value in
                        let connection = HTTP1Connection(value)
                        try guarding.guardRequests(on: channel, behind: tls, place: place)
                        try immediate.answer(on: channel)
                        return .http1_1(connection)
                    }
                case .negotiated:
                    // Only the protocols offered can be chosen; anything else is a broken client.
                    return channel.close().flatMap { channel.eventLoop.makeFailedFuture(NIOHTTP2Errors.invalidALPNToken()) }
                }
            }
            try pipeline.addHandler(negotiation)
            // Agreed or failed, the handshake is over.
            negotiation.protocolNegotiationResult.whenComplete { _ in handshakeDeadline.cancel() }
            return Value.admitted(channel, negotiation.protocolNegotiationResult)
        }.flatMapErrorThrowing { error in
            channel.close(promise: nil)
            throw error
        }
    }

    func handle(value: Value, logger: Logger) async {
        guard case .admitted(let channel, let negotiated) = value else { return }
        do {
            switch try await negotiated.get() {
            case .http1_1(let connection): await http1.handle(value: connection.takeUp(), logger: logger)
            case .http2(let connection): await http2.handle(value: connection, logger: logger)
            }
        } catch {
            // A failed handshake (a client that trusts another authority, speaks too old a TLS or is not TLS at all)
            // is the client's business; the connection is closed by now.
            logger.debug("TLS connection ended before a protocol was agreed", metadata: ["error": "\(error)"])
            channel.close(promise: nil)
        }
    }
}

/// Tells an HTTP/2 connection's place under the cap what it is doing: answering while any stream is open,
/// waiting (and so the first to make room for a newcomer) while none is. An event stream counts as answering:
/// the per-person cap on streams bounds those.
///
/// Streams say so themselves (`HTTP2StreamPresence`, on every stream): Hummingbird's HTTP/2 multiplexer is the
/// inline one, which keeps NIO's stream-created and stream-closed events to itself rather than passing them
/// down the connection's pipeline.
final class HTTP2StandingHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = Any

    private let place: ConnectionPlace
    private var open = 0

    init(place: ConnectionPlace) { self.place = place }

    func handlerAdded(context: ChannelHandlerContext) { place.set(open > 0 ? .answering : .waiting) }

    func streamOpened() {
        open += 1
        if open == 1 { place.set(.answering) }
    }

    func streamClosed() {
        open = max(0, open - 1)
        if open == 0 { place.set(.waiting) }
    }
}

/// On every HTTP/2 stream: tells its connection's `HTTP2StandingHandler` that a stream is open, from the
/// stream's creation until its channel goes. A stream shares its connection's event loop, so both handlers are
/// only ever touched there.
final class HTTP2StreamPresence: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = Any

    private var standing: HTTP2StandingHandler?

    func handlerAdded(context: ChannelHandlerContext) {
        standing = try? context.channel.parent?.pipeline.syncOperations.handler(type: HTTP2StandingHandler.self)
        standing?.streamOpened()
    }

    func handlerRemoved(context: ChannelHandlerContext) { leave() }

    func channelInactive(context: ChannelHandlerContext) {
        leave()
        context.fireChannelInactive()
    }

    private func leave() {
        standing?.streamClosed()
        standing = nil
    }
}
