import Foundation

/// The URL options on how long things may take, read as libpq and PostgreSQL write them, and on when statements
/// run prepared, as psycopg names it.
extension PostGISConfiguration {
    /// Every option the URL may carry.
    static let options = ["sslmode", "schema", "connect_timeout", "statement_timeout", "keepalives_idle", "keepalives", "prepare_threshold"]

    /// libpq's whole seconds (`connect_timeout=10`).
    static func seconds(_ item: URLQueryItem, atLeast minimum: Int64) throws(Problem) -> Duration {
        guard let text = item.value, let seconds = Int64(text), seconds >= minimum, seconds <= longest else {
            throw Problem(description: "\(item.name) must be a whole number of seconds from \(minimum) to \(longest)")
        }
        return .seconds(seconds)
    }

    /// PostgreSQL's way of writing a time setting: a whole number, in milliseconds unless a unit follows (`ms`,
    /// `s`, `min`, `h`, `d`); 0 turns the timeout off.
    static func statementTimeout(_ item: URLQueryItem) throws(Problem) -> Duration {
        let text = item.value ?? ""
        let digits = text.prefix { $0.isASCII && $0.isNumber }
        let units: [String: Int64] = ["": 1, "ms": 1, "s": 1000, "min": 60_000, "h": 3_600_000, "d": 86_400_000]
        guard !digits.isEmpty, let count = Int64(digits), let unit = units[String(text.dropFirst(digits.count))],
            count <= longest * 1000 / unit
        else {
            throw Problem(description: "statement_timeout must be a whole number with ms, s, min, h or d (milliseconds without), such as 5s; 0 for none")
        }
        return .milliseconds(count * unit)
    }

    /// A whole number of runs, 0 to 1,000 (0 and 1 alike prepare at the first run), or `none`.
    static func prepareThreshold(_ item: URLQueryItem) throws(Problem) -> Int? {
        if item.value == "none" { return nil }
        guard let text = item.value, let runs = Int(text), (0...1000).contains(runs) else {
            throw Problem(description: "prepare_threshold must be a whole number of runs from 0 to 1000, or none")
        }
        return runs
    }

    /// A day: past any sensible wait, so a longer one is a slip, and the milliseconds stay well within `Int64`.
    private static var longest: Int64 { 86_400 }
}
