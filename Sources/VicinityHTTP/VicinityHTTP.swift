import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdHTTP2
import Logging
import NIOCore
import Prometheus
import ServiceLifecycle
import VicinityCore

/// What the HTTP front may be tuned with; everything has the documented default.
public struct HTTPOptions: Sendable {
    /// Larger request bodies get 413. The largest body this API takes (a sign-up) is well under 1 KiB.
    public var maximumBodyBytes: Int
    /// Longer request targets (path and query string) get 414, and longer header lines 431 (`HeadLimits`).
    /// 8 KiB, nginx's `large_client_header_buffers` size: any query this API takes fits several times over,
    /// and a head is refused where the proxy in front would refuse it.
    public var maximumRequestTargetBytes: Int
    /// A connection that sends nothing for this long is closed, so that idle or stalled sockets cannot pile up.
    /// 90 s outlasts the 60 s for which a reverse proxy such as nginx keeps idle upstream connections by
    /// default (`keepalive_timeout`), so that the proxy, not the server, closes a connection it may reuse.
    public var idleTimeout: Duration
    /// How often an open event stream gets a comment line when no event comes. 25 s stays under the 60 s
    /// after which nginx (`proxy_read_timeout`) and common load balancers drop a quiet upstream response.
    public var eventHeartbeat: Duration
    /// Reverse proxies (IP addresses) whose `X-Forwarded-For` names the client. None by default: the
    /// connection's peer is the client.
    public var trustedProxies: Set<String>
    /// From a request's first byte to its last, headers and body together; past it the answer is 408 and the
    /// connection closes (`RequestDeadlineHandler`). 20 s lets a phone on a weak link send the largest body
    /// (64 KiB) at 26 kbit/s, and bounds how long a client trickling bytes holds a connection.
    public var requestTimeout: Duration
    /// Open connections served at once; past it a new connection takes the place of the one that has waited
    /// longest for a request, or is answered 503 at once when every one is being answered (`ConnectionGate`).
    /// `vicinity serve` keeps it well below the process's descriptor limit (`DescriptorLimit.connectionCap`).
    public var maximumConnections: Int
    /// Open connections of one client (`addressGroups`) served at once. 256 lets a lecture hall of a hundred
    /// phones behind one campus NAT each hold an event stream and a request connection; one client alone
    /// cannot fill the server.
    public var maximumConnectionsPerClient: Int
    /// Which addresses are one client, for the connection cap and every limit per client address.
    public var addressGroups: AddressGroups
    /// Trusted proxies and address groups together: who a client is.
    var addressing: ClientAddressing { ClientAddressing(trustedProxies: trustedProxies, groups: addressGroups) }
    /// A client that takes none of what the server writes for this long is cut (`StalledReaderHandler`). 60 s,
    /// as nginx's `send_timeout`: a phone in a tunnel recovers within it, and an event stream cut after it is
    /// resumed with `Last-Event-ID`.
    public var stalledReaderTimeout: Duration
    /// The map page at `/`: where Leaflet is, tiles, where the map opens.
    public var page: PageOptions
    /// Serve over TLS with these certificates, and redirect plain HTTP to it; nil for plain HTTP.
    public var tls: TLSOptions?
    /// Where a line for each request goes (`serve --access-log`); nil for none.
    public var accessLog: AccessLog?

    public static let standard = HTTPOptions()

    public init(
        maximumBodyBytes: Int = 64 * 1024,
        maximumRequestTargetBytes: Int = 8 * 1024,
        idleTimeout: Duration = .seconds(90),
        eventHeartbeat: Duration = .seconds(25),
        trustedProxies: Set<String> = [],
        requestTimeout: Duration = .seconds(20),
        maximumConnections: Int = 10_000,
        maximumConnectionsPerClient: Int = 256,
        addressGroups: AddressGroups = .standard,
        stalledReaderTimeout: Duration = .seconds(60),
        page: PageOptions = .standard,
        tls: TLSOptions? = nil,
        accessLog: AccessLog? = nil
    ) {
        self.maximumBodyBytes = maximumBodyBytes
        self.maximumRequestTargetBytes = maximumRequestTargetBytes
        self.idleTimeout = idleTimeout
        self.eventHeartbeat = eventHeartbeat
        self.trustedProxies = trustedProxies
        self.requestTimeout = requestTimeout
        self.maximumConnections = maximumConnections
        self.maximumConnectionsPerClient = maximumConnectionsPerClient
        self.addressGroups = addressGroups
        self.stalledReaderTimeout = stalledReaderTimeout
        self.page = page
        self.tls = tls
        self.accessLog = accessLog
    }

    /// Who may connect, and for how long a request and a stalled reader may hold a connection.
    func connectionGuard(gate: ConnectionGate? = nil) -> ConnectionGuard {
        ConnectionGuard(
            gate: gate ?? ConnectionGate(maximumConnections: maximumConnections, maximumPerClient: maximumConnectionsPerClient),
            addressing: addressing, requestTimeout: requestTimeout, stalledReaderTimeout: stalledReaderTimeout,
            lineBytes: maximumRequestTargetBytes)
    }

