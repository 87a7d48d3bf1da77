import GeoCore
import Hummingbird
import VicinityCore

/// Push: the devices a person registers for notifications (`/v1/me/push-subscriptions`), what they mute
/// (`/v1/me/push-preferences`), and the key browsers subscribe with (`/v1/push/vapid-public-key`).
struct PushRoutes<S: Stores>: RouteGroup {
    let push: PushService<S>
    let options: HTTPOptions

    func register(in table: inout RouteTable) {
        table.add(.post, "/v1/me/push-subscriptions", .signedIn) { request, context in try await add(request, context: context) }
        table.add(.get, "/v1/me/push-subscriptions", .signedIn) { request, context in try await list(request, context: context) }
        table.add(.delete, "/v1/me/push-subscriptions/{id}", .signedIn) { request, context in try await remove(request, context: context) }
        table.add(.get, "/v1/me/push-preferences", .signedIn) { request, context in try await preferences(request, context: context) }
        table.add(.put, "/v1/me/push-preferences", .signedIn) { request, context in try await setPreferences(request, context: context) }
        table.add(.get, "/v1/push/vapid-public-key", .anyone) { request, _ in try vapidPublicKey(request) }
    }

    /// The browser's `PushSubscription` as it serializes (`endpoint`, `keys`; `expirationTime` is taken and
    /// not used: services drop an expired subscription with 404 or 410 anyway), or an APNs device token.
    func add(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        var body = try await JSONBody.read(request, limit: options.maximumBodyBytes)
        let kind = body.string("kind") { text throws(ValidationError) -> PushKind in
            guard let kind = PushKind(rawValue: text) else {
                throw ValidationError(field: "kind", message: "must be one of \(PushKind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return kind
        }
        var target: PushTarget?
        switch kind {
        case .webPush?:
            let endpoint = body.string("endpoint")
            _ = body.number("expirationTime", required: false)
            let keys = body.object("keys") { keys -> (String, String)? in
                guard let p256dh = keys.string("p256dh"), let auth = keys.string("auth") else { return nil }
                return (p256dh, auth)
            }
            if let endpoint, let (p256dh, auth) = keys {
                let allowHTTP = push.rules.allowHTTP
                target = body.validated { () throws(ServiceError) -> PushTarget in
                    .webPush(try WebPushAddress(endpoint: endpoint, p256dh: p256dh, auth: auth, allowHTTP: allowHTTP))
                }
            }
        case .apns?:
            if let token = body.string("token"), let topic = body.string("topic") {
                target = body.validated { () throws(ServiceError) -> PushTarget in .apns(try APNsAddress(token: token, topic: topic)) }
            }
        case nil:
            break
        }
        try body.finish()
        let added = try await push.register(try body.checked(target), for: try context.signedIn())
        return WireEncoding.response(json: Wire.pushDevice(added), status: .created)
    }

    func list(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        let list = try await push.devices(of: try context.signedIn())
        return WireEncoding.response(json: .object(["subscriptions": .array(list.map(Wire.pushDevice))]))
    }

    func remove(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        guard let text = context.parameters.get("id"), let id = PushSubscriptionID(text) else { throw ServiceError.notFound(.pushDevice) }
        try await push.remove(id, of: try context.signedIn())
        return Response(status: .noContent)
    }

    func preferences(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        return WireEncoding.response(json: Wire.pushPreferences(try await push.preferences(of: try context.signedIn())))
    }

    /// Every category is given, true or false: a client that knows fewer would otherwise leave the others as
    /// they were without meaning to.
    func setPreferences(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        var body = try await JSONBody.read(request, limit: options.maximumBodyBytes)
        var muted: Set<PushCategory> = []
        for category in PushCategory.allCases where body.bool(category.rawValue) == false { muted.insert(category) }
        try body.finish()
        let saved = try await push.setPreferences(muted: muted, for: try context.signedIn())
        return WireEncoding.response(json: Wire.pushPreferences(saved))
    }

    func vapidPublicKey(_ request: Request) throws -> Response {
        try QueryParameters(request.uri.query).finish()
        guard let key = push.applicationServerKey else { throw ServiceError.notFound(.applicationServerKey) }
        return WireEncoding.response(json: .object(["key": .string(key)]))
    }
}
