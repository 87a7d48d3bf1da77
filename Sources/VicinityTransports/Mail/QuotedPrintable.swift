/// The quoted-printable transfer encoding (RFC 2045 §6.7), so that a UTF-8 body (Thai, emoji) passes relays
/// that carry 7-bit text only, while an ASCII body stays readable as it is.
enum QuotedPrintable {
    /// RFC 2045 §6.7 rule 5: an encoded line is at most 76 characters, the `=` of a soft line break included.
    static let maximumLineLength = 76

    /// The text's lines (CRLF, LF or a lone CR each end one), encoded and joined with CRLF, ending with CRLF.
    static func encode(_ text: String) -> [UInt8] {
        var output: [UInt8] = []
        for line in lines(of: Array(text.utf8)) {
            encodeLine(line, into: &output)
            output += [UInt8(ascii: "\r"), UInt8(ascii: "\n")]
        }
        return output
    }

    /// Splits at CRLF, LF or a lone CR; a final line break ends the last line rather than starting an empty one.
    static func lines(of bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var start = bytes.startIndex
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\n") {
                lines.append(bytes[start..<index])
                let pairsWithNext = byte == UInt8(ascii: "\r") && index + 1 < bytes.endIndex && bytes[index + 1] == UInt8(ascii: "\n")
                index += pairsWithNext ? 2 : 1
                start = index
            } else {
                index += 1
            }
        }
        if start < bytes.endIndex || lines.isEmpty { lines.append(bytes[start...]) }
        return lines
    }

    /// One line: printable ASCII but `=` as it is (rule 2), space and tab as they are unless they end the line
    /// (rule 3), every other octet as `=XX` (rule 1), with soft line breaks (`=` at the end, rule 5) that never
    /// split an `=XX`.
    static func encodeLine(_ line: ArraySlice<UInt8>, into output: inout [UInt8]) {
        var length = 0
        for index in line.indices {
            let byte = line[index]
            let isLast = index == line.index(before: line.endIndex)
            let literal = ((33...126).contains(byte) && byte != UInt8(ascii: "="))
                || ((byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")) && !isLast)
            let token: [UInt8] = literal ? [byte] : escaped(byte)
            // Room is kept for the soft break's `=` unless this token ends the line.
            let limit = isLast ? maximumLineLength : maximumLineLength - 1
            if length + token.count > limit {
                output += [UInt8(ascii: "="), UInt8(ascii: "\r"), UInt8(ascii: "\n")]
                length = 0
            }
            output += token
            length += token.count
        }
    }

    /// `=XX` with upper-case hex digits (RFC 2045 §6.7 rule 1).
    static func escaped(_ byte: UInt8) -> [UInt8] {
        let digits = Array("0123456789ABCDEF".utf8)
        return [UInt8(ascii: "="), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
    }
}
