import HTTPTypes
import HummingbirdCore
import Metrics
import NIOCore
import NIOHTTPTypes

/// The whole-request deadline: from the first byte of a request to its last, headers and body together.
///
/// The idle timeout alone cannot cut a client that sends a byte every few seconds, since each byte is
/// activity; this clock is not reset by anything the client sends. It starts at the first byte read while no
/// request is being read, and stops when the decoder has read the request's end; the time the server takes
/// to answer is not counted. When it runs out:
/// - before the request head is complete, nothing has reached the router: the handler writes a 408
///   problem+json itself and closes the connection (or only closes it, while an earlier pipelined request is
///   still being answered, whose answer those bytes would corrupt);
/// - once the head has been handed on, the router owns the answer: `RequestProgressHandler` ends the body
///   stream with `RequestTimedOut`, the handler reading the body fails with it, and the problem mapping
///   answers 408 with `Connection: close`. A handler that never reads the body has answered already, and the
///   connection closes when the server goes to skip the rest of it.
///
/// Both handlers run on the connection's event loop, so their shared state needs no lock.
///
/// One timer serves a connection's requests: it is set for the deadline of the request being read when none is
/// set, and left running when that request ends; when it fires it cuts the request then being read if that one's
/// deadline has passed, and is set again for that one's deadline otherwise. A deadline is never earlier than the
/// one the timer was set for (requests start in order), so none is missed; and a request costs a clock reading
/// instead of a timer set and cancelled, which was a tenth of an answer's CPU at the HTTP floor.
final class RequestDeadlineHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private enum State {
        case idle
        case reading(headRead: Bool, deadline: NIODeadline)
        case expired
    }

    let timeout: Duration
    private var state = State.idle
    private var timer: Scheduled<Void>?
    private var context: ChannelHandlerContext?
    fileprivate weak var progress: RequestProgressHandler?

    init(timeout: Duration) { self.timeout = timeout }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }

    func handlerRemoved(context: ChannelHandlerContext) {
        stopClock()
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .idle = state { startClock(headRead: false, eventLoop: context.eventLoop) }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        stopClock()
        context.fireChannelInactive()
    }

    /// A head can come with no new bytes: a pipelined request's, read from what came with the one before.
    fileprivate func headRead() {
        switch state {
        case .reading(_, let deadline): state = .reading(headRead: true, deadline: deadline)
        case .idle: if let context { startClock(headRead: true, eventLoop: context.eventLoop) }
        case .expired: break
        }
    }

    private func startClock(headRead: Bool, eventLoop: any EventLoop) {
        let deadline = NIODeadline.now() + TimeAmount(timeout)
        state = .reading(headRead: headRead, deadline: deadline)
        if timer == nil { setTimer(for: deadline, eventLoop: eventLoop) }
    }

    private func setTimer(for deadline: NIODeadline, eventLoop: any EventLoop) {
        let loopBound = NIOLoopBound(self, eventLoop: eventLoop)
        timer = eventLoop.scheduleTask(deadline: deadline) { loopBound.value.timerFired() }
    }

    private func timerFired() {
        timer = nil
        guard case .reading(_, let deadline) = state, let context else { return }
        if deadline <= .now() {
            expire()
        } else {
            setTimer(for: deadline, eventLoop: context.eventLoop)
        }
    }

    /// The timer stays: when it fires it finds no request, or a later one to wait for.
    fileprivate func requestRead() {
        if case .reading = state { state = .idle }
    }

    private func stopClock() {
        timer?.cancel()
        timer = nil
        state = .idle
    }

    private func expire() {
        guard case .reading(let headRead, _) = state, let context else { return }
        state = .expired
        Counter(label: "vicinity_requests_timed_out_total").increment()
        if headRead, let progress {
            progress.fail(RequestTimedOut(limit: timeout))
        } else if progress?.answersOwed ?? 0 > 0 {
            // An earlier request is still being answered: bytes written here would land inside that answer.
            context.close(promise: nil)
        } else {
            let answer = Problem(APIError.requestTimeout(limit: timeout)).rawResponse()
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            context.writeAndFlush(NIOAny(answer)).whenComplete { _ in loopBound.value.close(promise: nil) }
        }
    }
}

