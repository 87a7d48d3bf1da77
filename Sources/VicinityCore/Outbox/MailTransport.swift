/// Where mail goes to leave the service: a relay the operator names. The SMTP client in VicinityTransports is
/// the one the executable picks.
public protocol MailTransport: Sendable {
    /// Hands the mail over, or says why not and whether to try again (`DeliveryOutcome`). Never throws: every
    /// failure is an outcome the outbox acts on.
    func deliver(_ mail: OutgoingMail) async -> DeliveryOutcome
}

/// A mail as the outbox hands it to a transport: what it says, and what makes every try of it the same
/// message (its id, for the `Message-ID`; its time, for the `Date`).
public struct OutgoingMail: Hashable, Sendable {
    public let id: OutboxID
    public let mail: Mail
    public let createdAt: Timestamp

    public init(id: OutboxID, mail: Mail, createdAt: Timestamp) {
        self.id = id
        self.mail = mail
        self.createdAt = createdAt
    }
}