    /// Hummingbird's HTTP/1.1 channel with the idle timeout and the head limits (`HeadLimits`).
    func http1Channel(responder: @escaping HTTPChannelHandler.Responder) -> HTTP1Channel {
        HTTP1Channel(
            responder: responder,
            configuration: .init(
                idleTimeout: TimeAmount(idleTimeout),
                httpDecoderConfiguration: HeadLimits.decoder(lineBytes: maximumRequestTargetBytes)))
    }
}

/// How the service is served over TLS.
public struct TLSOptions: Sendable {
    /// What new connections are served with; `reload` reads the files again.
    public var certificates: TLSCertificates
    /// A plain-HTTP port whose every answer redirects to the TLS listener (`HTTPSRedirectResponder`); nil for none.
    public var redirectPort: Int?

    public init(certificates: TLSCertificates, redirectPort: Int? = nil) {
        self.certificates = certificates
        self.redirectPort = redirectPort
    }
}

/// Every route of the service, grouped by feature. The one list the router registers, the 405 answers read
/// and the OpenAPI document is tested against.
public func routeTable<S: Stores>(
    services: Services<S>, options: HTTPOptions = .standard, metrics: PrometheusCollectorRegistry
) -> RouteTable {
    let groups: [any RouteGroup] = [
        PlaceRoutes<S>(places: services.places),
        AccountRoutes(accounts: services.accounts, alerts: services.alerts, options: options),
        FriendRoutes(friends: services.friends, options: options),
        BlockRoutes(friends: services.friends, options: options),
        AlertRoutes(alerts: services.alerts, options: options),
        EventRoutes(events: services.events, options: options),
        VoteRoutes(votes: services.votes, options: options),
        DeviceRoutes(devices: services.devices, options: options),
        PushRoutes(push: services.push, options: options),
        OperationRoutes<S>(
            places: services.places, follower: services.follower, metrics: metrics, openAPIDocument: OpenAPIDocument.load()),
        PageRoutes(options: options.page),
    ]
    var table = RouteTable()
    for group in groups { group.register(in: &table) }
    return table
}

/// The router with every route and middleware, for tests and for `buildApplication`.
///
/// Middleware order, outermost first: over TLS `Strict-Transport-Security`, access log (when asked for), request
/// log, metrics, HEAD without content, gzip of JSON answers, problem mapping, request limits, client address (grouped, and behind
/// trusted proxies). Logging and metrics sit outside the problem mapping so that they see the status the client
/// gets. Signed-in routes check the bearer token before their handler runs and
/// put the caller in the context.
public func buildRouter<S: Stores>(
    services: Services<S>,
    options: HTTPOptions = .standard,
    metrics: PrometheusCollectorRegistry
) -> Router<VicinityRequestContext> {
    buildRouter(
        table: routeTable(services: services, options: options, metrics: metrics), accounts: services.accounts, options: options,
        requestMetrics: RequestMetrics())
}

/// The router over a route table that an application's connections also answer from (`ImmediateRoutes`), with
/// the request metrics they share.
func buildRouter<S: Stores>(
    table: RouteTable, accounts: AccountService<S>, options: HTTPOptions, requestMetrics: RequestMetrics
) -> Router<VicinityRequestContext> {
    let router = Router(context: VicinityRequestContext.self)
    if options.tls != nil { router.add(middleware: StrictTransportSecurityMiddleware()) }
    if let accessLog = options.accessLog {
        router.add(middleware: AccessLogMiddleware(log: accessLog, addressing: options.addressing))
    }
    router.add(middleware: RequestLogMiddleware())
    router.add(middleware: RequestMetricsMiddleware(metrics: requestMetrics))
    router.add(middleware: HeadMiddleware())
    router.add(middleware: CompressionMiddleware())
    router.add(middleware: ProblemMiddleware(routes: table, options: options, outages: OutageLog()))
    router.add(middleware: RequestLimitsMiddleware(options: options))
    router.add(middleware: ClientAddressMiddleware(addressing: options.addressing))
    for entry in table.entries {
        let handler = entry.handler
        let methods: [HTTPRequest.Method] = entry.info.method == .get ? [.get, .head] : [entry.info.method]
        for method in methods {
            switch entry.info.access {
            case .anyone:
                router.on(RouterPath(entry.info.path), method: method) { request, context in try await handler(request, context) }
            case .signedIn:
                router.on(RouterPath(entry.info.path), method: method) { request, context in
                    var context = context
                    context.identity = try await accounts.authenticate(token: try BearerToken.read(request))
                    return try await handler(request, context)
                }
            }
        }
    }
    return router
}

