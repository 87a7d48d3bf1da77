import Foundation

/// Writes a ``MailMessage`` as RFC 5322 text: the headers a relay and a reader expect, then the body in
/// quoted-printable, every line ending in CRLF. The same message always gives the same octets.
public enum MailFormat {
    public static func render(_ message: MailMessage) -> [UInt8] {
        // RFC 5322 §3.6: Date and From are required; Message-ID is expected of every message (§3.6.4).
        // RFC 2045 §4 and §5, §6: the MIME version, the type and charset, and how the body is encoded.
        let headers = [
            "Date: \(MailDate.text(message.date))",
            HeaderText.mailbox(message.from, field: "From"),
            HeaderText.mailbox(message.to, field: "To"),
            HeaderText.unstructured(message.subject, field: "Subject"),
            "Message-ID: \(message.messageID)",
            "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=UTF-8",
            "Content-Transfer-Encoding: quoted-printable",
        ]
        // RFC 5322 §2.1: the header section, an empty line, the body.
        return Array((headers.joined(separator: "\r\n") + "\r\n\r\n").utf8) + QuotedPrintable.encode(message.body)
    }
}

/// RFC 5322 §3.3 date-time in UTC, `Tue, 01 Jul 2025 09:05:00 +0000`, spelled in English whatever the
/// process's locale.
enum MailDate {
    static let dayNames = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    static func text(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        let parts = calendar.dateComponents([.weekday, .day, .month, .year, .hour, .minute, .second], from: date)
        func twoDigits(_ value: Int?) -> String {
            let value = value ?? 0
            return value < 10 ? "0\(value)" : "\(value)"
        }
        let weekday = dayNames[((parts.weekday ?? 1) - 1) % 7]
        let month = monthNames[((parts.month ?? 1) - 1) % 12]
        // "+0000": the time is in UTC, known to be (RFC 5322 §3.3 keeps "-0000" for an unknown local zone).
        return "\(weekday), \(twoDigits(parts.day)) \(month) \(parts.year ?? 1970) "
            + "\(twoDigits(parts.hour)):\(twoDigits(parts.minute)):\(twoDigits(parts.second)) +0000"
    }
}
