import HTTPTypes
import Hummingbird
import CoreMetrics
import Metrics
import Synchronization
import VicinityCore

/// Each route's requests, errors and durations, and the requests under way, under the names Hummingbird's
/// `MetricsMiddleware` gives them (`hb_requests`, `hb_request_errors`, the `http_server_request_duration`
/// histogram, `http_server_active_requests`: dashboards and OPERATIONS' alerts read them).
///
/// One home for the series, so that answers written straight from the event loop (`ImmediateRoutesHandler`) count
/// in the same series as the router's (`RequestMetricsMiddleware`). Each series is made once and kept: the metrics
/// factory looks labels up under its own lock.
final class RequestMetrics: Sendable {
    struct Key: Hashable {
        var route: String
        var method: HTTPRequest.Method
        var status: HTTPResponse.Status
    }

    struct Series: Sendable {
        let requests: Counter
        let duration: Metrics.Timer
        let errors: Counter

        init(_ key: Key, factory: any MetricsFactory) {
            let route = ("http.route", key.route), method = ("http.request.method", key.method.rawValue)
            let status = String(key.status.code)
            requests = Counter(
                label: "hb.requests", dimensions: [route, method, ("http.response.status_code", status)], factory: factory)
            duration = Metrics.Timer(
                label: "http.server.request.duration", dimensions: [route, method, ("http.response.status_code", status)],
                preferredDisplayUnit: .seconds, factory: factory)
            errors = Counter(label: "hb.request.errors", dimensions: [route, method, ("error.type", status)], factory: factory)
        }

        /// A request answered, its last byte handed to the connection `elapsed` after it arrived.
        func answered(after elapsed: Duration) {
            requests.increment()
            duration.recordNanoseconds(elapsed.wholeNanoseconds)
        }
    }

    private let series = Mutex<[Key: Series]>([:])
    private let underWay = Mutex<[HTTPRequest.Method: Meter]>([:])
    /// Nil: the bootstrapped system's, read as each series is made, as Hummingbird's middleware does.
    private let chosenFactory: (any MetricsFactory)?

    /// `factory`: where the series go; tests give their own registry's.
    init(factory: (any MetricsFactory)? = nil) {
        chosenFactory = factory
    }

    private var factory: any MetricsFactory { chosenFactory ?? MetricsSystem.factory }

    /// The gauge of requests under way with this method.
    func underWay(_ method: HTTPRequest.Method) -> Meter {
        underWay.withLock { meters in
            if let meter = meters[method] { return meter }
            let meter = Meter(
                label: "http.server.active_requests", dimensions: [("http.request.method", method.rawValue)], factory: factory)
            meters[method] = meter
            return meter
        }
    }

    func series(_ key: Key) -> Series {
        series.withLock { all in
            if let found = all[key] { return found }
            let made = Series(key, factory: factory)
            all[key] = made
            return made
        }
    }

    func answered(_ key: Key, after elapsed: Duration) {
        series(key).answered(after: elapsed)
    }

    /// A request whose error escaped every middleware that maps errors to answers.
    func failed(_ key: Key) {
        let series = series(key)
        series.requests.increment()
        series.errors.increment()
    }
}

/// Records `RequestMetrics` for every answer of the router: outside the problem mapping, so that it counts the
/// status the client gets, and once the body has been written, so that the duration is the whole answer's.
struct RequestMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: RequestMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let underWay = metrics.underWay(request.method)
        underWay.increment()
        do {
            var response = try await next(request, context)
            let key = RequestMetrics.Key(route: context.endpointPath ?? "Unknown", method: request.method, status: response.status)
            let metrics = metrics, body = response.body
            response.body = ResponseBody(contentLength: body.contentLength) { writer in
                defer {
                    metrics.answered(key, after: ContinuousClock.now - start)
                    underWay.decrement()
                }
                try await body.write(writer)
            }
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status ?? .internalServerError
            metrics.failed(.init(route: context.endpointPath ?? "NotFound", method: request.method, status: status))
            underWay.decrement()
            throw error
        }
    }
}
