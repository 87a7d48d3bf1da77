import VicinityCore

/// The outbox's mail, sent through an SMTP relay (`SMTPClient`): each try of one message is the same message
/// (its `Message-ID` is the outbox's id, its `Date` when it was recorded), and what the relay answers becomes
/// what the outbox does next.
public struct SMTPMailTransport: MailTransport {
    let client: SMTPClient
    let from: Mailbox

    /// `from` is what every mail says it is from (`serve --mail-from`).
    public init(client: SMTPClient, from: Mailbox) {
        self.client = client
        self.from = from
    }

    public func deliver(_ outgoing: OutgoingMail) async -> DeliveryOutcome {
        let message: MailMessage
        do {
            message = try MailMessage(
                from: from, to: try Mailbox(try MailAddress(outgoing.mail.to.rawValue)), subject: outgoing.mail.subject,
                body: outgoing.mail.body, messageID: try MessageID("\(outgoing.id.rawValue)@\(from.address.domain)"),
                date: outgoing.createdAt.date)
        } catch {
            // An address this client cannot write (the service's own check is looser than RFC 5322's) never will.
            return .failed(reason: "the message cannot be written: \(error.description)")
        }
        do {
            try await client.send(message)
            return .delivered
        } catch {
            switch error.disposition {
            case .transient: return .retry(after: nil, reason: error.description)
            case .permanent: return .failed(reason: error.description)
            case .misconfigured: return .misconfigured(reason: error.description)
            }
        }
    }
}
