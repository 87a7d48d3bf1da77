import Foundation

/// Which APNs a device token belongs to: an app built for development registers with the sandbox, one from the
/// App Store or TestFlight with production, and a token sent to the other is refused (400 BadDeviceToken).
public enum APNsEnvironment: String, Sendable, CaseIterable {
    case production
    case sandbox

    /// Apple, "Sending notification requests to APNs": the hosts of the two environments.
    public var host: String {
        switch self {
        case .production: "api.push.apple.com"
        case .sandbox: "api.sandbox.push.apple.com"
        }
    }

    /// The host on port 443, https's own (RFC 9110 §4.2.2), where Apple says to connect. A URL of literal parts
    /// always parses, so the unwrap cannot fail.
    public var server: URL { URL(string: "https://\(host)")! }
}
