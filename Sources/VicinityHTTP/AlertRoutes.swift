import GeoCore
import Hummingbird
import VicinityCore

/// Alerts: `/v1/alerts`, those the caller set on friends; `/v1/me/watchers`, who may set place alerts on the
/// caller or holds alerts on them, which the caller allows and takes back.
struct AlertRoutes<S: Stores>: RouteGroup {
    let alerts: AlertService<S>
    let options: HTTPOptions

    func register(in table: inout RouteTable) {
        table.add(.get, "/v1/alerts", .signedIn) { request, context in try await list(request, context: context) }
        table.add(.post, "/v1/alerts", .signedIn) { request, context in try await set(request, context: context) }
        table.add(.delete, "/v1/alerts/{id}", .signedIn) { request, context in try await remove(request, context: context) }
        table.add(.get, "/v1/me/watchers", .signedIn) { request, context in try await watchers(request, context: context) }
        table.add(.put, "/v1/me/watchers/{id}", .signedIn) { request, context in try await allow(request, context: context) }
        table.add(.delete, "/v1/me/watchers/{id}", .signedIn) { request, context in try await revoke(request, context: context) }
    }

    func list(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        let views = try await alerts.alerts(of: try context.signedIn())
        return WireEncoding.response(json: .object(["alerts": .array(views.map { Wire.alert($0, person: "friend") })]))
    }

    /// `{"friend": ID, "kind": "place" | "campus" | "point" | "nearby", "place": ID, "campus": ID, "point":
    /// {"lat", "lon"}, "radius_m": N}`, each kind with its own member. 201 with the alert.
    func set(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        var body = try await JSONBody.read(request, limit: options.maximumBodyBytes)
        let friend = body.string("friend") { text throws(ValidationError) in
            guard let id = UserID(text) else { throw ValidationError(field: "friend", message: "must be a user id") }
            return id
        }
        let kind = body.string("kind") { text throws(ValidationError) in
            guard ["place", "campus", "point", "nearby"].contains(text) else {
                throw ValidationError(field: "kind", message: "must be one of place, campus, point, nearby")
            }
            return text
        }
        var target: AlertTarget?
        switch kind {
        case "place": target = body.string("place") { try AlertTarget.place(PlaceID($0)) }
        case "campus": target = body.string("campus") { try AlertTarget.campus(PlaceID($0)) }
        case "point": target = body.object("point") { inner in inner.coordinate().map(AlertTarget.point) }
        case "nearby": target = .nearby
        default: break
        }
        // A campus follows its boundary: a radius there would be a second, silent rule.
        let radius = kind == "campus" ? nil : body.number("radius_m", required: false) { try AlertRadius(meters: $0) }
        try body.finish()
        let view = try await alerts.set(try body.checked(target), radius: radius, on: try body.checked(friend), by: try context.signedIn())
        return WireEncoding.response(json: Wire.alert(view, person: "friend"), status: .created)
    }

    func remove(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        guard let text = context.parameters.get("id"), let id = AlertID(text) else { throw ServiceError.notFound(.alert) }
        try await alerts.remove(id, by: try context.signedIn())
        return Response(status: .noContent)
    }

    func watchers(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        let views = try await alerts.watchers(of: try context.signedIn())
        return WireEncoding.response(json: .object(["watchers": .array(views.map(Wire.watcher))]))
    }

    /// 201 when the friend is newly allowed, 200 when they were already.
    func allow(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        guard let text = context.parameters.get("id"), let id = UserID(text) else { throw ServiceError.notFound(.friend) }
        let allowed = try await alerts.allow(id, by: try context.signedIn())
        return WireEncoding.response(
            json: .object(["user_id": .string(id.rawValue), "allowed_since": .string(allowed.permission.since.rfc3339)]),
            status: allowed.isNew ? .created : .ok)
    }

    func revoke(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        guard let text = context.parameters.get("id"), let id = UserID(text) else { throw ServiceError.notFound(.watchPermission) }
        try await alerts.revoke(id, by: try context.signedIn())
        return Response(status: .noContent)
    }
}

extension Wire {
    /// An alert, with the other person under `person` (`friend` for the watcher, `watcher` for the watched).
    static func alert(_ view: AlertView, person: String) -> JSONValue {
        let alert = view.alert
        var fields: [String: JSONValue] = [
            "id": .string(alert.id.rawValue),
            person: summary(view.person),
            "kind": .string(alert.target.kindName),
            "place": .null,
            "point": .null,
            "radius_m": .null,
            "created_at": .string(alert.createdAt.rfc3339),
        ]
        if let id = alert.target.placeID {
            fields["place"] = .object(["id": .string(id.rawValue), "name": view.placeName.map(JSONValue.string) ?? .null])
        }
        if let point = alert.target.point {
            fields["point"] = .object(["lat": .number(point.latitude), "lon": .number(point.longitude)])
        }
        if case .campus = alert.target {} else { fields["radius_m"] = .number(alert.radius.distance.meters) }
        return .object(fields)
    }

    static func watcher(_ view: WatcherView) -> JSONValue {
        .object([
            "user": summary(view.person),
            "allowed_since": view.allowedSince.map { .string($0.rfc3339) } ?? .null,
            "alerts": .array(view.alerts.map { alert($0, person: "watcher") }),
        ])
    }
}
