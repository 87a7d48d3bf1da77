#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `Date` field's value (RFC 9110 §5.6.7, IMF-fixdate: `Sun, 29 Nov 2026 03:27:16 GMT`), formatted at most
/// once a second by each holder: every answer carries one, and formatting a time costs more than the rest of a
/// small answer's fields.
struct HTTPDate {
    static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    private var second: time_t = -1
    private var text = ""

    /// The value for now.
    mutating func now() -> String {
        let current = time(nil)
        if current != second {
            second = current
            text = Self.format(current)
        }
        return text
    }

    static func format(_ time: time_t) -> String {
        var seconds = time
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let day = days[Int(max(0, min(6, parts.tm_wday)))]
        let month = months[Int(max(0, min(11, parts.tm_mon)))]
        return "\(day), \(two(parts.tm_mday)) \(month) \(1900 + Int(parts.tm_year)) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
