import Foundation
import VicinityCore

/// What became of one notification, as APNs answered it (Apple, "Handling notification responses from APNs").
/// It says more than the outbox's `DeliveryOutcome`: a device token that is gone is to be removed with its
/// device, not only dropped. No reason ever holds the device token or the provider token.
public enum APNsOutcome: Hashable, Sendable {
    /// APNs took the notification (200), under the `apns-id` it answered with.
    case delivered(apnsID: String?)
    /// The device token is no longer good (410 Unregistered; 400 BadDeviceToken, DeviceTokenNotForTopic): the
    /// message is dropped and the device removed, or every later push to it meets the same answer.
    case gone(reason: String)
    /// Not now: APNs was unreachable, busy (429) or failing (500, 503); not before `after` when it said so in
    /// `Retry-After`.
    case retry(after: Duration?, reason: String)
    /// Refused for good: this notification will never be taken (too large, malformed).
    case failed(reason: String)
    /// APNs refused the service's credentials or topic (403; 400 BadTopic, TopicDisallowed): no notification
    /// gets through until an operator fixes the key, its IDs, the bundle ID or the environment; messages are kept.
    case misconfigured(reason: String)

    /// What the outbox does with the message: a device token that is gone goes with its device.
    public var deliveryOutcome: DeliveryOutcome {
        switch self {
        case .delivered: .delivered
        case .gone(let reason): .gone(reason: reason)
        case .failed(let reason): .failed(reason: reason)
        case .retry(let after, let reason): .retry(after: after, reason: reason)
        case .misconfigured(let reason): .misconfigured(reason: reason)
        }
    }

    /// The reasons of a 403 that mean the provider token itself was refused: the next try signs another.
    static let providerTokenReasons: Set<String> = ["InvalidProviderToken", "ExpiredProviderToken", "MissingProviderToken"]

    /// Reads APNs's answer: its status, the `reason` of its JSON body when it gave one, its `Retry-After` and its
    /// `apns-id`. Apple's table of reasons decides where a status alone would not.
    static func answer(status: Int, reason: String?, retryAfter: String?, apnsID: String?, now: Date) -> APNsOutcome {
        let said = "APNs answered \(status)" + (reason.map { " \($0)" } ?? "")
        switch (status, reason ?? "") {
        case (200, _):
            return .delivered(apnsID: apnsID)
        case (410, _), (400, "BadDeviceToken"), (400, "DeviceTokenNotForTopic"):
            return .gone(reason: "device token no longer valid for this app (\(said))")
        case (403, _):
            return .misconfigured(reason: "APNs refused the key, its key or team ID, or the environment (\(said))")
        // The topic is the one the device registered with: a topic this key may not push to is that device's
        // mistake (or a stranger's), never to be tried again, and no reason to alarm the operator.
        case (400, "BadTopic"), (400, "TopicDisallowed"):
            return .gone(reason: "the device's app is not one this key pushes to (\(said))")
        case (400, "MissingTopic"):
            return .misconfigured(reason: "APNs found no topic in the request (\(said))")
        // 404 BadPath and 405 MethodNotAllowed: the server is not APNs, or not where the configuration says.
        case (404, _), (405, _):
            return .misconfigured(reason: "the server is not APNs or not at the configured address (\(said))")
        // 400 IdleTimeout: the connection sat idle too long, not the notification's fault.
        case (400, "IdleTimeout"):
            return .retry(after: nil, reason: said)
        case (413, _):
            return .failed(reason: "APNs refused the notification as too large (\(said))")
        case (400, _):
            return .failed(reason: "APNs refused the request as malformed (\(said))")
        // 429 TooManyRequests (to one device) and TooManyProviderTokenUpdates, 500 InternalServerError,
        // 503 ServiceUnavailable and Shutdown: not now.
        case (429, _), (500..<600, _):
            return .retry(after: retryAfter.flatMap { RetryAfter.delay($0, now: now) }, reason: said)
        default:
            return .failed(reason: said)
        }
    }

    /// The reason APNs gave: the `reason` of the JSON body (`{"reason":"Unregistered"}`), on one line of
    /// printable characters; nil for a body that is not such JSON.
    static func reason(ofBody body: [UInt8]) -> String? {
        struct ErrorBody: Decodable { var reason: String }
        guard let decoded = try? JSONDecoder().decode(ErrorBody.self, from: Data(body)) else { return nil }
        let reason = ResponseText.printable(Array(decoded.reason.utf8.prefix(reasonLength)))
        return reason.isEmpty ? nil : reason
    }

    /// Apple's reasons are single words of at most 30 letters; 100 keeps any of them whole and a stranger short.
    static let reasonLength = 100

    /// The outcome with `secret` (the device token, the provider token) taken out of its words, should an error
    /// of the network stack or the server have named it.
    func withholding(_ secrets: [String]) -> APNsOutcome {
        func clean(_ text: String) -> String {
            secrets.filter { !$0.isEmpty }.reduce(text) { $0.replacingOccurrences(of: $1, with: "<withheld>") }
        }
        switch self {
        case .delivered: return self
        case .gone(let reason): return .gone(reason: clean(reason))
        case .retry(let after, let reason): return .retry(after: after, reason: clean(reason))
        case .failed(let reason): return .failed(reason: clean(reason))
        case .misconfigured(let reason): return .misconfigured(reason: clean(reason))
        }
    }
}
