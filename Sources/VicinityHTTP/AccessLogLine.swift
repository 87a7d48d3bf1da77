#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import VicinityCore

/// One request as the access log writes it: NCSA's Common Log Format, which log analysers, fail2ban and
/// GoAccess read as they are, with the request's duration in seconds added at the end, as nginx's
/// `$request_time` (and Apache's `%T`) add it:
///
///     127.0.0.1 - - [22/Nov/2026:07:35:43 +0000] "GET /v1/places/closest HTTP/1.1" 200 312 0.004
///
/// The client (behind a trusted proxy, the address it forwarded), no identity nor user (`-`), the time the
/// request arrived in UTC, the method, the path without its query string (where tokens and positions travel),
/// the status, the bytes of the answer's body and the seconds from the request's arrival to its answer's last
/// byte. Bytes that could forge a line or a field (controls, `"`, `\`, anything past ASCII) are written
/// `\xHH`, as nginx escapes them.
struct AccessLogLine {
    var client: String?
    var arrival: time_t
    var method: String
    var path: String
    var status: Int
    var bodyBytes: Int
    var duration: Duration

    var text: String {
        "\(client.map { Self.escaped($0, spaces: true) } ?? "-") - - [\(Self.commonLogTime(arrival))] \"\(Self.escaped(method)) \(Self.escaped(path)) HTTP/1.1\" "
            + "\(status) \(bodyBytes) \(Self.seconds(duration))\n"
    }

    /// `22/Nov/2026:07:35:43 +0000`.
    static func commonLogTime(_ time: time_t) -> String {
        var seconds = time
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let month = HTTPDate.months[Int(max(0, min(11, parts.tm_mon)))]
        return "\(two(parts.tm_mday))/\(month)/\(1900 + Int(parts.tm_year)):\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) +0000"
    }

    /// Whole seconds and milliseconds: `0.004`.
    static func seconds(_ duration: Duration) -> String {
        let milliseconds = max(0, duration.wholeMilliseconds)
        let fraction = milliseconds % 1000
        return "\(milliseconds / 1000)." + (fraction < 10 ? "00" : fraction < 100 ? "0" : "") + "\(fraction)"
    }

    /// `spaces`: for a field that ends at a space, such as the client, which behind a proxy is what the client
    /// forwarded.
    static func escaped(_ text: String, spaces: Bool = false) -> String {
        let escapes = { (byte: UInt8) in needsEscape(byte) || (spaces && byte == UInt8(ascii: " ")) }
        guard text.utf8.contains(where: escapes) else { return text }
        var result = ""
        for byte in text.utf8 {
            if escapes(byte) {
                let hex = String(byte, radix: 16, uppercase: true)
                result += "\\x" + (hex.count == 1 ? "0" : "") + hex
            } else {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            }
        }
        return result
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte >= 0x7F || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }
}
