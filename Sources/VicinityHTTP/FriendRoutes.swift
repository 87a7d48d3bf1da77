import Foundation
import GeoCore
import Hummingbird
import Metrics
import VicinityCore

/// The friend finder: one's position, people search, friend requests, friends with places, pokes.
struct FriendRoutes<S: Stores>: RouteGroup {
    let friends: FriendService<S>
    let options: HTTPOptions

    func register(in table: inout RouteTable) {
        table.add(.put, "/v1/me/position", .signedIn) { request, context in try await sharePosition(request, context: context) }
        table.add(.get, "/v1/me/position", .signedIn) { request, context in try await myPosition(request, context: context) }
        table.add(.delete, "/v1/me/position", .signedIn) { request, context in try await stopSharing(request, context: context) }
        table.add(.get, "/v1/users", .signedIn) { request, context in try await people(request, context: context) }
        table.add(.post, "/v1/friend-requests", .signedIn) { request, context in try await sendRequest(request, context: context) }
        table.add(.get, "/v1/friend-requests", .signedIn) { request, context in try await requests(request, context: context) }
        table.add(.post, "/v1/friend-requests/{id}/accept", .signedIn) { request, context in
            try await accept(request, context: context)
        }
        table.add(.delete, "/v1/friend-requests/{id}", .signedIn) { request, context in try await withdraw(request, context: context) }
        table.add(.get, "/v1/friends", .signedIn) { request, context in try await list(request, context: context) }
        table.add(.patch, "/v1/friends", .signedIn) { request, context in try await setSharingWithEveryone(request, context: context) }
        table.add(.get, "/v1/friends/nearby", .signedIn) { request, context in try await nearby(request, context: context) }
        table.add(.get, "/v1/friends/{id}", .signedIn) { request, context in try await friend(request, context: context) }
        table.add(.patch, "/v1/friends/{id}", .signedIn) { request, context in try await setSharing(request, context: context) }
        table.add(.delete, "/v1/friends/{id}", .signedIn) { request, context in try await unfriend(request, context: context) }
        table.add(.get, "/v1/friends/{id}/direction", .signedIn) { request, context in try await direction(request, context: context) }
        table.add(.post, "/v1/friends/{id}/pokes", .signedIn) { request, context in try await poke(request, context: context) }
    }

    // MARK: My position

    /// Position and status together; the answer says where that is.
    func sharePosition(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        var body = try await JSONBody.read(request, limit: options.maximumBodyBytes)
        let coordinate = body.coordinate()
        let accuracy = body.number("accuracy_m", required: false) { try Accuracy(meters: $0) }
        let status = body.string("status", required: false) { try StatusText($0) }
        try body.finish()
        let update = try await friends.sharePosition(
            try context.signedIn(), at: try body.checked(coordinate), accuracy: accuracy, status: status)
        Counter(label: "vicinity_position_updates_total").increment()
        return WireEncoding.response(json: Wire.positionUpdate(update))
    }

    func myPosition(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        let mine = try await friends.myPosition(try context.signedIn())
        return WireEncoding.response(json: .object(Wire.ownPosition(mine.position, presence: mine.presence)))
    }

    func stopSharing(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        try await friends.stopSharing(try context.signedIn())
        return Response(status: .noContent)
    }

    // MARK: People and requests

    func people(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        var query = QueryParameters(request.uri.query)
        let text = query.text("q", maximumLength: Username.lengths.upperBound + 2 * PersonName.maximumLength)
        let limit = query.limit()
        try query.finish()
        let found = try await friends.people(matching: try query.checked(text), for: try context.signedIn(), limit: limit)
        return WireEncoding.response(json: .object(["users": .array(found.map(Wire.person))]))
    }

    /// 201 for a new pending request; 200 when the recipient had asked first, which makes the two friends.
    func sendRequest(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        var body = try await JSONBody.read(request, limit: options.maximumBodyBytes)
        let recipient = body.string("to") { text throws(ValidationError) in
            guard let id = UserID(text) else { throw ValidationError(field: "to", message: "must be a user id") }
            return id
        }
        try body.finish()
        switch try await friends.sendRequest(from: try context.signedIn(), to: try body.checked(recipient)) {
        case .pending(let view):
            return WireEncoding.response(json: .object(Wire.friendRequest(view, state: "pending")), status: .created)
        case .accepted(let view, let friend):
            var fields = Wire.friendRequest(view, state: "accepted")
            fields["friend"] = .object(Wire.friend(friend))
            return WireEncoding.response(json: .object(fields))
        }
    }

    func requests(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        let found = try await friends.requests(of: try context.signedIn())
        return WireEncoding.response(json: .object([
            "incoming": .array(found.incoming.map { .object(Wire.friendRequest($0, state: "pending")) }),
            "outgoing": .array(found.outgoing.map { .object(Wire.friendRequest($0, state: "pending")) }),
        ]))
    }

    func accept(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        let friend = try await friends.accept(try requestID(context), by: try context.signedIn())
        return WireEncoding.response(json: .object(Wire.friend(friend)))
    }

