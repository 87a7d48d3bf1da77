import Foundation

/// RFC 9110 §10.2.3: `Retry-After` is a number of seconds or an HTTP-date; either becomes the wait from `now`.
enum RetryAfter {
    /// RFC 9111 §1.2.2: a delta-seconds too large to represent counts as 2^31 (some 68 years): a wait the outbox
    /// turns into dropping the message, and one that cannot overflow a timestamp.
    static let greatestDelay: Int64 = 1 << 31

    /// The wait the value asks for; zero for a date already past, nil for a value that is neither form.
    static func delay(_ value: String, now: Date) -> Duration? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if !trimmed.isEmpty, trimmed.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
            return .seconds(min(Int64(trimmed) ?? greatestDelay, greatestDelay))
        }
        guard let date = httpDate(trimmed) else { return nil }
        return .seconds(max(0, date.timeIntervalSince(now).rounded(.up)))
    }

    /// RFC 9110 §5.6.7: IMF-fixdate, and the two obsolete forms a recipient must still read (RFC 850's and
    /// asctime's).
    static func httpDate(_ text: String) -> Date? {
        for format in ["EEE, dd MMM yyyy HH:mm:ss 'GMT'", "EEEE, dd-MMM-yy HH:mm:ss 'GMT'", "EEE MMM d HH:mm:ss yyyy"] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: text.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")) {
                return date
            }
        }
        return nil
    }
}
