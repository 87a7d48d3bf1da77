import HummingbirdCore
import Logging
import Metrics
import NIOCore
import NIOHTTP1
import Synchronization

/// HTTP/1.1 connections behind the `ConnectionGate` and the whole-request deadline.
///
/// An admitted connection is Hummingbird's own HTTP/1.1 channel with the deadline's two handlers added (one
/// in front of the HTTP decoder, which sees the first byte of each request, and one behind it, which sees the
/// request end) and the cut for clients that stop reading. A refused connection never reaches the HTTP code:
/// it is answered 503 with `Retry-After` at once and closed, so a full server keeps serving the connections it
/// has. A full server first makes room by closing the connection that has waited longest (`ConnectionGate`).
/// Accepting itself backs off for a second after a failure such as running out of descriptors (NIO's
/// `AcceptBackoffHandler`, which its server bootstrap installs), rather than trying again at once.
///
/// A connection whose set-up fails is closed here: NIO leaves a child channel whose initializer failed open.
struct GuardedHTTP1Channel: ServerChildChannel {
    enum Value: ServerChildChannelValue {
        case admitted(HTTP1Connection)
        /// Answered and closing by itself (`RefusalHandler`); nothing more to do.
        case refused(any Channel)

        var channel: any Channel {
            switch self {
            case .admitted(let connection): connection.channel
            case .refused(let channel): channel
            }
        }
    }

    let http1: HTTP1Channel
    let guarding: ConnectionGuard
    /// The routes answered from the event loop; nil for a listener whose every answer is the responder's (the
    /// redirect to TLS).
    let immediate: ImmediateRoutes?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let place: ConnectionPlace
        switch guarding.admit(channel, logger: logger) {
        case .admitted(let admitted): place = admitted
        case .refused(let refusal):
            let answer = guarding.gate.answer(to: refusal)
            let gate = guarding.gate
            return channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(RefusalHandler(answer: answer, gate: gate))
                return Value.refused(channel)
            }.flatMapErrorThrowing { error in
                channel.close(promise: nil)
                throw error
            }
        }
        let guarding = guarding, immediate = immediate
        return http1.setup(channel: channel, logger: logger).flatMapThrowing { value in
            // Taken in first, so that a failure below closes it properly.
            let connection = HTTP1Connection(value)
            try guarding.guardRequests(on: channel, behind: nil, place: place)
            try immediate?.answer(on: channel)
            try guarding.guardConnection(channel, place: place, logger: logger)
            return Value.admitted(connection)
        }.flatMapErrorThrowing { error in
            channel.close(promise: nil)
            throw error
        }
    }

    func handle(value: Value, logger: Logger) async {
        guard case .admitted(let connection) = value else { return }
        await http1.handle(value: connection.takeUp(), logger: logger)
    }
}

/// An HTTP/1.1 connection set up for Hummingbird's server, closed properly if the server never takes it up.
///
/// The server hands each connection it has set up to `handle(value:)`; one set up as the server stops is dropped
/// unhandled, and NIO traps when the writer of a dropped async channel was never finished. Since a connection's
/// requests may be answered from the event loop before the server takes it up (`ImmediateRoutesHandler`), a
/// client can be answered and leave, and the server stop, within that window. A connection dropped then, or
/// because its set-up failed after Hummingbird's part, is finished and closed here instead.
final class HTTP1Connection: Sendable {
    private let value: HTTP1Channel.Value
    private let takenUp = Atomic<Bool>(false)

    init(_ value: HTTP1Channel.Value) { self.value = value }

    var channel: any Channel { value.channel }

    /// The async channel, for the one caller that will finish it.
    func takeUp() -> HTTP1Channel.Value {
        takenUp.store(true, ordering: .releasing)
        return value
    }

    deinit {
        guard !takenUp.load(ordering: .acquiring) else { return }
        let value = value
        Task { try? await value.executeThenClose { _, _ in } }
    }
}

/// What every listener does with a new connection, whatever it speaks: admit it under the `ConnectionGate`'s caps
/// or say why not, and once admitted, put in front of it the handlers that bound what a client can hold.
struct ConnectionGuard: Sendable {
    enum Admission {
        case admitted(ConnectionPlace)
        case refused(ConnectionGate.Refusal)
    }

    let gate: ConnectionGate
    let addressing: ClientAddressing
    let requestTimeout: Duration
    let stalledReaderTimeout: Duration
    /// The longest request target or header line (`HeadLimits`).
    let lineBytes: Int

    /// A place under the caps for the connection's client, given back when the connection closes; or the refusal.
    /// The connection may later be closed to make room for a newer one (`ConnectionGate.admit`).
    func admit(_ channel: any Channel, logger: Logger) -> Admission {
        let client = addressing.connectionClient(peer: channel.remoteAddress?.ipAddress)
        switch gate.admit(client, close: { [channel, logger] in
            logger.debug("Closed the connection that waited longest, to make room for a new one")
            channel.close(promise: nil)
        }) {
        case .refused(let refusal):
            return .refused(refusal)
        case .admitted(let place):
            channel.closeFuture.whenComplete { _ in place.release() }
            return .admitted(place)
        }
    }

