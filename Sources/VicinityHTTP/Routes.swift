import Hummingbird
import NIOCore
import VicinityCore

/// The request context of every route: who is calling, once a signed-in route has checked their token, and
/// from which address, for limits per client address.
public struct VicinityRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The connection's peer IP address; nil when the transport has none (tests through the router).
    public let peerAddress: String?
    /// The client's address: the peer's, or the one a trusted proxy forwarded (`ClientAddressMiddleware`).
    public var clientAddress: String?
    /// How addresses group into clients (`HTTPOptions.addressing`), set by `ClientAddressMiddleware`.
    var addressGroups = AddressGroups.standard
    /// Set by the route table on signed-in routes before the handler runs.
    public var identity: Identity?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        peerAddress = source.channel.remoteAddress?.ipAddress
        clientAddress = peerAddress
        identity = nil
    }

    /// The signed-in caller. Only signed-in routes call it, and the route table has authenticated them.
    func signedIn() throws(ServiceError) -> Identity {
        guard let identity else { throw .unauthenticated }
        return identity
    }

    /// The client, for limits per client address: its address's group.
    var address: ClientAddress { ClientAddress(clientAddress.map(addressGroups.key(for:))) }
}

/// Who may call a route.
public enum Access: String, Hashable, Sendable {
    /// Guests too: no token needed, and one given is not looked at.
    case anyone
    /// A valid bearer token from `POST /v1/sessions`; without one the answer is 401.
    case signedIn
}

/// One operation of the HTTP contract: a method on a path template.
public struct RouteInfo: Hashable, Sendable, CustomStringConvertible {
    public let method: HTTPRequest.Method
    /// The path in OpenAPI template syntax, which Hummingbird's router also reads.
    public let path: String
    public let access: Access

    public var description: String { "\(method.rawValue) \(path)" }

    /// The number of `{name}` segments: a literal segment beats a parameter, in the router and in 405s.
    var parameterCount: Int { path.split(separator: "/").filter { $0.first == "{" }.count }

    /// True when a request path fits the template; `{name}` stands for any one non-empty segment.
    func matches(path requestPath: String) -> Bool {
        let template = path.split(separator: "/")
        let segments = requestPath.split(separator: "/")
        guard template.count == segments.count else { return false }
        return zip(template, segments).allSatisfy { expected, actual in
            (expected.first == "{" && expected.last == "}") || expected == actual
        }
    }
}

typealias RouteHandler = @Sendable (Request, VicinityRequestContext) async throws -> Response

/// Every operation the service answers: route groups add theirs, the router registers them, the 405 answers
/// read their methods and the OpenAPI test compares them with the document. HEAD is answered wherever GET
/// is, by the GET logic (`HeadMiddleware` drops the content).
public struct RouteTable: Sendable {
    struct Entry: Sendable {
        var info: RouteInfo
        var handler: RouteHandler
        /// The same handler, for routes whose answer never waits (`ImmediateAnswer`).
        var immediate: ImmediateHandler?
    }

    private(set) var entries: [Entry] = []

    /// The operations as the document lists them (HEAD is stated once for all GETs there).
    public var operations: [RouteInfo] { entries.map(\.info) }

    mutating func add(_ method: HTTPRequest.Method, _ path: String, _ access: Access, _ handler: @escaping RouteHandler) {
        precondition(!entries.contains { $0.info.method == method && $0.info.path == path }, "\(method) \(path) is registered twice")
        entries.append(Entry(info: RouteInfo(method: method, path: path, access: access), handler: handler))
    }

    /// A route anyone may call, at a path without parameters, whose answer is worked out without waiting: the router
    /// answers it as any other, and HTTP/1.1 connections answer it from their event loop (`ImmediateRoutesHandler`).
    mutating func add(_ method: HTTPRequest.Method, _ path: String, immediate handler: @escaping ImmediateHandler) {
        precondition(method == .get && !path.contains("{"), "only a GET at a fixed path is answered from the event loop")
        add(method, path, .anyone) { request, _ in try handler(request).response }
        entries[entries.count - 1].immediate = handler
    }

    /// The methods answered at the path the router would pick for this request path: the most specific
    /// template that matches (fewest parameters), as the router's trie prefers literals; with HEAD beside GET.
    func allowedMethods(forRequestPath path: String) -> (template: String, methods: [HTTPRequest.Method])? {
        let matching = entries.map(\.info).filter { $0.matches(path: path) }
        guard let best = matching.min(by: { $0.parameterCount < $1.parameterCount }) else { return nil }
        let methods = matching.filter { $0.path == best.path }.flatMap { $0.method == .get ? [.get, .head] : [$0.method] }
        return (best.path, methods)
    }
}

/// A feature's routes: each group registers its own paths and methods.
protocol RouteGroup: Sendable {
    func register(in table: inout RouteTable)
}
