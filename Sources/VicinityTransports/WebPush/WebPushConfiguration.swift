import AsyncHTTPClient
import NIOCore

/// How the service sends Web Push: who it says it is (the VAPID key and subject, `serve --vapid-key
/// --vapid-subject`), whether plain http endpoints are taken (`serve --push-allow-http`, for tests), and how long
/// one request may take.
public struct WebPushConfiguration: Sendable {
    public let key: VAPIDKey
    public let subject: VAPIDSubject
    /// Whether an `http` endpoint is sent to; a real push service is only ever https (RFC 8030 §8).
    public var allowHTTP: Bool
    /// The longest one request may take, connecting included: 10 s, well under the outbox's delivery deadline
    /// (`OutboxRules.deliveryDeadline`, a minute), so that a push service that stalls is a retry the transport names rather
    /// than a try the outbox abandons; and short, since the outbox records a pass's outcomes together and a
    /// device whose push service never answers (any host a registration names) holds its pass that long.
    public var requestTimeout: Duration = .seconds(10)

    public init(key: VAPIDKey, subject: VAPIDSubject, allowHTTP: Bool = false) {
        self.key = key
        self.subject = subject
        self.allowHTTP = allowHTTP
    }

    /// The settings an `HTTPClient` for pushes is best made with: redirects not followed (a push service
    /// answers a push itself, and a redirected POST could turn into a GET); connecting bounded, and a failed
    /// connection a failed push at once rather than one tried again until the connect timeout, since the outbox
    /// retries with its own backoff and a push held meanwhile holds one of its sender's few slots.
    public static var httpClientConfiguration: HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.timeout = HTTPClient.Configuration.Timeout(connect: .seconds(10))
        configuration.connectionPool.retryConnectionEstablishment = false
        return configuration
    }
}
