import Hummingbird
import Logging
import NIOCore
import Prometheus
import VicinityCore

/// What the HTTP front may be tuned with; everything has the documented default.
public struct HTTPOptions: Sendable {
    /// The categories `/v1/temples/recommended` answers with.
    public var temples: TempleCategories
    /// Larger request bodies get 413. Every endpoint is a GET today, so nothing legitimate comes near 64 KiB.
    public var maximumBodyBytes: Int
    /// Longer request targets (path and query string) get 414. 4 KiB holds any query this API takes.
    public var maximumRequestTargetBytes: Int
    /// A connection that sends nothing for this long is closed, so that idle or stalled sockets cannot pile up.
    /// 90 s outlasts the 60 s for which a reverse proxy such as nginx keeps idle upstream connections by
    /// default (`keepalive_timeout`), so that the proxy, not the server, closes a connection it may reuse.
    public var idleTimeout: Duration

    public static let standard = HTTPOptions()

    public init(
        temples: TempleCategories = .standard,
        maximumBodyBytes: Int = 64 * 1024,
        maximumRequestTargetBytes: Int = 4 * 1024,
        idleTimeout: Duration = .seconds(90)
    ) {
        self.temples = temples
        self.maximumBodyBytes = maximumBodyBytes
        self.maximumRequestTargetBytes = maximumRequestTargetBytes
        self.idleTimeout = idleTimeout
    }
}

/// Every endpoint the service answers: the one list the router registers, the 405 check reads, and the
/// OpenAPI document is tested against.
public enum Endpoint: String, CaseIterable, Sendable {
    case nearbyPlaces
    case closestPlace
    case searchPlaces
    case place
    case recommendedTemples
    case distance
    case health
    case metrics
    case openAPIDocument

    public var method: HTTPRequest.Method { .get }

    /// What the endpoint answers: its method, and HEAD wherever that is GET (the GET logic answers; the
    /// `HeadMiddleware` drops the content).
    var allowedMethods: [HTTPRequest.Method] { method == .get ? [.get, .head] : [method] }

    /// The path in OpenAPI template syntax, which Hummingbird's router also reads.
    public var path: String {
        switch self {
        case .nearbyPlaces: "/v1/places/nearby"
        case .closestPlace: "/v1/places/closest"
        case .searchPlaces: "/v1/places"
        case .place: "/v1/places/{id}"
        case .recommendedTemples: "/v1/temples/recommended"
        case .distance: "/v1/distance"
        case .health: "/health"
        case .metrics: "/metrics"
        case .openAPIDocument: "/openapi.yaml"
        }
    }

    /// True when a request path fits the template; `{name}` stands for any one non-empty segment.
    func matches(path: String) -> Bool {
        let template = self.path.split(separator: "/")
        let segments = path.split(separator: "/")
        guard template.count == segments.count else { return false }
        return zip(template, segments).allSatisfy { expected, actual in
            (expected.first == "{" && expected.last == "}") || expected == actual
        }
    }
}

/// The router with every endpoint and middleware, for tests and for `buildApplication`.
///
/// Middleware order, outermost first: request log, metrics, HEAD without content, problem mapping, request
/// limits. Logging and metrics sit outside the problem mapping so that they see the status the client gets.
public func buildRouter<Places: PlaceStore, Campuses: CampusStore>(
    locator: Locator<Places, Campuses>,
    options: HTTPOptions = .standard,
    metrics: PrometheusCollectorRegistry
) -> Router<BasicRequestContext> {
    let router = Router(context: BasicRequestContext.self)
    router.add(middleware: RequestLogMiddleware())
    router.add(middleware: MetricsMiddleware())
    router.add(middleware: HeadMiddleware())
    router.add(middleware: ProblemMiddleware(routes: Endpoint.allCases, options: options))
    router.add(middleware: RequestLimitsMiddleware(options: options))
    let api = API(locator: locator, options: options, metrics: metrics, openAPIDocument: OpenAPIDocument.load())
    for endpoint in Endpoint.allCases {
        for method in endpoint.allowedMethods {
            router.on(RouterPath(endpoint.path), method: method) { request, context in
                try await api.respond(to: endpoint, request: request, context: context)
            }
        }
    }
    return router
}

/// The HTTP service, ready for `runService()` or a `ServiceGroup`.
///
/// Request metrics go through swift-metrics, so the caller bootstraps `MetricsSystem` with a
/// `PrometheusMetricsFactory` over `metrics` first; this library never bootstraps logging or metrics itself.
/// `onListening` is called once the socket is bound, with the address it is bound to (the real port when
/// `port` is 0), so that "serving on ..." is only said when it is true.
public func buildApplication<Places: PlaceStore, Campuses: CampusStore>(
    locator: Locator<Places, Campuses>,
    options: HTTPOptions = .standard,
    host: String = "127.0.0.1",
    port: Int = 8080,
    metrics: PrometheusCollectorRegistry,
    logger: Logger,
    onListening: @escaping @Sendable (_ host: String, _ port: Int) async -> Void = { _, _ in }
) -> some ApplicationProtocol {
    Application(
        router: buildRouter(locator: locator, options: options, metrics: metrics),
        server: .http1(configuration: .init(idleTimeout: TimeAmount(options.idleTimeout))),
        configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "Vicinity"),
        onServerRunning: { channel in await onListening(host, channel.localAddress?.port ?? port) },
        logger: logger
    )
}
