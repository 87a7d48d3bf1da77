import Logging
import NIOCore
import NIOPosix
import NIOSSL

/// Delivers one message to the mail relay: the seam an outbox sends through, and a test double stands in for.
public protocol MailSender: Sendable {
    /// Returns once the relay has taken the message; throws an ``SMTPError`` whose disposition says whether
    /// to try again.
    func send(_ message: MailMessage) async throws(SMTPError)
}

/// Submits mail to one relay over SMTP (RFC 5321, RFC 6409), a connection a message: greeting, EHLO,
/// STARTTLS (RFC 3207) and EHLO again as the policy says, AUTH PLAIN or LOGIN (RFC 4954) when credentials are
/// configured, MAIL FROM, RCPT TO, DATA, QUIT. Every reply is checked and every wait bounded.
///
/// A message counts as sent once the relay accepts its data; a failure after that (a lost connection at
/// QUIT) is logged, not thrown, so that the message is not sent twice. A timeout while the relay judges the
/// data can still mean it was taken: the sender retries, and delivery is at least once.
public struct SMTPClient: MailSender {
    public let configuration: SMTPConfiguration
    private let tls: NIOSSLContext?
    private let group: any EventLoopGroup
    private let logger: Logger

    /// Prepares TLS (the system's roots and the configured CA file) once, so that a missing or unreadable CA
    /// file is found at start-up rather than at the first message.
    public init(
        configuration: SMTPConfiguration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "vicinity.smtp")
    ) throws(SMTPConfiguration.Problem) {
        self.configuration = configuration
        self.group = eventLoopGroup
        self.logger = logger
        guard configuration.tls != .disabled else {
            tls = nil
            return
        }
        var tlsConfiguration = TLSConfiguration.makeClientConfiguration()
        if let file = configuration.certificateAuthorityFile {
            tlsConfiguration.additionalTrustRoots = [.file(file)]
        }
        do {
            tls = try NIOSSLContext(configuration: tlsConfiguration)
        } catch {
            throw SMTPConfiguration.Problem(description: "cannot set up TLS for the mail relay (\(error)); is \(configuration.certificateAuthorityFile ?? "the CA file") a readable PEM file?")
        }
    }

    public func send(_ message: MailMessage) async throws(SMTPError) {
        var logger = self.logger
        logger[metadataKey: "smtp.relay"] = "\(configuration.location)"
        logger[metadataKey: "mail.message-id"] = "\(message.messageID)"
        // Written out before connecting: the relay's time is not spent on it.
        let data = SMTPData.transparent(MailFormat.render(message))
        let connection = try await SMTPConnection.open(
            host: configuration.host, port: configuration.port,
            implicitTLS: configuration.implicitTLS ? tls.map { .init(context: $0, serverHostname: serverHostname) } : nil,
            group: group, connectTimeout: TimeAmount(configuration.connectTimeout),
            replyTimeout: TimeAmount(configuration.replyTimeout),
            secrets: SMTPAuthentication.secrets(of: configuration.credentials), logger: logger)
        let outcome: Result<Void, SMTPError> = await withTaskCancellationHandler {
            do throws(SMTPError) {
                try await deliver(from: message.from.address, to: message.to.address, data: data, over: connection)
                return .success(())
            } catch {
                return .failure(error)
            }
        } onCancel: {
            connection.abort()
        }
        switch outcome {
        case .success:
            await quit(connection, logger: logger)
            logger.debug("delivered to the relay")
        case .failure(let error):
            // A relay that refused a command is still listening and is told goodbye (RFC 5321 §4.1.1.10); any
            // other failure left no dialogue to end.
            if case .rejected = error.reason { await quit(connection, logger: logger) } else { await connection.close() }
            throw error
        }
    }

    /// The dialogue up to the relay's acceptance of the data.
    private func deliver(from sender: MailAddress, to recipient: MailAddress, data: [UInt8], over connection: SMTPConnection) async throws(SMTPError) {
        var encrypted = false
        if configuration.implicitTLS {
            try await connection.handshake()
            encrypted = true
        }
        // RFC 5321 §4.2: 220 is the relay ready; 554 (or 421) is a relay that will not serve.
        try require(await connection.reply(step: .greeting), step: .greeting) { $0.code == 220 }
        let name = configuration.clientName ?? connection.localAddressLiteral
        var extensions = try await hello(name, over: connection)

        if !encrypted, configuration.tls != .disabled, let tls {
            if extensions.offersStartTLS {
                // RFC 3207 §4: 220 means go ahead with the handshake.
                try require(await connection.command("STARTTLS", step: .startTLS), step: .startTLS) { $0.code == 220 }
                try await connection.startTLS(tls, serverHostname: serverHostname)
                encrypted = true
                // RFC 3207 §4.2: what the relay said before TLS is forgotten, and EHLO is sent again.
                extensions = try await hello(name, over: connection)
            } else if configuration.tls == .required {
                throw SMTPError(step: .startTLS, reason: .startTLSNotOffered)
            }
        }

        if let credentials = configuration.credentials {
            guard encrypted || configuration.tls == .disabled || connection.peerIsLoopback else {
                throw SMTPError(step: .authentication, reason: .credentialsNeedTLS)
            }
            try await authenticate(credentials, offered: extensions.authenticationMechanisms, over: connection)
        }

        try require(await connection.command("MAIL FROM:<\(sender)>", step: .mailFrom), step: .mailFrom) { $0.isPositiveCompletion }
        // RFC 5321 §4.3.2: 250, or 251 for a recipient the relay forwards.
        try require(await connection.command("RCPT TO:<\(recipient)>", step: .recipient), step: .recipient) { $0.isPositiveCompletion }
        // RFC 5321 §4.1.1.4: 354 asks for the data.
        try require(await connection.command("DATA", step: .data), step: .data) { $0.code == 354 }
        try require(await connection.message(data), step: .message) { $0.isPositiveCompletion }
    }

    /// EHLO, or HELO for a relay that does not know EHLO (RFC 5321 §4.1.4: 500 or 502), which then offers
    /// no extension.
    private func hello(_ name: String, over connection: SMTPConnection) async throws(SMTPError) -> SMTPExtensions {
        let reply = try await connection.command("EHLO \(name)", step: .hello)
        if reply.isPositiveCompletion { return SMTPExtensions(ehloReply: reply) }
        guard reply.code == 500 || reply.code == 502 else { throw Self.failure(reply, step: .hello) }
        try require(await connection.command("HELO \(name)", step: .hello), step: .hello) { $0.isPositiveCompletion }
        return .empty
    }

    private func authenticate(_ credentials: SMTPCredentials, offered: [String], over connection: SMTPConnection) async throws(SMTPError) {
        guard let mechanism = SMTPAuthentication.choose(offered: offered) else {
            throw SMTPError(step: .authentication, reason: .noCommonAuthentication(offered: offered))
        }
        switch mechanism {
        case .plain:
            let response = SMTPAuthentication.plainResponse(credentials)
            // RFC 4954 §4: the response may come with the command; a relay that wants it after an empty
            // challenge answers 334, and gets it then.
            var reply = try await connection.command("AUTH PLAIN \(response)", step: .authentication, shown: "AUTH PLAIN <credentials withheld>")
            if reply.code == 334 {
                reply = try await connection.command(response, step: .authentication, shown: "<credentials withheld>")
            }
            try require(reply, step: .authentication) { $0.isPositiveCompletion }
        case .login:
            try require(await connection.command("AUTH LOGIN", step: .authentication), step: .authentication) { $0.code == 334 }
            let name = SMTPAuthentication.loginResponse(credentials.username)
            try require(await connection.command(name, step: .authentication, shown: "<user name>"), step: .authentication) { $0.code == 334 }
            let password = SMTPAuthentication.loginResponse(credentials.password)
            try require(await connection.command(password, step: .authentication, shown: "<password withheld>"), step: .authentication) {
                $0.isPositiveCompletion
            }
        }
    }

    /// QUIT and close. The message's fate is settled by then, so a relay that does not answer changes nothing.
    private func quit(_ connection: SMTPConnection, logger: Logger) async {
        do {
            _ = try await connection.command("QUIT", step: .quit)
        } catch {
            logger.debug("QUIT went unanswered: \(error)")
        }
        await connection.close()
    }

    /// The name the relay's certificate must carry, and that SNI sends: the host, unless it is an IP address,
    /// which SNI cannot carry (RFC 6066 §3) and which is then matched against the certificate's IP addresses.
    private var serverHostname: String? {
        (try? SocketAddress(ipAddress: configuration.host, port: 0)) == nil ? configuration.host : nil
    }

    private func require(_ reply: SMTPReply, step: SMTPStep, _ expected: (SMTPReply) -> Bool) throws(SMTPError) {
        guard expected(reply) else { throw Self.failure(reply, step: step) }
    }

    private static func failure(_ reply: SMTPReply, step: SMTPStep) -> SMTPError {
        SMTPError(step: step, reason: reply.isTransientNegative || reply.isPermanentNegative ? .rejected(reply) : .unexpectedReply(reply))
    }
}
