/// Where in the dialogue with the relay a send stopped.
public enum SMTPStep: String, Hashable, Sendable, CustomStringConvertible {
    case connect = "connecting"
    case tlsHandshake = "the TLS handshake"
    case greeting = "the greeting"
    case hello = "EHLO"
    case startTLS = "STARTTLS"
    case authentication = "AUTH"
    case mailFrom = "MAIL FROM"
    case recipient = "RCPT TO"
    case data = "DATA"
    /// The message itself, up to the relay's reply to its final `.`.
    case message = "the message"
    /// The goodbye after the message was taken or refused; its failures are logged, never thrown.
    case quit = "QUIT"

    public var description: String { rawValue }

    /// Whether the step sets up the session rather than carrying this message.
    var isSessionSetup: Bool {
        switch self {
        case .connect, .tlsHandshake, .greeting, .hello, .startTLS, .authentication: true
        case .mailFrom, .recipient, .data, .message, .quit: false
        }
    }
}

/// Why a send failed, told so that an outbox knows what to do with the message (``Disposition``). It never
/// holds the password: a relay's text that repeats a credential has it withheld.
public struct SMTPError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What the sender does with the message after this failure.
    public enum Disposition: String, Hashable, Sendable {
        /// Try again later, with backoff: the relay was down, slow or said "not now" (4yz).
        case transient
        /// Give up on this message: the relay refused it for good (5yz to its recipient or its content).
        case permanent
        /// The message is not at fault but no message will pass until the operator changes the relay or its
        /// settings: keep the messages and say so loudly.
        case misconfigured
    }

    public enum Reason: Hashable, Sendable {
        /// No TCP connection: refused, reset, unreachable, or the name did not resolve.
        case connectionFailed(String)
        /// The relay closed the connection before answering.
        case connectionClosed
        /// No answer within the configured time.
        case timedOut
        /// The TLS handshake failed: the certificate was not trusted or did not name the host, or the
        /// relay broke off.
        case tlsFailed(String)
        /// A negative reply (4yz or 5yz).
        case rejected(SMTPReply)
        /// A positive reply other than the one this step expects.
        case unexpectedReply(SMTPReply)
        /// Octets that are not an SMTP reply.
        case malformedReply(String)
        /// TLS is required, and the relay offers no STARTTLS (RFC 3207).
        case startTLSNotOffered
        /// Credentials are configured, and the relay offers none of the mechanisms this client has (PLAIN,
        /// LOGIN), or no AUTH at all (RFC 4954).
        case noCommonAuthentication(offered: [String])
        /// Credentials are configured, and the connection is neither encrypted nor to this machine.
        case credentialsNeedTLS
    }

    public let step: SMTPStep
    public let reason: Reason

    public init(step: SMTPStep, reason: Reason) {
        self.step = step
        self.reason = reason
    }

    /// The relay's reply, when the failure was one.
    public var reply: SMTPReply? {
        switch reason {
        case .rejected(let reply), .unexpectedReply(let reply): reply
        default: nil
        }
    }

    public var disposition: Disposition {
        switch reason {
        case .connectionFailed, .connectionClosed, .timedOut, .tlsFailed, .unexpectedReply, .malformedReply:
            return .transient
        case .startTLSNotOffered, .noCommonAuthentication, .credentialsNeedTLS:
            return .misconfigured
        case .rejected(let reply):
            // RFC 5321 §4.2.1: 4yz may succeed later.
            if !reply.isPermanentNegative { return .transient }
            // RFC 4954 §6: 530 asks for authentication, which only the settings can give. A refusal before
            // the message's recipient is named (the session's set-up, and MAIL FROM, which names only the
            // configured sender) is about the settings too, whatever message is sent.
            if reply.code == 530 || step.isSessionSetup || step == .mailFrom { return .misconfigured }
            return .permanent
        }
    }

    public var description: String {
        let what = switch reason {
        case .connectionFailed(let detail): "the connection failed (\(detail))"
        case .connectionClosed: "the relay closed the connection"
        case .timedOut: "no answer in time"
        case .tlsFailed(let detail): "TLS failed (\(detail))"
        case .rejected(let reply): "the relay answered \(reply)"
        case .unexpectedReply(let reply): "the relay answered \(reply), not what this step expects"
        case .malformedReply(let detail): "the relay sent \(detail)"
        case .startTLSNotOffered: "TLS is required and the relay offers no STARTTLS"
        case .noCommonAuthentication(let offered):
            offered.isEmpty
                ? "credentials are configured and the relay offers no AUTH"
                : "credentials are configured and the relay offers AUTH \(offered.joined(separator: " ")), none of PLAIN and LOGIN"
        case .credentialsNeedTLS: "credentials are never sent unencrypted to another machine; the relay offers no STARTTLS"
        }
        return "SMTP \(step): \(what) (\(disposition.rawValue))"
    }
}