    /// Declines a received request or cancels a sent one.
    func withdraw(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        try await friends.withdraw(try requestID(context), by: try context.signedIn())
        return Response(status: .noContent)
    }

    // MARK: Friends

    func list(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        let views = try await friends.friends(of: try context.signedIn())
        return Wire.friends(views, as: Representation(accept: request.headers[.accept]))
    }

    /// From `lat`/`lon` when given, else from the caller's current position.
    func nearby(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        var query = QueryParameters(request.uri.query)
        let centre = query.optionalCoordinate()
        let radius = query.radius()
        let limit = query.limit()
        try query.finish()
        let views = try await friends.nearbyFriends(of: try context.signedIn(), around: centre, radius: radius, limit: limit)
        return Wire.friends(views, as: Representation(accept: request.headers[.accept]))
    }

    func friend(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        let view = try await friends.friend(try friendID(context), of: try context.signedIn())
        return WireEncoding.response(json: .object(Wire.friend(view)))
    }

    /// `{"share": "exact" | "building" | "none"}`: how exactly this one friend sees the caller's position, for
    /// good or, with `until` (a time) or `for_s` (seconds from now), until then.
    /// `{"share_position": false}` is `none` and true `exact`, as clients written before levels send it.
    func setSharing(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        let id = try friendID(context)
        let change = try await SharingChange.read(request, limit: options.maximumBodyBytes)
        let view = try await friends.setSharing(change.share, until: change.until, for: change.duration, with: id, of: try context.signedIn())
        return WireEncoding.response(json: .object(Wire.friend(view)))
    }

    /// The same change for every friend at once: "share with everyone for an hour". The answer is the list.
    func setSharingWithEveryone(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        let change = try await SharingChange.read(request, limit: options.maximumBodyBytes)
        let views = try await friends.setSharingWithEveryone(change.share, until: change.until, for: change.duration, of: try context.signedIn())
        return Wire.friends(views, as: .json)
    }

    func unfriend(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        try await friends.unfriend(try friendID(context), of: try context.signedIn())
        return Response(status: .noContent)
    }

    /// From `lat`/`lon` when given, else from the caller's current position.
    func direction(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        var query = QueryParameters(request.uri.query)
        let centre = query.optionalCoordinate()
        try query.finish()
        let view = try await friends.direction(to: try friendID(context), of: try context.signedIn(), from: centre)
        guard let position = view.position else { throw ServiceError.notFound(.friendPosition) }
        return WireEncoding.response(json: Wire.direction(view, to: position))
    }

    func poke(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        let poke = try await friends.poke(try friendID(context), by: try context.signedIn())
        return WireEncoding.response(
            json: .object(["to": Wire.summary(poke.to), "at": .string(poke.at.rfc3339)]),
            status: .created)
    }

    // MARK: Path parameters

    /// A path id that is not even well-formed names nothing: 404 like any other unknown id.
    private func friendID(_ context: VicinityRequestContext) throws(ServiceError) -> UserID {
        guard let text = context.parameters.get("id"), let id = UserID(text) else { throw .notFound(.friend) }
        return id
    }

    private func requestID(_ context: VicinityRequestContext) throws(ServiceError) -> FriendRequestID {
        guard let text = context.parameters.get("id"), let id = FriendRequestID(text) else { throw .notFound(.friendRequest) }
        return id
    }
}

/// A sharing change as clients send it: a level (`share`, or the older `share_position`), and optionally an end
/// (`until`, a time, or `for_s`, seconds from now).
struct SharingChange {
    var share: ShareLevel
    var until: Timestamp?
    var duration: Duration?

    static func read(_ request: Request, limit: Int) async throws -> SharingChange {
        var body = try await JSONBody.read(request, limit: limit)
        let level = body.string("share", required: false) { try ShareLevel(wire: $0, field: "share") }
        let shares = body.bool("share_position", required: false)
        let until = body.string("until", required: false) { text throws(ValidationError) in
            guard let time = Timestamp(rfc3339: text) else {
                throw ValidationError(field: "until", message: "must be a time as this service writes them, such as 2026-11-25T08:00:00.000Z")
            }
            return time
        }
        let seconds = body.integer("for_s", required: false) { value throws(ValidationError) -> Int in
            let longest = Int(ShareLevel.longestFor.wholeSecondsRoundedUp)
            guard (1...longest).contains(value) else {
                throw ValidationError(field: "for_s", message: "must be a number of seconds in [1, \(longest)]")
            }
            return value
        }
        if until != nil, seconds != nil { body.reject("for_s", "give until or for_s, not both") }
        var share: ShareLevel?
        switch (level, shares) {
        case (let level?, nil): share = level
        case (nil, let shares?): share = shares ? .exact : ShareLevel.none
        case (.some, .some): body.reject("share", "give share or share_position, not both")
        case (nil, nil): if body.isClean { body.reject("share", "is required: exact, building or none") }
        }
        try body.finish()
        return SharingChange(share: try body.checked(share), until: until, duration: seconds.map { .seconds(Int64($0)) })
    }
}
