/// One reply of an SMTP server (RFC 5321 §4.2): a three-digit code and one or more lines of text.
public struct SMTPReply: Hashable, Sendable, CustomStringConvertible {
    public let code: Int
    /// The text of each line, after the code and its separator.
    public let lines: [String]

    public init(code: Int, lines: [String]) {
        self.code = code
        self.lines = lines
    }

    /// RFC 5321 §4.2.1: 2yz positive completion.
    public var isPositiveCompletion: Bool { (200...299).contains(code) }
    /// RFC 5321 §4.2.1: 3yz positive intermediate (send more: the message after DATA, the next AUTH step).
    public var isPositiveIntermediate: Bool { (300...399).contains(code) }
    /// RFC 5321 §4.2.1: 4yz transient negative completion; the same command may succeed later.
    public var isTransientNegative: Bool { (400...499).contains(code) }
    /// RFC 5321 §4.2.1: 5yz permanent negative completion; the same command will fail again.
    public var isPermanentNegative: Bool { (500...599).contains(code) }

    /// The code and the lines' text on one line.
    public var description: String {
        ([String(code)] + lines.filter { !$0.isEmpty }).joined(separator: " ")
    }

    /// The same reply with every occurrence of the given texts replaced, for a relay that repeats a
    /// credential back.
    func withholding(_ secrets: [String]) -> SMTPReply {
        let secrets = secrets.filter { !$0.isEmpty }
        guard !secrets.isEmpty else { return self }
        return SMTPReply(code: code, lines: lines.map { line in
            secrets.reduce(line) { text, secret in text.replacingOccurrences(of: secret, with: "<withheld>") }
        })
    }
}

extension String {
    /// Every occurrence of `target` replaced; written here so that the module needs no Foundation for it.
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var result = ""
        var rest = Substring(self)
        while let range = rest.firstRange(of: target) {
            result += rest[..<range.lowerBound]
            result += replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}

/// Gathers the octets a server sends into replies: lines of `code-text` continue a reply, a line of
/// `code text` (or the code alone) ends it (RFC 5321 §4.2.1).
struct SMTPReplyParser {
    /// A reply line is at most 512 octets with its CRLF (RFC 5321 §4.5.3.1.5); four times that is allowed
    /// for relays that stretch it, beyond which the peer is not speaking SMTP.
    static let maximumLineLength = 2048
    /// Lines in one reply at most; an EHLO reply, the longest in practice, has some twenty.
    static let maximumLineCount = 100

    private var buffer: [UInt8] = []
    private var pendingLines: [String] = []
    private var pendingCode: Int?

    /// Whether octets have arrived that are not yet a whole reply.
    var hasBufferedOctets: Bool { !buffer.isEmpty || pendingCode != nil }

    mutating func append(_ bytes: some Sequence<UInt8>) {
        buffer.append(contentsOf: bytes)
    }

    /// The next whole reply, or nil until more octets arrive.
    mutating func nextReply() throws(SMTPChannelFailure) -> SMTPReply? {
        while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
            // CRLF ends a line (RFC 5321 §2.3.8); a bare LF is read the same way, as lenient clients do.
            var end = newline
            if end > buffer.startIndex, buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
            let line = Array(buffer[buffer.startIndex..<end])
            buffer.removeSubrange(buffer.startIndex...newline)
            guard line.count <= Self.maximumLineLength else { throw SMTPChannelFailure(reason: .malformedReply("a reply line longer than \(Self.maximumLineLength) octets")) }
            if let reply = try take(line) { return reply }
        }
        guard buffer.count <= Self.maximumLineLength else { throw SMTPChannelFailure(reason: .malformedReply("a reply line longer than \(Self.maximumLineLength) octets")) }
        return nil
    }

    /// One line; the reply when it was the last.
    private mutating func take(_ line: [UInt8]) throws(SMTPChannelFailure) -> SMTPReply? {
        let digits = line.prefix(3)
        guard digits.count == 3, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              // RFC 5321 §4.2: the first digit is 2 to 5.
              let code = Int(String(decoding: digits, as: UTF8.self)), (200...599).contains(code)
        else {
            throw SMTPChannelFailure(reason: .malformedReply("a reply line without a three-digit code: \(Self.printable(line.prefix(64)))"))
        }
        let separator = line.count > 3 ? line[3] : UInt8(ascii: " ")
        guard separator == UInt8(ascii: " ") || separator == UInt8(ascii: "-") else {
            throw SMTPChannelFailure(reason: .malformedReply("a reply line whose code is followed by neither space nor hyphen: \(Self.printable(line.prefix(64)))"))
        }
        if let pendingCode, pendingCode != code {
            throw SMTPChannelFailure(reason: .malformedReply("a multi-line reply whose lines have different codes (\(pendingCode), \(code))"))
        }
        pendingLines.append(Self.printable(line.dropFirst(4)))
        guard pendingLines.count <= Self.maximumLineCount else { throw SMTPChannelFailure(reason: .malformedReply("a reply of more than \(Self.maximumLineCount) lines")) }
        guard separator == UInt8(ascii: " ") else {
            pendingCode = code
            return nil
        }
        defer {
            pendingLines = []
            pendingCode = nil
        }
        return SMTPReply(code: code, lines: pendingLines)
    }

    /// The octets as text, with control characters shown as `?` so that a reply cannot forge log lines.
    static func printable(_ octets: some Sequence<UInt8>) -> String {
        String(String.UnicodeScalarView(String(decoding: Array(octets), as: UTF8.self).unicodeScalars.map {
            $0.properties.generalCategory == .control ? "?" : $0
        }))
    }
}
