import Foundation

/// Writes header values that may hold any text: kept as they are when plain ASCII fits, else as RFC 2047
/// encoded-words (`=?UTF-8?B?...?=`), folded so that every line stays within RFC 2047 §2's 76 characters.
enum HeaderText {
    /// RFC 2047 §2: a header line holding an encoded-word is at most 76 characters.
    static let maximumLineLength = 76
    /// RFC 2047 §2: `=?` charset `?` encoding `?` text `?=`.
    static let wordPrefix = "=?UTF-8?B?"
    static let wordSuffix = "?="
    /// UTF-8 octets one encoded-word carries: "Subject: " (9, the longest field name written) and the word's
    /// own 12 characters leave 55 of the 76 for base64, of which 52 are whole 4-character groups, or 39 octets.
    static let octetsPerWord = 39

    /// An unstructured value such as `Subject` (RFC 5322 §3.2.5): plain when it is printable ASCII, cannot be
    /// mistaken for an encoded-word and fits the first line; encoded-words otherwise.
    static func unstructured(_ text: String, field: String) -> String {
        if isPlain(text), field.count + 2 + text.utf8.count <= maximumLineLength {
            return "\(field): \(text)"
        }
        return fold(encodedWords(text), field: field)
    }

    /// A mailbox (RFC 5322 §3.4): `address`, or `name <address>` with the name as atoms, a quoted-string or
    /// encoded-words (RFC 2047 §5(3)).
    static func mailbox(_ mailbox: Mailbox, field: String) -> String {
        let address = "<\(mailbox.address)>"
        guard let name = mailbox.displayName else { return "\(field): \(mailbox.address)" }
        let plain = isPlain(name) ? plainPhrase(name) : nil
        if let plain, field.count + 2 + plain.utf8.count + 1 + address.utf8.count <= maximumLineLength {
            return "\(field): \(plain) \(address)"
        }
        return fold(encodedWords(name) + [address], field: field)
    }

    /// Printable ASCII, and no `=?` that a reader would take for the start of an encoded-word.
    static func isPlain(_ text: String) -> Bool {
        text.utf8.allSatisfy { (0x20...0x7E).contains($0) } && !text.contains("=?")
    }

    /// RFC 5322 §3.2.5 phrase from printable ASCII: atoms when every word is one, else a quoted-string with
    /// `"` and `\` escaped (§3.2.4).
    static func plainPhrase(_ name: String) -> String {
        let words = name.split(separator: " ")
        if words.allSatisfy({ $0.utf8.allSatisfy(MailSyntax.isAtext) }) { return words.joined(separator: " ") }
        var quoted = "\""
        for character in name {
            if character == "\"" || character == "\\" { quoted.append("\\") }
            quoted.append(character)
        }
        return quoted + "\""
    }

    /// The text as encoded-words of whole characters (RFC 2047 §5: a word never splits a character), each at
    /// most ``octetsPerWord`` octets of UTF-8.
    static func encodedWords(_ text: String) -> [String] {
        var words: [String] = []
        var chunk: [UInt8] = []
        func flush() {
            guard !chunk.isEmpty else { return }
            words.append(wordPrefix + Data(chunk).base64EncodedString() + wordSuffix)
            chunk.removeAll()
        }
        for character in text {
            // A character is kept whole in one word; one longer than a word (a long combining sequence) is split
            // between its scalars, which RFC 2047 allows.
            let pieces = character.utf8.count <= octetsPerWord ? [Array(character.utf8)] : character.unicodeScalars.map { Array(String($0).utf8) }
            for piece in pieces {
                if chunk.count + piece.count > octetsPerWord { flush() }
                chunk += piece
            }
        }
        flush()
        return words.isEmpty ? [wordPrefix + wordSuffix] : words
    }

    /// `field: ` and the tokens, as many on a line as fit, further lines starting with a space (RFC 5322
    /// §2.2.3 folding). Space between encoded-words is dropped when read (RFC 2047 §6.2).
    static func fold(_ tokens: [String], field: String) -> String {
        var lines: [String] = []
        var line = "\(field):"
        for token in tokens {
            if line.utf8.count + 1 + token.utf8.count > maximumLineLength, line != "\(field):" {
                lines.append(line)
                line = ""
            }
            line += " " + token
        }
        lines.append(line)
        return lines.joined(separator: "\r\n")
    }
}
