/// What a relay says it supports in its EHLO reply (RFC 5321 §4.1.1.1): one keyword and its parameters a line
/// after the first, which names the relay.
struct SMTPExtensions: Hashable, Sendable {
    /// Upper-cased keywords, parameters dropped.
    let keywords: Set<String>
    /// SASL mechanisms of the AUTH line (RFC 4954 §3), upper-cased, in the relay's order.
    let authenticationMechanisms: [String]

    /// No extension at all: a relay that answered HELO.
    static let empty = SMTPExtensions(keywords: [], authenticationMechanisms: [])

    init(keywords: Set<String>, authenticationMechanisms: [String]) {
        self.keywords = keywords
        self.authenticationMechanisms = authenticationMechanisms
    }

    init(ehloReply reply: SMTPReply) {
        var keywords: Set<String> = []
        var mechanisms: [String] = []
        for line in reply.lines.dropFirst() {
            let words = line.split(separator: " ").map { $0.uppercased() }
            guard let keyword = words.first else { continue }
            // "AUTH=PLAIN LOGIN" is how some relays wrote it before RFC 2554 was final; read it the same way.
            if keyword == "AUTH" || keyword.hasPrefix("AUTH=") {
                let first = keyword == "AUTH" ? [] : [String(keyword.dropFirst(5))]
                for mechanism in first + words.dropFirst() where !mechanism.isEmpty && !mechanisms.contains(mechanism) {
                    mechanisms.append(mechanism)
                }
                keywords.insert("AUTH")
            } else {
                keywords.insert(keyword)
            }
        }
        self.init(keywords: keywords, authenticationMechanisms: mechanisms)
    }

    /// RFC 3207 §4.
    var offersStartTLS: Bool { keywords.contains("STARTTLS") }
}
