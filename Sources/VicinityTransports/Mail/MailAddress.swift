/// A value a mail cannot carry, said in words.
public struct MailProblem: Error, Hashable, Sendable, CustomStringConvertible {
    public var description: String

    init(_ description: String) {
        self.description = description
    }
}

/// An address as both the SMTP envelope and the `From`/`To` headers carry it: `local@domain`, the local part
/// in RFC 5321 §4.1.2's Dot-string form and the domain a host name or an address literal.
///
/// ASCII only: this client does not speak SMTPUTF8 (RFC 6531), so an address it accepts passes every relay.
public struct MailAddress: Hashable, Sendable, CustomStringConvertible {
    public let localPart: String
    public let domain: String

    /// RFC 5321 §4.5.3.1.1: a local part is at most 64 octets.
    static let maximumLocalPartLength = 64
    /// RFC 5321 §4.5.3.1.2: a domain is at most 255 octets.
    static let maximumDomainLength = 255
    /// RFC 1035 §2.3.4: a label is at most 63 octets.
    static let maximumLabelLength = 63

    public init(_ text: String) throws(MailProblem) {
        guard let at = text.lastIndex(of: "@") else {
            throw MailProblem("\(Self.quoted(text)) is not an e-mail address (local@domain)")
        }
        let localPart = String(text[..<at])
        let domain = String(text[text.index(after: at)...])
        guard MailSyntax.isDotAtom(localPart), localPart.utf8.count <= Self.maximumLocalPartLength else {
            throw MailProblem("\(Self.quoted(text)) has a local part this service cannot send to (ASCII letters, digits and !#$%&'*+-/=?^_`{|}~ between single dots, at most 64)")
        }
        guard Self.isDomain(domain) || Self.isAddressLiteral(domain) else {
            throw MailProblem("\(Self.quoted(text)) has no valid domain after the @")
        }
        self.localPart = localPart
        self.domain = domain
    }

    public var description: String { "\(localPart)@\(domain)" }

    /// RFC 5321 §4.1.2 Domain: dot-separated labels of letters, digits and inner hyphens.
    static func isDomain(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= maximumDomainLength else { return false }
        return text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            let bytes = Array(label.utf8)
            guard let first = bytes.first, let last = bytes.last, bytes.count <= maximumLabelLength else { return false }
            return MailSyntax.isLetterOrDigit(first) && MailSyntax.isLetterOrDigit(last)
                && bytes.allSatisfy { MailSyntax.isLetterOrDigit($0) || $0 == UInt8(ascii: "-") }
        }
    }

    /// RFC 5321 §4.1.3 address literals, `[192.0.2.1]` or `[IPv6:2001:db8::1]`, checked for their characters only:
    /// the relay judges the address itself.
    static func isAddressLiteral(_ text: String) -> Bool {
        guard text.hasPrefix("["), text.hasSuffix("]"), text.utf8.count > 2 else { return false }
        var inner = Substring(text.dropFirst().dropLast())
        if inner.hasPrefix("IPv6:") { inner = inner.dropFirst(5) }
        return !inner.isEmpty && inner.utf8.allSatisfy { byte in
            MailSyntax.isHexDigit(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: ":")
        }
    }

    /// The text as it was given, for a problem's words, with control characters shown as `?` so that the
    /// problem itself cannot break a log line.
    static func quoted(_ text: String) -> String {
        "'" + String(String.UnicodeScalarView(text.unicodeScalars.map { $0.properties.generalCategory == .control ? "?" : $0 })) + "'"
    }
}

/// A mailbox of the `From` and `To` headers (RFC 5322 §3.4): an address and, when given, the name shown with it.
public struct Mailbox: Hashable, Sendable, CustomStringConvertible {
    public let displayName: String?
    public let address: MailAddress

    /// A display name is at most this many characters; the header lines stay short (RFC 5322 §2.1.1) and
    /// a longer name is a mistake rather than a name.
    static let maximumDisplayNameLength = 200

    /// `displayName` may be any text without control characters; an empty one is no name.
    public init(_ address: MailAddress, displayName: String? = nil) throws(MailProblem) {
        let name = displayName?.trimmingSpaces
        if let name, !name.isEmpty {
            guard !MailSyntax.hasControlCharacter(name) else {
                throw MailProblem("a display name cannot hold line breaks or other control characters")
            }
            guard name.count <= Self.maximumDisplayNameLength else {
                throw MailProblem("a display name is at most \(Self.maximumDisplayNameLength) characters")
            }
            self.displayName = name
        } else {
            self.displayName = nil
        }
        self.address = address
    }

    /// Reads `address`, `<address>` or `Name <address>` (the name optionally in double quotes), as an operator
    /// writes a sender: `--mail-from "Vicinity <noreply@example.org>"`.
    public init(parsing text: String) throws(MailProblem) {
        let trimmed = text.trimmingSpaces
        guard trimmed.hasSuffix(">"), let open = trimmed.lastIndex(of: "<") else {
            try self.init(MailAddress(trimmed))
            return
        }
        let address = try MailAddress(String(trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)]))
        var name = String(trimmed[..<open]).trimmingSpaces
        if name.count >= 2, name.hasPrefix("\""), name.hasSuffix("\"") {
            name = String(name.dropFirst().dropLast())
        }
        try self.init(address, displayName: name)
    }

    public var description: String {
        guard let displayName else { return address.description }
        return "\(displayName) <\(address)>"
    }
}

/// Character classes of RFC 5322 and RFC 5321 that more than one mail type checks against.
enum MailSyntax {
    /// RFC 5322 §3.2.3 atext: what an atom may hold without quoting.
    static func isAtext(_ byte: UInt8) -> Bool {
        isLetterOrDigit(byte) || "!#$%&'*+-/=?^_`{|}~".utf8.contains(byte)
    }

    /// RFC 5322 §3.2.3 dot-atom-text: atoms of atext joined by single dots.
    static func isDotAtom(_ text: String) -> Bool {
        !text.isEmpty && text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { atom in
            !atom.isEmpty && atom.utf8.allSatisfy(isAtext)
        }
    }

    static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }

    /// Whether the text holds CR, LF or any other control character: what would let a value end its header
    /// line and start another (header injection).
    static func hasControlCharacter(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }
}

extension String {
    /// The text without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
