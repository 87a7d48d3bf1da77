import Foundation
import GeoCore
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import VicinityCore

/// What went wrong in a request, in the terms of this service. `Problem(for:)` is the one place that says
/// what each of these means in HTTP.
enum APIError: Error, Sendable {
    /// Every bad field of the request.
    case invalidInput([ValidationError])
    case placeNotFound
    /// No file of the map page, or of Leaflet, has this name (Leaflet is missing when not installed).
    case pageFileNotFound
    /// The store holds no place (of the requested categories) to be closest to.
    case noPlaceToBeClosestTo
    case storeUnavailable
    /// This front has not read the record's changes for this long: what it holds in memory may be stale.
    case behindRecord(Duration)
    case requestTargetTooLong(limit: Int)
    /// A header line, or the head as a whole, over the decoder's limits (`HeadLimits`).
    case headerFieldsTooLarge(lineLimit: Int, headLimit: Int)
    case bodyTooLarge(limit: Int)
    /// A body that is not JSON by its `Content-Type`.
    case unsupportedMediaType(given: String?)
    /// A `Last-Event-ID` header that is not an event number.
    case invalidLastEventID
    /// A file the service ships with (the OpenAPI document) could not be read.
    case missingResource(String)
    /// The request did not arrive in full within the whole-request deadline (`RequestDeadlineHandler`).
    case requestTimeout(limit: Duration)
    /// A listener answered before the one it depends on was bound (the HTTPS redirect before the TLS listener).
    case startingUp
}

/// An error response in the shape of RFC 9457 problem details (`application/problem+json`).
///
/// `type` is always `about:blank`: the status says what kind of problem it is, `detail` says what happened,
/// and for invalid input `errors` names every bad field.
struct Problem: HTTPResponseError, Sendable {
    struct FieldError: Encodable, Hashable, Sendable {
        var field: String
        var message: String
    }

    var status: HTTPResponse.Status
    var detail: String
    var errors: [FieldError] = []
    /// Headers the status requires, such as `Allow` for 405.
    var headers: HTTPFields = [:]
    /// Extension members (RFC 9457 §3.2) that let a client act without parsing `detail`, such as how many
    /// ballots a vote still waits for.
    var members: [String: Member] = [:]

    /// An extension member's value: a count, or a name.
    enum Member: Encodable, Hashable, Sendable, ExpressibleByIntegerLiteral, ExpressibleByStringLiteral {
        case number(Int)
        case text(String)

        init(integerLiteral value: Int) { self = .number(value) }
        init(stringLiteral value: String) { self = .text(value) }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .number(let value): try container.encode(value)
            case .text(let value): try container.encode(value)
            }
        }
    }

    static let contentType = "application/problem+json"

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers = headers
        headers[.contentType] = Self.contentType
        let body = Body(
            type: "about:blank", title: status.reasonPhrase, status: status.code, detail: detail,
            errors: errors.isEmpty ? nil : errors, members: members)
        return Response(status: status, headers: headers, body: .init(byteBuffer: try WireEncoding.encode(body)))
    }

    private struct Body: Encodable {
        var type: String
        var title: String
        var status: Int
        var detail: String
        var errors: [FieldError]?
        var members: [String: Member]

        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(type, forKey: Key(stringValue: "type"))
            try container.encode(title, forKey: Key(stringValue: "title"))
            try container.encode(status, forKey: Key(stringValue: "status"))
            try container.encode(detail, forKey: Key(stringValue: "detail"))
            try container.encodeIfPresent(errors, forKey: Key(stringValue: "errors"))
            for (name, value) in members { try container.encode(value, forKey: Key(stringValue: name)) }
        }
    }
}

extension Problem {
    /// The one mapping from errors to HTTP. Anything not recognised is a 500 whose cause stays in the log.
    init(for error: any Error, request: Request, context: some RequestContext, routes: RouteTable, options: HTTPOptions) {
        switch error {
        case let problem as Problem:
            self = problem
        case let error as APIError:
            self.init(error)
        case let error as ServiceError:
            self.init(error, request: request)
        case let error as ValidationError:
            self.init(APIError.invalidInput([error]))
        case is PasswordHashingUnavailable:
            self.init(
                status: .serviceUnavailable, detail: "Passwords cannot be checked right now; try again shortly.",
                headers: [.retryAfter: "1"])
        case StoreError.unavailable:
            // The operator is told by `OutageLog`; the client only that it may retry.
            self.init(
                status: .serviceUnavailable, detail: "The service cannot reach its database right now; try again shortly.",
                headers: [.retryAfter: "\(Self.databaseRetrySeconds)"])
        case let error as RequestTimedOut:
            self.init(APIError.requestTimeout(limit: error.limit))
        case let error as CoordinateError:
            self.init(APIError.invalidInput([ValidationError(field: error.field, message: error.description)]))
        case let error as any HTTPResponseError where error.status == .notFound:
            // The router found no endpoint: either the path is unknown or the method is wrong for it.
            self.init(unroutable: request, context: context, routes: routes)
        case let error as any HTTPResponseError where error.status == .contentTooLarge:
            self.init(APIError.bodyTooLarge(limit: options.maximumBodyBytes))
        case let error as any HTTPResponseError where error.status.code < 500:
            self.init(status: error.status, detail: "The request could not be handled as sent.")
        case let error where ClientAbort.matches(error):
            // Nobody reads this answer; the status tells the request log and the metrics what happened.
            self.init(status: ClientAbort.status, detail: "The client closed the connection before its request arrived in full.")
        default:
            context.logger.error(
                "Unexpected error while handling a request",
                metadata: ["error": "\(String(reflecting: error))", "http.path": "\(LoggedPath(path: request.uri.path))"])
            self.init(status: .internalServerError, detail: "An unexpected error occurred; it has been logged.")
        }
    }

