import Foundation

/// A message's `Message-ID` (RFC 5322 §3.6.4): `<left@right>`, unique to one message.
///
/// The sender records it with the message, so that a retried send of the same message carries the same id
/// and a relay or a reader can tell the copies of one message apart from two messages.
public struct MessageID: Hashable, Sendable, CustomStringConvertible {
    public let left: String
    public let right: String

    /// Reads `left@right`, with or without the angle brackets.
    public init(_ text: String) throws(MailProblem) {
        var inner = Substring(text)
        if inner.hasPrefix("<"), inner.hasSuffix(">") { inner = inner.dropFirst().dropLast() }
        guard let at = inner.lastIndex(of: "@") else {
            throw MailProblem("\(MailAddress.quoted(text)) is not a message id (<left@right>)")
        }
        let left = String(inner[..<at])
        let right = String(inner[inner.index(after: at)...])
        // RFC 5322 §3.6.4: id-left is dot-atom-text; id-right is dot-atom-text or a no-fold-literal.
        guard MailSyntax.isDotAtom(left), MailSyntax.isDotAtom(right) || MailAddress.isAddressLiteral(right) else {
            throw MailProblem("\(MailAddress.quoted(text)) is not a message id (<left@right>, each side dot-atom text)")
        }
        self.left = left
        self.right = right
    }

    /// A new id on the sender's domain. The left side is 128 random bits in hex: RFC 5322 §3.6.4 asks for a
    /// unique id, and 128 random bits make two equal ones as unlikely as two equal UUIDs.
    public static func random(domain: String) -> MessageID {
        var generator = SystemRandomNumberGenerator()
        let left = (0..<2).map { _ in
            let word = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - word.count) + word
        }.joined()
        // The domain comes from a checked MailAddress, which is dot-atom text or an address literal.
        return MessageID(checkedLeft: left, right: domain)
    }

    private init(checkedLeft left: String, right: String) {
        self.left = left
        self.right = right
    }

    public var description: String { "<\(left)@\(right)>" }
}

/// One plain-text mail to one recipient: what the service sends (codes, notices), before it is written out.
///
/// Every header value is checked when the message is made, so that no value can end its header line and start
/// another; the body may be any text and is encoded for 7-bit relays when written (see ``MailFormat``).
public struct MailMessage: Hashable, Sendable {
    /// The `From` header and, by its address, the envelope sender (`MAIL FROM`).
    public let from: Mailbox
    /// The `To` header and, by its address, the one envelope recipient (`RCPT TO`).
    public let to: Mailbox
    public let subject: String
    public let body: String
    public let messageID: MessageID
    public let date: Date

    /// A subject is at most this many characters: RFC 5322 §2.1.1's 998-octet line limit holds whatever
    /// they are once encoded and folded, and a longer subject is a mistake rather than a subject.
    static let maximumSubjectLength = 250

    /// - Parameters:
    ///   - messageID: the id to send under; a new random one on the sender's domain when nil. Give the id
    ///     recorded with the message when sending it again.
    ///   - date: the `Date` header; give the time recorded with the message when sending it again.
    public init(
        from: Mailbox, to: Mailbox, subject: String, body: String, messageID: MessageID? = nil, date: Date = Date()
    ) throws(MailProblem) {
        guard !MailSyntax.hasControlCharacter(subject) else {
            throw MailProblem("a subject cannot hold line breaks or other control characters")
        }
        guard subject.count <= Self.maximumSubjectLength else {
            throw MailProblem("a subject is at most \(Self.maximumSubjectLength) characters")
        }
        self.from = from
        self.to = to
        self.subject = subject
        self.body = body
        self.messageID = messageID ?? MessageID.random(domain: from.address.domain)
        self.date = date
    }
}
