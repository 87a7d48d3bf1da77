/// Where one app on one device is reached: the token the app got from `registerForRemoteNotifications`, as the
/// hex text apps send to their server. Checked when read and kept in lower case, so that one device is one value
/// however its app wrote the token. Never logged, and never in an outcome's words: it is all anyone needs to
/// push to the device with the service's key.
public struct APNsDeviceToken: Hashable, Sendable, CustomStringConvertible {
    /// The token in lower-case hex, as it goes in the request's path (`/3/device/<token>`).
    public let hex: String

    /// Today's tokens are 32 octets (64 hex digits); Apple says their length may change ("Registering your app
    /// with APNs": don't hard-code it), so up to 100 octets are taken.
    public static let hexLengths = 64...200

    public init(_ text: String) throws(APNsProblem) {
        guard Self.hexLengths.contains(text.utf8.count), text.utf8.count.isMultiple(of: 2),
              text.utf8.allSatisfy({ Self.isHexDigit($0) })
        else {
            throw APNsProblem(
                "an APNs device token is an even number of hex digits, \(Self.hexLengths.lowerBound) to \(Self.hexLengths.upperBound)")
        }
        hex = text.lowercased()
    }

    /// The token withheld, so that printing one cannot leak it.
    public var description: String { "APNs device token (\(hex.utf8.count / 2) octets, withheld)" }

    static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }
}
