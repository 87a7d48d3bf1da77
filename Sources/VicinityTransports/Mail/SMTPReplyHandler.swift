import Foundation
import NIOCore
import NIOSSL
import NIOTLS

/// Why the connection cannot go on, as the channel saw it; ``SMTPConnection`` adds the step.
struct SMTPChannelFailure: Error {
    var reason: SMTPError.Reason
}

/// The one handler of a relay connection: it gathers the octets into replies and hands each to the command
/// waiting for it, under a deadline. The client sends one command at a time (no PIPELINING, RFC 2920), so at
/// most one reply is awaited at once. It runs on the channel's event loop only.
final class SMTPReplyHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private var parser = SMTPReplyParser()
    /// A reply that arrived before anyone asked (the greeting, sent at once).
    private var unread: CircularBuffer<SMTPReply> = []
    private var waitingReply: (promise: EventLoopPromise<SMTPReply>, deadline: Scheduled<Void>)?
    private var waitingHandshake: (promise: EventLoopPromise<Void>, deadline: Scheduled<Void>)?
    private var handshakeCompleted = false
    /// The first reason the connection ended; every later wait fails with it.
    private var failure: SMTPError.Reason?
    private var context: ChannelHandlerContext?
    private let eventLoop: any EventLoop

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        parser.append(buffer.readableBytesView)
        do {
            while let reply = try parser.nextReply() {
                if let waiting = waitingReply {
                    waitingReply = nil
                    waiting.deadline.cancel()
                    waiting.promise.succeed(reply)
                } else if unread.isEmpty {
                    unread.append(reply)
                } else {
                    // One command at a time gets one reply at a time; more is a relay gone astray, not kept.
                    end(because: .malformedReply("replies to commands never sent"))
                    return
                }
            }
        } catch {
            end(because: error.reason)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        end(because: .connectionClosed)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        end(because: Self.reason(for: error))
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted = event as? TLSUserEvent {
            handshakeCompleted = true
            if let waiting = waitingHandshake {
                waitingHandshake = nil
                waiting.deadline.cancel()
                waiting.promise.succeed()
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Writes the octets, if any, and answers the next reply, or fails when none comes within `timeout`.
    func exchange(_ octets: ByteBuffer?, within timeout: TimeAmount) -> EventLoopFuture<SMTPReply> {
        guard let context, failure == nil else { return ended() }
        precondition(waitingReply == nil, "one SMTP command at a time")
        if let octets { context.writeAndFlush(NIOAny(octets), promise: nil) }
        if let reply = unread.popFirst() { return context.eventLoop.makeSucceededFuture(reply) }
        let promise = context.eventLoop.makePromise(of: SMTPReply.self)
        let deadline = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { self.end(because: .timedOut) }
        waitingReply = (promise, deadline)
        return promise.futureResult
    }

    /// Puts TLS in front of this handler, after the relay's 220 to STARTTLS, and answers when the handshake
    /// is done (RFC 3207 §4).
    func startTLS(_ tls: NIOSSLContext, serverHostname: String?, within timeout: TimeAmount) -> EventLoopFuture<Void> {
        guard let context, failure == nil else { return ended() }
        // Octets sent after the 220 and before the handshake would be read as if they came encrypted: a
        // relay, or someone in between, injecting commands. Nothing may come there.
        guard unread.isEmpty, !parser.hasBufferedOctets else {
            end(because: .tlsFailed("the relay sent octets between its STARTTLS reply and the handshake"))
            return ended()
        }
        do {
            let handler = try NIOSSLClientHandler(context: tls, serverHostname: serverHostname)
            try context.pipeline.syncOperations.addHandler(handler, position: .first)
        } catch {
            end(because: Self.reason(for: error))
            return ended()
        }
        return handshake(within: timeout)
    }

    /// Answers when the TLS handshake is done: at once if it already is (TLS from the first octet).
    func handshake(within timeout: TimeAmount) -> EventLoopFuture<Void> {
        guard let context, failure == nil else { return ended() }
        if handshakeCompleted { return context.eventLoop.makeSucceededVoidFuture() }
        let promise = context.eventLoop.makePromise(of: Void.self)
        let deadline = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { self.end(because: .timedOut) }
        waitingHandshake = (promise, deadline)
        return promise.futureResult
    }

    /// Records why the connection ends, fails whatever waits, and closes the channel: after a timeout or a
    /// garbled reply the dialogue cannot go on in step.
    private func end(because reason: SMTPError.Reason) {
        if failure == nil { failure = reason }
        let error = SMTPChannelFailure(reason: failure ?? reason)
        if let waiting = waitingReply {
            waitingReply = nil
            waiting.deadline.cancel()
            waiting.promise.fail(error)
        }
        if let waiting = waitingHandshake {
            waitingHandshake = nil
            waiting.deadline.cancel()
            waiting.promise.fail(error)
        }
        context?.close(promise: nil)
    }

    /// A wait on a connection that has ended (or whose handler has left the pipeline, which happens only
    /// once the channel closed) fails at once, with the reason it ended.
    private func ended<Value>() -> EventLoopFuture<Value> {
        eventLoop.makeFailedFuture(SMTPChannelFailure(reason: failure ?? .connectionClosed))
    }

    /// What an error from the channel means for the dialogue.
    static func reason(for error: any Error) -> SMTPError.Reason {
        switch error {
        case let failure as SMTPChannelFailure: failure.reason
        case NIOSSLError.uncleanShutdown: .connectionClosed
        case NIOSSLError.handshakeFailed(.sslError(let stack)): .tlsFailed("handshake failed: " + stack.map(reason).joined(separator: ", "))
        case let error as NIOSSLError: .tlsFailed(String(describing: error))
        case let error as NIOSSLExtraError: .tlsFailed(String(describing: error))
        case let error as BoringSSLError: .tlsFailed(String(describing: error))
        case ChannelError.eof, ChannelError.ioOnClosedChannel, ChannelError.alreadyClosed: .connectionClosed
        case let error as IOError: .connectionFailed("\(String(cString: strerror(error.errnoCode))) (errno \(error.errnoCode))")
        default: .connectionFailed(String(describing: error))
        }
    }

    /// BoringSSL's reason, `CERTIFICATE_VERIFY_FAILED`, out of `error:1000007d:SSL routines:...:REASON at FILE:LINE`.
    private static func reason(_ error: BoringSSLInternalError) -> String {
        var text = "\(error)"
        if let place = text.firstRange(of: " at ") { text = String(text[..<place.lowerBound]) }
        return text.split(separator: ":").last.map(String.init) ?? text
    }
}
