import GeoCore
import Hummingbird
import VicinityCore

/// Blocking: `/v1/blocks`, the people the caller blocked, each named by their user id.
struct BlockRoutes<S: Stores>: RouteGroup {
    let friends: FriendService<S>
    let options: HTTPOptions

    func register(in table: inout RouteTable) {
        table.add(.post, "/v1/blocks", .signedIn) { request, context in try await block(request, context: context) }
        table.add(.get, "/v1/blocks", .signedIn) { request, context in try await list(request, context: context) }
        table.add(.delete, "/v1/blocks/{id}", .signedIn) { request, context in try await unblock(request, context: context) }
    }

    /// `{"user": ID}`. 201 for a new block, 200 when the caller had blocked them already: either way the
    /// answer is the block as it stands.
    func block(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        var body = try await JSONBody.read(request, limit: options.maximumBodyBytes)
        let user = body.string("user") { text throws(ValidationError) in
            guard let id = UserID(text) else { throw ValidationError(field: "user", message: "must be a user id") }
            return id
        }
        try body.finish()
        let blocked = try await friends.block(try body.checked(user), by: try context.signedIn())
        return WireEncoding.response(json: Wire.block(blocked.view), status: blocked.isNew ? .created : .ok)
    }

    func list(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        let views = try await friends.blocks(of: try context.signedIn())
        return WireEncoding.response(json: .object(["blocks": .array(views.map(Wire.block))]))
    }

    func unblock(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        // A path id that is not even well-formed names no block: 404 like any other.
        guard let text = context.parameters.get("id"), let id = UserID(text) else { throw ServiceError.notFound(.block) }
        try await friends.unblock(id, by: try context.signedIn())
        return Response(status: .noContent)
    }
}
