import Foundation
import VicinityCore

/// What became of one push, as the push service answered it (RFC 8030 §5 and §7; RFC 8292 §4). It says more than
/// the outbox's `DeliveryOutcome`: a subscription that is gone is to be removed with its device, not only dropped.
public enum WebPushOutcome: Hashable, Sendable {
    /// The push service took the message (RFC 8030 §5: 201 Created; some services answer 200 or 202).
    case delivered
    /// The subscription no longer exists (404 for an expired one, RFC 8030 §7.3; 410, RFC 9110 §15.5.11), or was
    /// made with another VAPID key (403, RFC 8292 §4.2): the message is dropped and the device removed, or every
    /// later push to it meets the same answer.
    case gone(reason: String)
    /// Not now: the push service was unreachable, overloaded (429) or failing (5xx); not before `after` when it
    /// said so in `Retry-After`.
    case retry(after: Duration?, reason: String)
    /// Refused for good: this message will never be taken (too large, malformed, not https).
    case failed(reason: String)
    /// The push service refused the VAPID token (401): no push gets through until an operator fixes the key or
    /// the subject; messages are kept.
    case misconfigured(reason: String)

    /// What the outbox does with the message: a subscription that is gone goes with its device.
    public var deliveryOutcome: DeliveryOutcome {
        switch self {
        case .delivered: .delivered
        case .gone(let reason): .gone(reason: reason)
        case .failed(let reason): .failed(reason: reason)
        case .retry(let after, let reason): .retry(after: after, reason: reason)
        case .misconfigured(let reason): .misconfigured(reason: reason)
        }
    }

    /// Reads a push service's answer: its status, its `Retry-After` when it gave one, and the start of its body
    /// (`detail`, which services fill with their reason) for the words.
    static func answer(status: Int, retryAfter: String?, detail: String, now: Date) -> WebPushOutcome {
        let said = "the push service answered \(status)" + (detail.isEmpty ? "" : ": \(detail)")
        switch status {
        case 200..<300:
            return .delivered
        case 404, 410:
            return .gone(reason: "subscription gone (\(said))")
        // RFC 8292 §4.2: 403 when the token's key is not the one the subscription was made with (the key changed
        // since): that subscription can never take this server's pushes, and the browser must subscribe again.
        case 403:
            return .gone(reason: "subscription made with another VAPID key (\(said))")
        // 401: the token itself was refused, for every subscription alike.
        case 401:
            return .misconfigured(reason: "the push service refused the VAPID token (\(said))")
        // RFC 8030 §7.2.
        case 413:
            return .failed(reason: "the push service refused the message as too large (\(said))")
        case 400:
            return .failed(reason: "the push service refused the request as malformed (\(said))")
        // RFC 9110 §15.5.9: 408 is the server giving up on a slow request; 429 (RFC 6585 §4) and 5xx: not now.
        case 408, 429, 500..<600:
            return .retry(after: retryAfter.flatMap { RetryAfter.delay($0, now: now) }, reason: said)
        default:
            return .failed(reason: said)
        }
    }
}