    /// Seconds a client waits before retrying while the database is unavailable: long enough that a restart
    /// of PostgreSQL (a few seconds) is not hammered by every client at once.
    static let databaseRetrySeconds = 5

    init(_ error: APIError) {
        switch error {
        case .invalidInput(let errors):
            let fields = errors.map { FieldError(field: $0.field, message: $0.message) }
            let names = fields.map(\.field).uniqued().joined(separator: ", ")
            self.init(status: .badRequest, detail: "Invalid request parameters: \(names).", errors: fields)
        case .placeNotFound:
            self.init(status: .notFound, detail: "No place has this id.")
        case .pageFileNotFound:
            self.init(status: .notFound, detail: "No file of the map page has this name.")
        case .noPlaceToBeClosestTo:
            self.init(status: .notFound, detail: "The store holds no place of the requested categories to be closest to.")
        case .storeUnavailable:
            self.init(status: .serviceUnavailable, detail: "The place store is not answering.")
        case .behindRecord(let since):
            self.init(
                status: .serviceUnavailable,
                detail: "This server has not read the record's changes for \(since.wholeSecondsRoundedUp) s; another may be current.",
                headers: [.retryAfter: "5"])
        case .requestTargetTooLong(let limit):
            self.init(
                status: .uriTooLong, detail: "The path and query string may be at most \(limit) bytes.",
                headers: [.connection: "close"])
        case .headerFieldsTooLarge(let lineLimit, let headLimit):
            self.init(
                status: .requestHeaderFieldsTooLarge,
                detail: "Each header line may be at most \(lineLimit) bytes, and all of them together \(headLimit) bytes.",
                headers: [.connection: "close"])
        case .bodyTooLarge(let limit):
            // Closing tells the client not to keep streaming a body this server will not read.
            self.init(
                status: .contentTooLarge, detail: "The request body may be at most \(limit) bytes.",
                headers: [.connection: "close"])
        case .unsupportedMediaType(let given):
            let what = given.map { "not \"\(String($0.prefix(64)))\"" } ?? "and none was given"
            self.init(status: .unsupportedMediaType, detail: "The request body must be JSON (Content-Type: application/json), \(what).")
        case .invalidLastEventID:
            self.init(
                status: .badRequest, detail: "Invalid request parameters: Last-Event-ID.",
                errors: [FieldError(field: "Last-Event-ID", message: "must be the id of an event, a non-negative integer")])
        case .missingResource(let name):
            self.init(status: .internalServerError, detail: "The service cannot find its \(name); it has been logged.")
        case .requestTimeout(let limit):
            self.init(
                status: .requestTimeout,
                detail: "The request did not arrive in full within \(limit.wholeSecondsRoundedUp) s of its first byte.",
                headers: [.connection: "close"])
        case .startingUp:
            self.init(status: .serviceUnavailable, detail: "The server is starting; try again in a second.", headers: [.retryAfter: "1"])
        }
    }

    /// A connection the server does not serve (`ConnectionGate`). Either way the client may come back in a
    /// second: connections close all the time.
    init(_ refusal: ConnectionGate.Refusal) {
        let detail = switch refusal {
        case .serverFull: "The server holds as many connections as it serves; try again shortly."
        case .clientFull: "Your address holds as many connections as one client may; close one or try again shortly."
        }
        self.init(status: .serviceUnavailable, detail: detail, headers: [.connection: "close", .retryAfter: "1"])
    }

