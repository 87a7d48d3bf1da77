import GeoCore
import Hummingbird
import Metrics
import VicinityCore

/// The vote app: opening and finding votes, secret ballots, results, name conflicts, history.
struct VoteRoutes<S: Stores>: RouteGroup {
    let votes: VoteService<S>
    let options: HTTPOptions

    func register(in table: inout RouteTable) {
        table.add(.post, "/v1/votes", .signedIn) { request, context in try await open(request, context: context) }
        table.add(.get, "/v1/votes/nearby", .anyone) { request, context in try await nearby(request, context: context) }
        table.add(.get, "/v1/votes/{id}", .signedIn) { request, context in try await vote(request, context: context) }
        table.add(.patch, "/v1/votes/{id}", .signedIn) { request, context in try await edit(request, context: context) }
        table.add(.post, "/v1/votes/{id}/close", .signedIn) { request, context in
            try await change(.close, request, context: context)
        }
        table.add(.post, "/v1/votes/{id}/cancel", .signedIn) { request, context in
            try await change(.cancel, request, context: context)
        }
        table.add(.post, "/v1/votes/{id}/publish", .signedIn) { request, context in
            try await change(.publish, request, context: context)
        }
        table.add(.post, "/v1/votes/{id}/extend", .signedIn) { request, context in try await extend(request, context: context) }
        table.add(.post, "/v1/votes/{id}/ballots", .signedIn) { request, context in try await castBallot(request, context: context) }
        table.add(.get, "/v1/votes/{id}/result", .signedIn) { request, context in try await result(request, context: context) }
        table.add(.get, "/v1/votes/{id}/conflicts", .signedIn) { request, context in try await conflicts(request, context: context) }
        table.add(.patch, "/v1/votes/{id}/ballots/{ballot_id}", .signedIn) { request, context in
            try await setCounted(request, context: context)
        }
        table.add(.get, "/v1/me/votes", .signedIn) { request, context in try await history(request, context: context) }
    }

    /// 201 with the vote's public facts, its `id` and `closes_at`, and its address in `Location`.
    func open(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        var body = try await JSONBody.read(request, limit: options.maximumBodyBytes)
        let subject = body.string("subject") { try VoteSubject($0) }
        let choices = body.strings("options") { try VoteOptions($0) }
        let participants = body.integer("participants") { try ParticipantCount($0) }
        let password = body.string("password") { try VotePassword($0) }
        let duration = body.string("duration") { try VoteDuration($0) }
        let visibility = body.string("visibility", required: false) { text throws(ValidationError) -> VoteVisibility in
            guard let visibility = VoteVisibility(rawValue: text) else {
                throw ValidationError(field: "visibility", message: "must be public or private")
            }
            return visibility
        }
        let anonymous = body.bool("anonymous", required: false)
        let verifiedOnly = body.bool("verified_only", required: false)
        let location = body.coordinate(required: false)
        try body.finish()
        let draft = VoteDraft(
            subject: try body.checked(subject), options: try body.checked(choices),
            participants: try body.checked(participants), password: try body.checked(password),
            duration: try body.checked(duration), visibility: visibility ?? .public, anonymous: anonymous ?? false, verifiedOnly: verifiedOnly,
            location: location)
        let view = try await votes.open(draft, by: try context.signedIn())
        Counter(label: "vicinity_votes_opened_total").increment()
        var response = WireEncoding.response(json: .object(Wire.vote(view)), status: .created)
        response.headers[.location] = "/v1/votes/\(view.vote.id.rawValue)"
        return response
    }

    func nearby(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        var query = QueryParameters(request.uri.query)
        let centre = query.coordinate()
        let radius = query.radius()
        let limit = query.limit()
        try query.finish()
        let found = try await votes.nearby(around: try query.checked(centre), radius: radius, limit: limit)
        return WireEncoding.response(json: .object(["votes": .array(found.map(Wire.voteListing))]))
    }

    func vote(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        let detail = try await votes.vote(try voteID(context), for: try context.signedIn(), from: context.address)
        return WireEncoding.response(json: Wire.voteDetail(detail))
    }

    // MARK: The initiator's controls

    /// Close, cancel or publish: no body is read. 200 with the vote's public facts as they now stand.
    func change(_ change: VoteChange, _ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        let view = try await votes.change(try voteID(context), change, by: try context.signedIn(), from: context.address)
        return WireEncoding.response(json: .object(Wire.vote(view)))
    }