/// The token of an `Authorization: Bearer <token>` header (RFC 6750 §2.1).
enum BearerToken {
    static func read(_ request: Request) throws(ServiceError) -> String {
        guard let header = request.headers[.authorization] else { throw .unauthenticated }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { throw .unauthenticated }
        return HTTPText.trimmed(parts[1])
    }
}

/// The HTTP service, ready for `runService()` or a `ServiceGroup`.
///
/// Request metrics go through swift-metrics, so the caller bootstraps `MetricsSystem` with a
/// `PrometheusMetricsFactory` over `metrics` first; this library never bootstraps logging or metrics itself.
/// `onListening` is called once the socket is bound, with the address it is bound to (the real port when
/// `port` is 0), so that "serving on ..." is only said when it is true; `onRedirectListening` likewise for the
/// plain-HTTP redirect listener of `options.tls`, when there is one.
///
/// With `options.tls` the listener speaks TLS only, HTTP/2 and HTTP/1.1 chosen by ALPN (`GuardedTLSChannel`). The
/// redirect listener shares the connection caps with it: both hold descriptors of the same process.
public func buildApplication<S: Stores>(
    services: Services<S>,
    options: HTTPOptions = .standard,
    host: String = "127.0.0.1",
    port: Int = 8080,
    metrics: PrometheusCollectorRegistry,
    logger: Logger,
    background: [any Service] = [],
    onListening: @escaping @Sendable (_ host: String, _ port: Int) async -> Void = { _, _ in },
    onRedirectListening: @escaping @Sendable (_ host: String, _ port: Int) async -> Void = { _, _ in }
) -> some ApplicationProtocol {
    buildApplication(
        services: services, options: options, host: host, port: port, metrics: metrics, logger: logger,
        background: background, gate: nil, onListening: onListening, onRedirectListening: onRedirectListening)
}

/// The application behind the given gate (nil: one made from `options`), which tests read to see how many
/// connections it held at most.
func buildApplication<S: Stores>(
    services: Services<S>,
    options: HTTPOptions,
    host: String,
    port: Int,
    metrics: PrometheusCollectorRegistry,
    logger: Logger,
    background: [any Service],
    gate: ConnectionGate?,
    onListening: @escaping @Sendable (_ host: String, _ port: Int) async -> Void,
    onRedirectListening: @escaping @Sendable (_ host: String, _ port: Int) async -> Void = { _, _ in }
) -> some ApplicationProtocol {
    let guarding = options.connectionGuard(gate: gate)
    let table = routeTable(services: services, options: options, metrics: metrics)
    let requestMetrics = RequestMetrics()
    let immediate = ImmediateRoutes(table: table, options: options, metrics: requestMetrics, logger: logger)
    let server: HTTPServerBuilder
    var redirect: [any Service] = []
    let tlsPort = ListeningPort()
    if let tls = options.tls {
        let requestTimeout = options.requestTimeout
        server = HTTPServerBuilder { responder in
            GuardedTLSChannel(
                http1: options.http1Channel(responder: responder),
                http2: HTTP2Channel(
                    responder: responder,
                    configuration: .init(
                        idleTimeout: options.idleTimeout,
                        streamConfiguration: .init(
                            additionalChannelHandlers: [HTTP2StreamPresence(), StreamDeadlineHandler(timeout: requestTimeout), ConnectionFieldsHandler()]))),
                certificates: tls.certificates, guarding: guarding, immediate: immediate)
        }
        if let redirectPort = tls.redirectPort {
            redirect.append(Application(
                responder: HTTPSRedirectResponder(tlsPort: tlsPort),
                server: HTTPServerBuilder { responder in
                    GuardedHTTP1Channel(
                        http1: options.http1Channel(responder: responder), guarding: guarding, immediate: nil)
                },
                configuration: ApplicationConfiguration(address: .hostname(host, port: redirectPort), serverName: ImmediateRoutes.serverName),
                onServerRunning: { channel in await onRedirectListening(host, channel.localAddress?.port ?? redirectPort) },
                logger: logger))
        }
    } else {
        server = HTTPServerBuilder { responder in
            GuardedHTTP1Channel(
                http1: options.http1Channel(responder: responder), guarding: guarding, immediate: immediate)
        }
    }
    return Application(
        router: buildRouter(table: table, accounts: services.accounts, options: options, requestMetrics: requestMetrics),
        server: server,
        configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: ImmediateRoutes.serverName),
        services: [
            ChangeFollowing(follower: services.follower, moves: services.moves, logger: logger),
            VoteAnnouncer(votes: services.votes, logger: logger),
            SharingAnnouncer(friends: services.friends, interval: services.votes.rules.announcementInterval, logger: logger),
            OutboxDelivery(sender: services.outbox, logger: logger),
        ] + redirect + background,
        onServerRunning: { channel in
            let bound = channel.localAddress?.port ?? port
            tlsPort.bound(bound)
            await onListening(host, bound)
        },
        logger: logger
    )
}
