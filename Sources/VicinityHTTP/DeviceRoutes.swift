import Foundation
import GeoCore
import HTTPTypes
import Hummingbird
import Logging
import Metrics
import NIOCore
import Synchronization
import VicinityCore

/// Phone apps: a person's device passwords (`/v1/me/devices`), OwnTracks in HTTP mode (`POST /owntracks`) and
/// Traccar Client's OsmAnd protocol (`/traccar`). A device reaches only its own person's position and what
/// that person may see of their friends; its secret is never logged.
struct DeviceRoutes<S: Stores>: RouteGroup {
    let devices: DeviceService<S>
    let options: HTTPOptions
    /// An encrypted OwnTracks payload is told to the log once per process, not once per post.
    private let encryptedLogged = OnceFlag()

    init(devices: DeviceService<S>, options: HTTPOptions) {
        self.devices = devices
        self.options = options
    }

    func register(in table: inout RouteTable) {
        table.add(.post, "/v1/me/devices", .signedIn) { request, context in try await add(request, context: context) }
        table.add(.get, "/v1/me/devices", .signedIn) { request, context in try await list(request, context: context) }
        table.add(.delete, "/v1/me/devices/{id}", .signedIn) { request, context in try await remove(request, context: context) }
        table.add(.post, "/owntracks", .anyone) { request, context in try await ownTracks(request, context: context) }
        table.add(.post, "/traccar", .anyone) { request, context in try await traccar(request, context: context) }
        table.add(.get, "/traccar", .anyone) { request, context in try await traccar(request, context: context) }
    }

    // MARK: The person's devices

    func add(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        var body = try await JSONBody.read(request, limit: options.maximumBodyBytes)
        let name = body.string("name", as: DeviceName.init)
        let kind = body.string("kind") { text throws(ValidationError) -> DeviceKind in
            guard let kind = DeviceKind(rawValue: text) else {
                throw ValidationError(field: "kind", message: "must be one of \(DeviceKind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return kind
        }
        try body.finish()
        let added = try await devices.add(name: try body.checked(name), kind: try body.checked(kind), for: try context.signedIn())
        return WireEncoding.response(json: Wire.addedDevice(added, origin: Self.origin(of: request)), status: .created)
    }

    func list(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        let list = try await devices.devices(of: try context.signedIn())
        return WireEncoding.response(json: .object(["devices": .array(list.map(Wire.device))]))
    }

    func remove(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        guard let text = context.parameters.get("id"), let id = DeviceID(text) else { throw ServiceError.notFound(.device) }
        try await devices.remove(id, of: try context.signedIn())
        return Response(status: .noContent)
    }

    /// Where the apps are to send: the scheme and host this request came to, as the person's browser saw
    /// them (a TLS proxy says `X-Forwarded-Proto: https`).
    static func origin(of request: Request) -> String {
        let scheme = request.headers[.forwardedProto].map { HTTPText.trimmed($0).lowercased() } == "https" ? "https" : "http"
        let host = request.head.authority ?? "localhost"
        return "\(scheme)://\(host)"
    }

    // MARK: OwnTracks

    /// A location sets the position and is answered with the friends the person may see; every other message
    /// is answered `[]` and changes nothing.
    func ownTracks(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        let (username, secret) = try Self.basicCredentials(request)
        // The app repeats the user and device in these headers; they must name the same person.
        if let limitUser = request.headers[.limitUser], (try? Username(limitUser))?.key != (try? Username(username))?.key {
            throw ServiceError.deviceUnauthorized
        }
        let caller = try await devices.authenticate(secret: secret, username: username)
        var body = request
        let bytes = Array(buffer: try await body.collectBody(upTo: options.maximumBodyBytes))
        switch try OwnTracksMessage.parse(bytes) {
        case .location(let fix):
            if try await devices.report(fix, by: caller) { Counter(label: "vicinity_position_updates_total").increment() }
            let friends = try await devices.friendsForPhone(of: caller)
            return WireEncoding.response(json: .array(friends.flatMap(Wire.ownTracks)))
        case .encrypted:
            if encryptedLogged.first() {
                context.logger.notice("An OwnTracks app sent an encrypted payload, which this service does not read; it answers such posts with no friends")
            }
            try await devices.noteUse(of: caller)
            return WireEncoding.response(json: .array([]))
        case .ignored:
            try await devices.noteUse(of: caller)
            return WireEncoding.response(json: .array([]))
        }
    }

    /// `Authorization: Basic` (RFC 7617): the username and the device's secret. Anything else reads as wrong
    /// credentials, with the challenge the app answers.
    static func basicCredentials(_ request: Request) throws(ServiceError) -> (username: String, secret: String) {
        guard let header = request.headers[.authorization] else { throw .deviceUnauthorized }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "basic",
            let decoded = Data(base64Encoded: String(HTTPText.trimmed(parts[1]))), let text = String(data: decoded, encoding: .utf8),
            let colon = text.firstIndex(of: ":")
        else { throw .deviceUnauthorized }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }

    // MARK: Traccar Client

    /// The OsmAnd protocol: the device identifier is the device's secret. 200 with no body, as Traccar's own
    /// server answers; an unknown identifier is 401, saying nothing of whether it ever existed.
    func traccar(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        var body = request
        let bytes = Array(buffer: try await body.collectBody(upTo: options.maximumBodyBytes))
        let report: TraccarReport
        if let type = request.headers[.contentType], JSONBody.isJSON(type) {
            report = try TraccarReport.parse(json: bytes)
        } else {
            var parameters = Self.parameters(request.uri.query ?? "")
            if request.headers[.contentType].map({ $0.lowercased().hasPrefix("application/x-www-form-urlencoded") }) == true {
                parameters.merge(Self.parameters(String(decoding: bytes, as: UTF8.self))) { query, _ in query }
            }
            report = try TraccarReport.parse(parameters: parameters)
        }
        let caller = try await devices.authenticate(secret: report.deviceID, username: nil)
        if try await devices.report(report.fix, by: caller) { Counter(label: "vicinity_position_updates_total").increment() }
        try await devices.noteUse(of: caller)
        return Response(status: .ok)
    }

    /// Form-encoded pairs; the first of a repeated name wins, and undecodable ones are left out (the OsmAnd
    /// protocol has no rule for either, and what matters is checked after).
    static func parameters(_ text: String) -> [String: String] {
        var parameters: [String: String] = [:]
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = HTTPText.formDecoded(parts[0]), let value = HTTPText.formDecoded(parts.count > 1 ? parts[1] : "") else { continue }
            if parameters[name] == nil { parameters[name] = value }
        }
        return parameters
    }
}

extension HTTPField.Name {
    /// OwnTracks' copy of the user in HTTP mode (booklet, `tech/http`).
    static var limitUser: Self { Self("X-Limit-U")! }
    /// Set by a TLS-terminating proxy (de facto standard; RFC 7239 names the same as `Forwarded: proto=`).
    static var forwardedProto: Self { Self("X-Forwarded-Proto")! }
}

/// True for the first caller only.
final class OnceFlag: Sendable {
    private let done = Atomic<Bool>(false)

    func first() -> Bool { !done.exchange(true, ordering: .relaxed) }
}