    /// `{"duration": "15m"}`: the vote's one extension.
    func extend(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        let id = try voteID(context)
        var body = try await JSONBody.read(request, limit: options.maximumBodyBytes)
        let duration = body.string("duration") { text throws(ValidationError) -> VoteDuration in
            let duration = try VoteDuration(text)
            guard duration != .permanent else {
                throw ValidationError(field: "duration", message: "must be one of 5m, 15m, 30m, 60m: an extension is a length of time")
            }
            return duration
        }
        try body.finish()
        let view = try await votes.change(id, .extend(try body.checked(duration)), by: try context.signedIn(), from: context.address)
        return WireEncoding.response(json: .object(Wire.vote(view)))
    }

    /// `{"subject"?, "options"?}`, at least one: what the vote asks, until its first ballot.
    func edit(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        let id = try voteID(context)
        var body = try await JSONBody.read(request, limit: options.maximumBodyBytes)
        let subject = body.string("subject", required: false, null: .refused) { try VoteSubject($0) }
        let choices = body.strings("options", required: false, null: .refused) { try VoteOptions($0) }
        if subject == nil, choices == nil, body.errors.isEmpty { body.reject("body", "must change subject, options or both") }
        try body.finish()
        let view = try await votes.change(id, .edit(subject: subject, options: choices), by: try context.signedIn(), from: context.address)
        return WireEncoding.response(json: .object(Wire.vote(view)))
    }

    // MARK: Ballots

    /// `{"password", "option"}`: 201 with the caller's own ballot and the vote as it now stands.
    func castBallot(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        let id = try voteID(context)
        var body = try await JSONBody.read(request, limit: options.maximumBodyBytes)
        // The password's form is checked by the service, after the vote is found, so that a wrong form and a
        // wrong password are told apart without ever saying anything about the right one.
        let password = body.string("password")
        let option = body.integer("option")
        try body.finish()
        do {
            let receipt = try await votes.castBallot(
                on: id, password: try body.checked(password), option: try body.checked(option),
                by: try context.signedIn(), from: context.address)
            Counter(label: "vicinity_ballots_total", dimensions: [("outcome", "counted")]).increment()
            return WireEncoding.response(
                json: .object(["ballot": Wire.ownBallot(receipt.ballot), "vote": .object(Wire.vote(receipt.view))]),
                status: .created)
        } catch let error as ServiceError {
            Counter(label: "vicinity_ballots_total", dimensions: [("outcome", Self.outcome(of: error))]).increment()
            throw error
        }
    }

    func result(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        let result = try await votes.result(of: try voteID(context), for: try context.signedIn(), from: context.address)
        return WireEncoding.response(json: Wire.result(result))
    }

    func conflicts(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        let found = try await votes.conflicts(in: try voteID(context), by: try context.signedIn(), from: context.address)
        return WireEncoding.response(json: .object(["conflicts": .array(found.map(Wire.conflict))]))
    }

    /// `{"counted": false}` voids a ballot, `true` restores it; the vote's initiator only, within a name conflict,
    /// while the vote settles its conflicts (`VoteService.setCounted`).
    func setCounted(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        let id = try voteID(context)
        guard let text = context.parameters.get("ballot_id"), let ballotID = BallotID(text) else {
            throw ServiceError.notFound(.ballot)
        }
        var body = try await JSONBody.read(request, limit: options.maximumBodyBytes)
        let counted = body.bool("counted", null: .refused)
        try body.finish()
        let ballot = try await votes.setCounted(
            try body.checked(counted), ballot: ballotID, in: id, by: try context.signedIn(), from: context.address)
        return WireEncoding.response(json: Wire.ballotSummary(ballot))
    }

    /// `?role=initiated|attended`; both when absent.
    func history(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        var query = QueryParameters(request.uri.query)
        let role = query.choice("role", default: RoleFilter.both)
        let limit = query.limit()
        try query.finish()
        let entries = try await votes.history(of: try context.signedIn(), role: role.role, limit: limit)
        return WireEncoding.response(json: .object(["votes": .array(entries.map(Wire.historyEntry))]))
    }

    // MARK: Helpers

    /// Vote ids are read in either case; text that is no vote id names nothing: 404 like an unknown id.
    private func voteID(_ context: VicinityRequestContext) throws(ServiceError) -> VoteID {
        guard let text = context.parameters.get("id"), let id = VoteID(text) else { throw .notFound(.vote) }
        return id
    }

    /// How a refused ballot is counted in metrics: never with anything about the choice.
    private static func outcome(of error: ServiceError) -> String {
        switch error {
        case .wrongVotePassword: "wrong_password"
        case .rateLimited: "locked_out"
        case .conflict(.alreadyVoted): "already_voted"
        case .conflict(.voteFinished): "vote_finished"
        case .invalid: "invalid"
        default: "refused"
        }
    }

    enum RoleFilter: String, CaseIterable {
        case initiated, attended, both

        var role: VoteRole? { VoteRole(rawValue: rawValue) }
    }
}