    /// The problem as a whole HTTP/1.1 response, for the connection handlers that answer before (or instead of)
    /// the router: a refused connection, a request head that never arrived in full.
    func rawResponse() -> ByteBuffer {
        let body = (try? WireEncoding.encode(Body(
            type: "about:blank", title: status.reasonPhrase, status: status.code, detail: detail, errors: nil,
            members: members))) ?? ByteBuffer()
        var head = "HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\n"
        head += "Content-Type: \(Self.contentType)\r\nContent-Length: \(body.readableBytes)\r\n"
        for field in headers { head += "\(field.name.rawName): \(field.value)\r\n" }
        head += "Server: Vicinity\r\n\r\n"
        var buffer = ByteBuffer(string: head)
        buffer.writeImmutableBuffer(body)
        return buffer
    }

    /// What each refusal of a service means in HTTP. 401 carries the challenge RFC 6750 asks for; 429 says when
    /// to come back in whole seconds, rounded up.
    init(_ error: ServiceError, request: Request) {
        switch error {
        case .invalid(let errors):
            self.init(APIError.invalidInput(errors))
        case .unauthenticated:
            let challenge = request.headers[.authorization] == nil
                ? #"Bearer realm="vicinity""# : #"Bearer realm="vicinity", error="invalid_token""#
            self.init(status: .unauthorized, detail: error.message, headers: [.wwwAuthenticate: challenge])
        case .wrongCredentials:
            self.init(status: .unauthorized, detail: error.message, headers: [.wwwAuthenticate: #"Bearer realm="vicinity""#])
        case .forbidden:
            self.init(status: .forbidden, detail: error.message)
        case .wrongVotePassword(let triesLeft):
            self.init(status: .forbidden, detail: error.message, members: ["tries_left": .number(triesLeft)])
        case .notFound:
            self.init(status: .notFound, detail: error.message)
        case .conflict(.voteNotFinished(let cast, let participants)):
            self.init(
                status: .conflict, detail: error.message, members: ["ballots_cast": .number(cast), "participants": .number(participants)])
        case .conflict:
            self.init(status: .conflict, detail: error.message)
        case .rateLimited(let retryAfter, let limit):
            self.init(
                status: .tooManyRequests, detail: error.message,
                headers: [.retryAfter: String(max(1, retryAfter.wholeSecondsRoundedUp))])
            // A person locked out of a vote has no tries left there, as the wrong passwords before counted down.
            if limit == .votePasswordAttempts || limit == .votePasswordAttemptsUntilVoteEnds { members["tries_left"] = 0 }
        case .mailUnavailable:
            // Not the client's doing, nor something a retry fixes: the operator's setting, named.
            self.init(status: .serviceUnavailable, detail: error.message, members: ["setting": "--smtp-url"])
        case .pushUnavailable(let kind):
            // The device is fine; this server cannot reach it. 409 as for other states of the service.
            self.init(status: .conflict, detail: error.message, members: ["setting": kind == .webPush ? "--vapid-key" : "--apns-key"])
        case .deviceUnauthorized:
            // OwnTracks asks again with Basic credentials only when challenged so (RFC 7617).
            self.init(status: .unauthorized, detail: error.message, headers: [.wwwAuthenticate: #"Basic realm="vicinity", charset="UTF-8""#])
        }
    }

    private init(unroutable request: Request, context: some RequestContext, routes: RouteTable) {
        guard let (template, allowed) = routes.allowedMethods(forRequestPath: request.uri.path),
            !allowed.contains(request.method)
        else {
            self.init(status: .notFound, detail: "No endpoint has this path; /openapi.yaml lists them all.")
            return
        }
        // Metrics then count the 405 under the route, not under "NotFound".
        context.coreContext.endpointPath.value = template
        let list = allowed.map(\.rawValue).uniqued().joined(separator: ", ")
        self.init(
            status: .methodNotAllowed, detail: "This endpoint answers \(list) only.", headers: [.allow: list])
    }
}

/// A client that closed its connection in the middle of sending a request: its fault, not the server's, and
/// nothing to answer. Counted and logged (at debug) under nginx's 499, so that real faults stay visible as 500s.
enum ClientAbort {
    static let status = HTTPResponse.Status(code: 499, reasonPhrase: "Client Closed Request")

    static func matches(_ error: any Error) -> Bool {
        switch error {
        case HTTPParserError.invalidEOFState: true
        case ChannelError.eof, ChannelError.ioOnClosedChannel, ChannelError.alreadyClosed, ChannelError.inputClosed: true
        case let error as IOError: [ECONNRESET, EPIPE].contains(error.errnoCode)
        default: false
        }
    }
}

/// The problem middleware: the outermost handler of errors, so that every error leaves as problem+json.
struct ProblemMiddleware<Context: RequestContext>: RouterMiddleware {
    let routes: RouteTable
    let options: HTTPOptions
    let outages: OutageLog

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            if case StoreError.unavailable(let cause) = error { outages.refused(cause: cause, logger: context.logger) }
            let problem = Problem(for: error, request: request, context: context, routes: routes, options: options)
            return try problem.response(from: request, context: context)
        }
    }
}