    /// The handlers that see the connection's bytes as they cross the socket, first in the pipeline: the place
    /// given back as the server closes, the close when the client has closed its side, and the cut for a client
    /// that stops reading.
    func guardConnection(_ channel: any Channel, place: ConnectionPlace, logger: Logger) throws {
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(StalledReaderHandler(timeout: stalledReaderTimeout, logger: logger), position: .first)
        try pipeline.addHandler(ClientGoneHandler(), position: .first)
        // First of all, so that it sees every close asked for by any handler.
        try pipeline.addHandler(PlaceReleaseHandler(place: place), position: .first)
    }

    /// The whole-request deadline and head limits of an HTTP/1.1 connection, once Hummingbird's HTTP/1.1 handlers
    /// are in: the clock and the line watch right in front of the decoder (behind `decrypting`, the TLS handler,
    /// when there is one, so that they see the request's own bytes), the head overflow's answer right behind the
    /// decoder, and the request's end behind Hummingbird's own handlers, just before the async channel that hands
    /// request parts to the router, where it also tells `place` what the connection is doing.
    func guardRequests(on channel: any Channel, behind decrypting: (any ChannelHandler)?, place: ConnectionPlace) throws {
        let pipeline = channel.pipeline.syncOperations
        let deadline = RequestDeadlineHandler(timeout: requestTimeout)
        let progress = RequestProgressHandler(deadline: deadline, place: place)
        let lineWatch = RequestLineWatch(lineBytes: lineBytes)
        let front: ChannelPipeline.SynchronousOperations.Position = decrypting.map { .after($0) } ?? .first
        // The watch goes in first, so that the deadline's handler, put in at the same spot, comes in front of it.
        try pipeline.addHandler(lineWatch, position: front)
        try pipeline.addHandler(deadline, position: front)
        let state = try pipeline.handler(type: HTTPConnectionStateHandler.self)
        try pipeline.addHandler(progress, position: .after(state))
        let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
        try pipeline.addHandler(
            HeadOverflowHandler(watch: lineWatch, progress: progress, lineBytes: lineBytes), position: .after(decoder))
    }
}

/// Answers a refused connection and closes it: the answer is written and the write side closed at once;
/// whatever the client had sent is read and dropped until it closes its side or a second has passed, so that
/// closing does not reset the connection before the client reads the answer.
final class RefusalHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    /// Long enough for a client on loopback or a LAN to read a 200-byte answer; short enough that lingering
    /// refusals (at most `ConnectionGate.lingeringRefusals`) hold few descriptors for little time.
    static let linger = TimeAmount.seconds(1)

    private let answer: ByteBuffer
    private let gate: ConnectionGate
    private var lingering = false
    private var answered = false
    private var timer: Scheduled<Void>?

    init(answer: ByteBuffer, gate: ConnectionGate) {
        self.answer = answer
        self.gate = gate
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { respond(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        respond(context: context)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event { context.close(promise: nil) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        if lingering {
            lingering = false
            gate.stoppedLingering()
        }
        context.fireChannelInactive()
    }

    private func respond(context: ChannelHandlerContext) {
        guard !answered else { return }
        answered = true
        context.writeAndFlush(NIOAny(answer), promise: nil)
        guard gate.startLingering() else {
            context.close(promise: nil)
            return
        }
        lingering = true
        context.close(mode: .output, promise: nil)
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: Self.linger) { loopBound.value.close(promise: nil) }
    }
}

/// Closes a connection as soon as its client closes its side.
///
/// Hummingbird takes a client's FIN as a half-close and keeps the connection while an answer is being
/// written; an event stream is never done, so one its client had left held its place under the connection
/// caps (and its stream under the per-person cap) until the next heartbeat failed to write, up to 25 s. No
/// client of this API half-closes and then waits for an answer: a closed side means the client is gone, as
/// nginx takes it.
final class ClientGoneHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}

/// Gives an admitted connection's place back to the gate as the server closes the connection, before the close
/// reaches the socket: a client that connects again as soon as it sees the close finds the place free, where it
/// could otherwise be refused for the place its old connection still held. A connection that ends without the
/// server asking (a reset) gives its place back once it has closed (`GuardedHTTP1Channel`).
final class PlaceReleaseHandler: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let place: ConnectionPlace

    init(place: ConnectionPlace) { self.place = place }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        // A close of the output alone (the end of an answer) leaves the connection, and its descriptor, open.
        if mode == .all { place.release() }
        context.close(mode: mode, promise: promise)
    }
}

/// Closes a connection whose client has taken none of what the server writes for `timeout`.
///
/// An answer being written keeps the idle timeout from running, so a client that asks for large answers (or
/// opens an event stream) and never reads would otherwise hold its connection, and the answers queued for it,
/// for good. The clock runs while the connection is unwritable (NIO's outbound buffer over its high-water mark,
/// 64 KiB, with the socket's own buffer full) and stops whenever the client takes some, as nginx's
/// `send_timeout` does.
final class StalledReaderHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    let timeout: Duration
    private let logger: Logger
    private var timer: Scheduled<Void>?

    init(timeout: Duration, logger: Logger) {
        self.timeout = timeout
        self.logger = logger
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            timer?.cancel()
            timer = nil
        } else if timer == nil {
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            let logger = logger
            timer = context.eventLoop.scheduleTask(in: TimeAmount(timeout)) {
                logger.debug("Closed a connection whose client stopped reading")
                Counter(label: "vicinity_connections_stalled_total").increment()
                loopBound.value.close(promise: nil)
            }
        }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        context.fireChannelInactive()
    }
}
