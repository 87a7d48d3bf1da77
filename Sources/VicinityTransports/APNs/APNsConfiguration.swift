import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL

/// How the service sends to APNs: who it says it is (the signing key, its ID and the team's), which APNs it
/// talks to, and how long one request may take.
public struct APNsConfiguration: Sendable {
    public let key: APNsSigningKey
    public let keyID: APNsKeyID
    public let teamID: APNsTeamID
    /// Choosing an environment points `server` at its host; set `server` after it to send elsewhere (tests).
    public var environment: APNsEnvironment {
        didSet { server = environment.server }
    }
    /// Where requests go: the environment's host unless told otherwise.
    public var server: URL
    /// The longest one request may take, connecting included: 10 s, well under the outbox's delivery deadline
    /// (`OutboxRules.deliveryDeadline`, a minute), so that an APNs that stalls is a retry the transport names rather
    /// than a try the outbox abandons; and short, since the outbox records a pass's outcomes together and a
    /// device whose push service never answers (any host a registration names) holds its pass that long.
    public var requestTimeout: Duration = .seconds(10)

    public init(key: APNsSigningKey, keyID: APNsKeyID, teamID: APNsTeamID, environment: APNsEnvironment = .production) {
        self.key = key
        self.keyID = keyID
        self.teamID = teamID
        self.environment = environment
        self.server = environment.server
    }

    /// The settings an `HTTPClient` for APNs is best made with:
    /// - HTTP/2, which APNs alone speaks (Apple, "Sending notification requests to APNs"): `.automatic` offers
    ///   it by ALPN and takes it, and every push of a connection goes as a stream of it;
    /// - TLS 1.2 or later, the least APNs accepts (Apple, "Setting up a remote notification server");
    /// - connections kept when idle, as Apple asks ("keep your connections with APNs open across multiple
    ///   notifications"; it treats rapid connecting and disconnecting as a denial-of-service attack);
    /// - redirects not followed, and a failed connection a failed push at once rather than one tried again until
    ///   the connect timeout: the outbox retries with its own backoff.
    public static var httpClientConfiguration: HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration()
        configuration.httpVersion = .automatic
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        configuration.tlsConfiguration = tls
        configuration.redirectConfiguration = .disallow
        configuration.timeout = HTTPClient.Configuration.Timeout(connect: .seconds(10))
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.connectionPool.idleTimeout = idleConnectionLife
        return configuration
    }

    /// How long an idle connection is kept: long enough that the outbox's bursts, minutes apart, share one.
    static let idleConnectionLife = TimeAmount.minutes(10)
}
