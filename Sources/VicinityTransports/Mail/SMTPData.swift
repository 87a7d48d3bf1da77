/// A message as the DATA command carries it: lines ending in CRLF (RFC 5321 §2.3.8 forbids a bare CR or LF),
/// each line that starts with a period given one more (the transparency of §4.5.2), and the end-of-data line
/// `.` after the last (§4.1.1.4), so that no line of the message can end it early.
enum SMTPData {
    static func transparent(_ message: [UInt8]) -> [UInt8] {
        let carriageReturn = UInt8(ascii: "\r"), lineFeed = UInt8(ascii: "\n"), period = UInt8(ascii: ".")
        var output: [UInt8] = []
        output.reserveCapacity(message.count + message.count / 64 + 5)
        var atLineStart = true
        var index = message.startIndex
        while index < message.endIndex {
            let byte = message[index]
            if byte == carriageReturn || byte == lineFeed {
                output += [carriageReturn, lineFeed]
                let pairsWithNext = byte == carriageReturn && index + 1 < message.endIndex && message[index + 1] == lineFeed
                index += pairsWithNext ? 2 : 1
                atLineStart = true
                continue
            }
            if atLineStart, byte == period { output.append(period) }
            output.append(byte)
            atLineStart = false
            index += 1
        }
        if !atLineStart { output += [carriageReturn, lineFeed] }
        return output + [period, carriageReturn, lineFeed]
    }
}
