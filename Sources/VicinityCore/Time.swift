import Foundation
import Synchronization

/// An instant in UTC with millisecond precision: what every store keeps and every answer writes, so that the
/// in-memory and SpatiaLite stores agree to the millisecond.
public struct Timestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let millisecondsSince1970: Int64

    public init(millisecondsSince1970: Int64) { self.millisecondsSince1970 = millisecondsSince1970 }

    /// The instant of a `Date`, cut to the millisecond.
    public init(_ date: Date) {
        millisecondsSince1970 = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    public var date: Date { Date(timeIntervalSince1970: Double(millisecondsSince1970) / 1000) }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.millisecondsSince1970 < rhs.millisecondsSince1970 }

    public func advanced(by duration: Duration) -> Timestamp {
        Timestamp(millisecondsSince1970: millisecondsSince1970 + duration.wholeMilliseconds)
    }

    public static func + (lhs: Timestamp, rhs: Duration) -> Timestamp { lhs.advanced(by: rhs) }
    public static func - (lhs: Timestamp, rhs: Duration) -> Timestamp { lhs.advanced(by: .zero - rhs) }
    public static func - (lhs: Timestamp, rhs: Timestamp) -> Duration {
        .milliseconds(lhs.millisecondsSince1970 - rhs.millisecondsSince1970)
    }

    /// RFC 3339 in UTC with milliseconds, `2026-11-22T09:30:00.000Z`: the form every answer uses.
    public var rfc3339: String {
        let (days, milliseconds) = millisecondsSince1970.floorDivided(by: 86_400_000)
        let (year, month, day) = Self.civilDate(daysSince1970: days)
        let seconds = milliseconds / 1000
        guard (0...9999).contains(year) else {
            return Self.digits(year, 4) + "-" + Self.digits(month, 2) + "-" + Self.digits(day, 2)
                + "T" + Self.digits(seconds / 3600, 2) + ":" + Self.digits(seconds / 60 % 60, 2) + ":"
                + Self.digits(seconds % 60, 2) + "." + Self.digits(milliseconds % 1000, 3) + "Z"
        }
        // Four-digit years, every time an answer carries: written into one buffer of the fixed width, as
        // building the text from nine small strings cost a friend list about 4% of its time.
        return String(unsafeUninitializedCapacity: 24) { text in
            for (offset, character) in "0000-00-00T00:00:00.000Z".utf8.enumerated() { text[offset] = character }
            func put(_ value: Int64, width: Int, endingAt end: Int) {
                var rest = value
                for offset in stride(from: end - 1, through: end - width, by: -1) {
                    text[offset] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
            }
            put(year, width: 4, endingAt: 4)
            put(month, width: 2, endingAt: 7)
            put(day, width: 2, endingAt: 10)
            put(seconds / 3600, width: 2, endingAt: 13)
            put(seconds / 60 % 60, width: 2, endingAt: 16)
            put(seconds % 60, width: 2, endingAt: 19)
            put(milliseconds % 1000, width: 3, endingAt: 23)
            return 24
        }
    }

    public var description: String { rfc3339 }

    /// The instant of text in exactly the form `rfc3339` writes (`2026-11-22T09:30:00.000Z`); nil for any
    /// other text. For reading back what this service wrote, not for parsing what clients send.
    public init?(rfc3339 text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 24, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
            bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"), bytes[19] == UInt8(ascii: "."),
            bytes[23] == UInt8(ascii: "Z")
        else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
            let minute = number(14..<16), let second = number(17..<19), let millisecond = number(20..<23),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60
        else { return nil }
        let days = Self.daysSince1970(year: year, month: month, day: day)
        guard Self.civilDate(daysSince1970: days) == (year, month, day) else { return nil }
        millisecondsSince1970 = ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millisecond
    }

    /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (Howard Hinnant's `days_from_civil`,
    /// the inverse of `civilDate`).
    static func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// Year, month and day of the proleptic Gregorian calendar for a day count from 1970-01-01 (Howard
    /// Hinnant's `civil_from_days`, "chrono-Compatible Low-Level Date Algorithms").
    static func civilDate(daysSince1970: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = daysSince1970 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func digits(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}

extension Int64 {
    /// Quotient rounded towards minus infinity and a remainder in [0, divisor).
    fileprivate func floorDivided(by divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        let quotient = self / divisor, remainder = self % divisor
        return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }
}

extension Duration {
    /// The duration in milliseconds, with the fraction: for logs and reports.
    public var milliseconds: Double {
        Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
    }

    /// The duration in whole milliseconds, rounded towards zero.
    public var wholeMilliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }

    /// The duration in whole nanoseconds, rounded towards zero: what a metrics timer records.
    public var wholeNanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }

    /// Whole seconds, rounded up: what a `Retry-After` header says, so that a client never retries too early.
    public var wholeSecondsRoundedUp: Int64 {
        let milliseconds = wholeMilliseconds
        return milliseconds <= 0 ? 0 : (milliseconds + 999) / 1000
    }
}

/// Where rules read the time. Every rule that depends on time (token lifetime, rate limits, position age,
/// event retention) takes one, so that tests move time instead of waiting for it.
public protocol WallClock: Sendable {
    var now: Timestamp { get }
    /// Time on a clock that never jumps, from an arbitrary start: for how long ago something happened in this
    /// process, which the wall clock (set back or forward by NTP) cannot tell.
    var uptime: Duration { get }
    /// Waits for `duration`, as `Task.sleep` does; rules call it to slow answers down.
    func sleep(for duration: Duration) async throws
}

/// The system's clock.
public struct SystemClock: WallClock {
    /// Where `uptime` counts from: this process's first reading.
    private static let start = ContinuousClock.now

    public init() {}
    public var now: Timestamp { Timestamp(Date()) }
    public var uptime: Duration { Self.start.duration(to: .now) }
    public func sleep(for duration: Duration) async throws { try await Task.sleep(for: duration) }
}

/// A clock that moves only when told: the twin of `SystemClock` for tests. `sleep(for:)` moves the clock
/// forward at once and records the wait, so that a test can check how long a rule made a caller wait. `now`
/// and `uptime` move together.
public final class ManualClock: WallClock {
    private struct State {
        var now: Timestamp
        var uptime: Duration = .zero
        var sleeps: [Duration] = []
    }

    private let state: Mutex<State>

    /// Starts at 2026-11-22T09:00:00Z unless told otherwise.
    public init(now: Timestamp = Timestamp(millisecondsSince1970: 1_795_338_000_000)) {
        state = Mutex(State(now: now))
    }

    public var now: Timestamp { state.withLock { $0.now } }

    public var uptime: Duration { state.withLock { $0.uptime } }

    /// Every wait asked of this clock, in order.
    public var sleeps: [Duration] { state.withLock { $0.sleeps } }

    public func advance(by duration: Duration) {
        state.withLock {
            $0.now = $0.now + duration
            $0.uptime += duration
        }
    }

    public func sleep(for duration: Duration) async throws {
        state.withLock {
            $0.sleeps.append(duration)
            $0.now = $0.now + duration
            $0.uptime += duration
        }
    }
}