/// Tells `RequestDeadlineHandler` when a request's head and end have been read, and when the deadline runs out
/// after the head, fails the request's body stream and closes the connection once the answer is written (or
/// after `longestAnswer`, if none comes): the client is still sending, and would otherwise hold the connection
/// as long as it keeps a byte coming.
///
/// It also tells the connection's place under the cap what the connection is doing (`ConnectionGate.Standing`):
/// opening until the connection is active, then answering from the moment a request has been read in full until
/// its answer's end is written, an event stream once an answer's head says `text/event-stream`, and waiting
/// otherwise.
final class RequestProgressHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let deadline: RequestDeadlineHandler
    private let place: ConnectionPlace
    private var context: ChannelHandlerContext?
    private var failed = false
    private var fallbackClose: Scheduled<Void>?
    /// Requests whose head has been read and whose answer has not been written to its end.
    private(set) var answersOwed = 0
    /// Once the deadline has cut a request: the answers still to be written before the connection closes, those
    /// owed when it ran out. An earlier pipelined request may still be being answered; the cut one's 408 ends it.
    private var answersBeforeClose = 0
    /// Requests read to their end, and answers written to theirs: while more have been read, one is being answered.
    private var requestsRead = 0
    private var answersEnded = 0
    private var streaming = false
    private var standing = ConnectionGate.Standing.opening
    /// What `whenAnswered` waits to run.
    private var afterAnswers: (() -> Void)?

    init(deadline: RequestDeadlineHandler, place: ConnectionPlace) {
        self.deadline = deadline
        self.place = place
        deadline.progress = self
    }

    private func updateStanding() {
        let now: ConnectionGate.Standing = streaming ? .streaming : requestsRead > answersEnded ? .answering : .waiting
        guard now != standing else { return }
        standing = now
        place.set(now)
    }

    /// Over TLS the handler comes in after the handshake, when the connection is long active.
    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { updateStanding() }
    }

    /// From here on the connection is the HTTP server's, and may be closed to make room.
    func channelActive(context: ChannelHandlerContext) {
        updateStanding()
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        fallbackClose?.cancel()
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            answersOwed += 1
            deadline.headRead()
        case .body: break
        case .end:
            deadline.requestRead()
            requestsRead += 1
            updateStanding()
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        var promise = promise
        switch unwrapOutboundIn(data) {
        case .head(let head):
            if head.headerFields[.contentType]?.hasPrefix(Self.eventStreamType) == true {
                streaming = true
                updateStanding()
            }
            context.write(data, promise: promise)
            return
        case .body:
            context.write(data, promise: promise)
            return
        case .end:
            // The connection may make room for a newcomer only once the answer is on the socket: closing it drops
            // whatever is still queued.
            let written = promise ?? context.eventLoop.makePromise()
            let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
            written.futureResult.whenComplete { _ in loopBound.value.answerWritten() }
            promise = written
        }
        answersOwed = max(0, answersOwed - 1)
        if failed { answersBeforeClose -= 1 }
        guard failed, answersBeforeClose <= 0 else {
            context.write(data, promise: promise)
            if answersOwed == 0, let action = afterAnswers {
                afterAnswers = nil
                action()
            }
            return
        }
        let written = promise ?? context.eventLoop.makePromise()
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        written.futureResult.whenComplete { _ in loopBound.value.close(promise: nil) }
        context.writeAndFlush(data, promise: written)
    }

    private func answerWritten() {
        answersEnded += 1
        streaming = false
        updateStanding()
    }

    /// Runs `action` once every request read so far has its answer's end written: at once when none is owed.
    /// For answers written in front of the HTTP encoder (`HeadOverflowHandler`), which must not land inside
    /// an earlier pipelined request's answer.
    func whenAnswered(_ action: @escaping () -> Void) {
        guard answersOwed > 0 else {
            action()
            return
        }
        afterAnswers = action
    }

    fileprivate func fail(_ error: RequestTimedOut) {
        guard let context else { return }
        failed = true
        answersBeforeClose = answersOwed
        context.fireErrorCaught(error)
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        fallbackClose = context.eventLoop.scheduleTask(in: TimeAmount(max(error.limit, Self.longestAnswer))) {
            loopBound.value.close(promise: nil)
        }
    }

    /// How long the router has to write its 408 before the connection is closed without it: far longer than
    /// answering takes, even on a loaded machine.
    static let longestAnswer = Duration.seconds(30)

    /// The media type of Server-Sent Events (HTML Living Standard §9.2), what `GET /v1/events` answers with.
    static let eventStreamType = "text/event-stream"
}

/// The request did not arrive in full within the deadline; mapped to 408 in `Problem(for:)`.
struct RequestTimedOut: Error, Hashable, Sendable {
    let limit: Duration
}

/// The whole-request deadline on an HTTP/2 stream, which carries one request: the clock starts as the stream
/// opens (its first frame is the request head) and stops when the request's end has been read.
///
/// A client can no more trickle a body over HTTP/2 than over HTTP/1.1 (`RequestDeadlineHandler`): when the time
/// is up, the request's body stream fails with `RequestTimedOut`, which the problem mapping answers 408, and the
/// stream is reset once that answer is written, or after `RequestProgressHandler.longestAnswer` if none comes.
/// Only the stream ends; the connection's other streams go on.
final class StreamDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    let timeout: Duration
    private var timer: Scheduled<Void>?
    private var fallbackClose: Scheduled<Void>?
    private var failed = false

    init(timeout: Duration) { self.timeout = timeout }

    func handlerAdded(context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: TimeAmount(timeout)) {
            let (handler, context) = loopBound.value
            handler.expire(context: context)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) { stopClocks() }

    func channelInactive(context: ChannelHandlerContext) {
        stopClocks()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .end = unwrapInboundIn(data) {
            timer?.cancel()
            timer = nil
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard failed, case .end = unwrapOutboundIn(data) else {
            context.write(data, promise: promise)
            return
        }
        let written = promise ?? context.eventLoop.makePromise()
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        written.futureResult.whenComplete { _ in loopBound.value.close(promise: nil) }
        context.writeAndFlush(data, promise: written)
    }

    private func expire(context: ChannelHandlerContext) {
        timer = nil
        failed = true
        Counter(label: "vicinity_requests_timed_out_total").increment()
        context.fireErrorCaught(RequestTimedOut(limit: timeout))
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        fallbackClose = context.eventLoop.scheduleTask(in: TimeAmount(max(timeout, RequestProgressHandler.longestAnswer))) {
            loopBound.value.close(promise: nil)
        }
    }

    private func stopClocks() {
        timer?.cancel()
        timer = nil
        fallbackClose?.cancel()
        fallbackClose = nil
    }
}
