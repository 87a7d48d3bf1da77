import Logging
import NIOCore
import NIOPosix
import NIOSSL

/// One connection to a relay as async code sees it: each call hops to the channel's event loop, each wait is
/// bounded, and every failure comes back as an ``SMTPError`` naming the step. It logs the dialogue at debug,
/// with lines that carry a credential shown as placeholders and the message shown by its size only.
struct SMTPConnection: Sendable {
    /// TLS from the first octet (`smtps://`).
    struct ImplicitTLS: Sendable {
        var context: NIOSSLContext
        var serverHostname: String?
    }

    private let channel: any Channel
    private let handler: NIOLoopBound<SMTPReplyHandler>
    private let replyTimeout: TimeAmount
    /// Texts never logged nor put in an error, even when the relay repeats them.
    private let secrets: [String]
    private let logger: Logger

    static func open(
        host: String, port: Int, implicitTLS: ImplicitTLS?, group: any EventLoopGroup,
        connectTimeout: TimeAmount, replyTimeout: TimeAmount, secrets: [String], logger: Logger
    ) async throws(SMTPError) -> SMTPConnection {
        logger.debug("connecting", metadata: ["smtp.host": "\(host)", "smtp.port": "\(port)"])
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(connectTimeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let implicitTLS {
                        try channel.pipeline.syncOperations.addHandler(
                            NIOSSLClientHandler(context: implicitTLS.context, serverHostname: implicitTLS.serverHostname))
                    }
                    try channel.pipeline.syncOperations.addHandler(SMTPReplyHandler(eventLoop: channel.eventLoop))
                }
            }
        do {
            let channel = try await bootstrap.connect(host: host, port: port).get()
            let handler = channel.eventLoop.submit {
                NIOLoopBound(try channel.pipeline.syncOperations.handler(type: SMTPReplyHandler.self), eventLoop: channel.eventLoop)
            }
            handler.whenFailure { _ in channel.close(promise: nil) }
            return SMTPConnection(channel: channel, handler: try await handler.get(), replyTimeout: replyTimeout, secrets: secrets, logger: logger)
        } catch ChannelError.connectTimeout {
            throw SMTPError(step: .connect, reason: .timedOut)
        } catch let error as NIOConnectionError {
            // Each address tried failed; the first one's error says why (refused, unreachable), or else the name
            // did not resolve.
            let reason = error.connectionErrors.first.map { SMTPReplyHandler.reason(for: $0.error) } ?? .connectionFailed(error.description)
            throw SMTPError(step: .connect, reason: reason)
        } catch {
            throw SMTPError(step: .connect, reason: SMTPReplyHandler.reason(for: error))
        }
    }

    /// The next reply, without sending anything: the greeting.
    func reply(step: SMTPStep) async throws(SMTPError) -> SMTPReply {
        try await exchange(nil, step: step)
    }

    /// Sends one command line and reads its reply. `shown` is what the log shows in place of a line that
    /// carries a credential.
    func command(_ line: String, step: SMTPStep, shown: String? = nil) async throws(SMTPError) -> SMTPReply {
        logger.debug("C: \(shown ?? line)")
        var buffer = channel.allocator.buffer(capacity: line.utf8.count + 2)
        buffer.writeString(line)
        buffer.writeString("\r\n")
        return try await exchange(buffer, step: step)
    }

    /// Sends the message, already made transparent and ended (``SMTPData``), and reads the relay's verdict.
    func message(_ octets: [UInt8]) async throws(SMTPError) -> SMTPReply {
        logger.debug("C: <message, \(octets.count) octets>")
        return try await exchange(channel.allocator.buffer(bytes: octets), step: .message)
    }

    /// Starts TLS after the relay's 220 to STARTTLS and waits for the handshake.
    func startTLS(_ context: NIOSSLContext, serverHostname: String?) async throws(SMTPError) {
        let (handler, timeout) = (self.handler, replyTimeout)
        try await wait(handler.eventLoop.flatSubmit {
            handler.value.startTLS(context, serverHostname: serverHostname, within: timeout)
        }, step: .tlsHandshake)
        logger.debug("TLS established")
    }

    /// Waits for the handshake of TLS from the first octet.
    func handshake() async throws(SMTPError) {
        let (handler, timeout) = (self.handler, replyTimeout)
        try await wait(handler.eventLoop.flatSubmit { handler.value.handshake(within: timeout) }, step: .tlsHandshake)
        logger.debug("TLS established")
    }

    /// Whether the relay is this machine, to which credentials may go unencrypted.
    var peerIsLoopback: Bool {
        guard let address = channel.remoteAddress?.ipAddress else { return false }
        return address.hasPrefix("127.") || address == "::1" || address.hasPrefix("::ffff:127.")
    }

    /// This end's address as an RFC 5321 §4.1.3 address literal, the EHLO name of a client without a
    /// domain name (§4.1.4).
    var localAddressLiteral: String {
        guard let local = channel.localAddress, let address = local.ipAddress else { return "localhost" }
        if case .v6 = local { return "[IPv6:\(address)]" }
        return "[\(address)]"
    }

    /// Ends the connection at once; what waits fails. Safe to call more than once.
    func close() async {
        try? await channel.close()
    }

    /// For a cancelled caller: closes without waiting.
    func abort() {
        channel.close(promise: nil)
    }

    private func exchange(_ buffer: ByteBuffer?, step: SMTPStep) async throws(SMTPError) -> SMTPReply {
        let (handler, timeout) = (self.handler, replyTimeout)
        let reply = try await wait(handler.eventLoop.flatSubmit { handler.value.exchange(buffer, within: timeout) }, step: step)
            .withholding(secrets)
        logger.debug("S: \(reply)")
        return reply
    }

    private func wait<Value: Sendable>(_ future: EventLoopFuture<Value>, step: SMTPStep) async throws(SMTPError) -> Value {
        do {
            return try await future.get()
        } catch {
            let failure = SMTPError(step: step, reason: SMTPReplyHandler.reason(for: error))
            logger.debug("failed: \(failure)")
            throw failure
        }
    }
}
