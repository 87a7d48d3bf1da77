import Foundation
import GeoCore
import Hummingbird
import Logging
import Metrics
import Prometheus
import VicinityCore

/// How `/v1/distance` measures.
enum DistanceMethod: String, CaseIterable {
    /// On the sphere of GeoCore's `Earth.meanRadius`: what every other distance of the service uses.
    case haversine
    /// On the WGS84 ellipsoid (Karney), for clients that want survey-grade figures.
    case geodesic
}

/// Whether a list of places carries each place's footprint: maps draw them, other clients need not pay for
/// them.
enum Outlines: String, CaseIterable {
    case `true`
    case `false`
}

/// Places, temples and distances: what guests may ask.
struct PlaceRoutes<S: Stores>: RouteGroup {
    let places: Locator<S.Places, S.Campuses>

    func register(in table: inout RouteTable) {
        if let now = places.now {
            // The places and campuses are in memory: answered from the event loop (`ImmediateAnswer`).
            table.add(.get, "/v1/places/nearby", immediate: { request in
                let asked = try nearbyAsked(request)
                return Wire.hits("places", now.nearby(asked.query), members: asked.members, request: request)
            })
            table.add(.get, "/v1/places/closest", immediate: { request in
                let asked = try closestAsked(request)
                return try closestAnswer(now.whereabouts(of: asked.position, categories: asked.categories))
            })
        } else {
            table.add(.get, "/v1/places/nearby", .anyone) { request, _ in
                let asked = try nearbyAsked(request)
                return Wire.hits("places", try await places.nearby(asked.query), members: asked.members, request: request).response
            }
            table.add(.get, "/v1/places/closest", .anyone) { request, _ in
                let asked = try closestAsked(request)
                return try closestAnswer(try await places.whereabouts(of: asked.position, categories: asked.categories)).response
            }
        }
        table.add(.get, "/v1/places", .anyone) { request, _ in try await searchPlaces(request) }
        table.add(.get, "/v1/places/{id}", .anyone) { request, context in try await place(request, context: context) }
        table.add(.get, "/v1/temples/recommended", .anyone) { request, _ in try await recommendedTemples(request) }
        table.add(.get, "/v1/distance", immediate: { request in try distance(request) })
        table.add(.get, "/v1/campuses", .anyone) { request, _ in try await campuses(request) }
    }

    /// Every campus boundary, for maps: few enough to send in one answer.
    func campuses(_ request: Request) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        let collection = GeoJSONFeatureCollection(features: try await places.allCampuses().map { campus in
            GeoJSONFeature(
                id: campus.id.rawValue, geometry: .multiPolygon(campus.boundary),
                properties: ["id": .string(campus.id.rawValue), "name": .string(campus.name)])
        })
        return WireEncoding.response(json: collection.jsonValue, contentType: Representation.geoJSONMediaType)
    }

    /// `/v1/places/nearby`'s query, read and checked.
    func nearbyAsked(_ request: Request) throws -> (query: NearbyQuery, members: HitMembers) {
        var query = QueryParameters(request.uri.query)
        let centre = query.coordinate()
        let radius = query.radius()
        let categories = query.categories()
        let limit = query.limit()
        let cursor = query.cursor()
        let outlines = query.choice("footprint", default: Outlines.false)
        var members = query.selection("fields", among: HitMembers.selectable).map(HitMembers.init) ?? .place
        try query.finish()
        if outlines == .true { members.insert(.footprint) }
        return (NearbyQuery(centre: try query.checked(centre), radius: radius, categories: categories, limit: limit, after: cursor), members)
    }

    /// `/v1/places/closest`'s query, read and checked.
    func closestAsked(_ request: Request) throws -> (position: Coordinate, categories: Set<Category>) {
        var query = QueryParameters(request.uri.query)
        let position = query.coordinate()
        let categories = query.categories()
        try query.finish()
        return (try query.checked(position), categories)
    }

    func closestAnswer(_ whereabouts: Whereabouts) throws -> ImmediateAnswer {
        guard let body = Wire.closest(whereabouts) else { throw APIError.noPlaceToBeClosestTo }
        return WireEncoding.answer(json: body)
    }

    func searchPlaces(_ request: Request) async throws -> Response {
        var query = QueryParameters(request.uri.query)
        let text = query.text("q", maximumLength: Place.maximumNameLength)
        let categories = query.categories()
        let limit = query.limit()
        try query.finish()
        let found = try await places.search(PlaceSearch(text: try query.checked(text), categories: categories, limit: limit))
        return Wire.list(
            "places", found.map { ($0, Wire.place($0)) }, as: Representation(accept: request.headers[.accept]))
    }

    /// An id that is not even well-formed names no place, so it is a 404 like any other unknown id.
    func place(_ request: Request, context: VicinityRequestContext) async throws -> Response {
        try QueryParameters(request.uri.query).finish()
        guard let raw = context.parameters.get("id"),
            let decoded = raw.removingPercentEncoding,
            let id = try? PlaceID(decoded),
            let place = try await places.place(id: id)
        else { throw APIError.placeNotFound }
        var fields = Wire.place(place)
        // The outline, when the place has one, as a GeoJSON geometry.
        if let footprint = place.footprint { fields["footprint"] = GeoJSONGeometry.multiPolygon(footprint).jsonValue }
        return WireEncoding.response(json: .object(fields))
    }

    func recommendedTemples(_ request: Request) async throws -> Response {
        var query = QueryParameters(request.uri.query)
        let centre = query.coordinate()
        let limit = query.limit()
        let radius = query.radius()
        let cursor = query.cursor()
        try query.finish()
        let recommended = try await places.recommendedTemples(
            around: try query.checked(centre), radius: radius, limit: limit, after: cursor)
        return Wire.hits(
            "temples", recommended.page, members: .temple, extra: ["within_radius": .bool(recommended.withinRadius)],
            request: request
        ).response
    }

    /// Arithmetic on the query alone, so answered from the event loop (`ImmediateAnswer`).
    func distance(_ request: Request) throws -> ImmediateAnswer {
        var query = QueryParameters(request.uri.query)
        let from = query.point("from")
        let to = query.point("to")
        let method = query.choice("method", default: DistanceMethod.haversine)
        try query.finish()
        let start = try query.checked(from), end = try query.checked(to)
        let distance: Distance, bearing: Bearing
        switch method {
        case .haversine:
            distance = haversineDistance(from: start, to: end)
            bearing = initialBearing(from: start, to: end)
        case .geodesic:
            let solution = Geodesic.inverse(from: start, to: end)
            distance = solution.distance
            bearing = solution.initialBearing
        }
        let body: [String: JSONValue] = [
            "distance_m": .number(distance.meters),
            "bearing_deg": .number(bearing.degrees),
            "method": .string(method.rawValue),
        ]
        return WireEncoding.answer(json: .object(body))
    }
}

/// `/health`'s answer; a struct rather than JSON values so that the count is written as an integer.
struct HealthBody: Encodable {
    var status = "ok"
    var places: Int
}

/// Health, metrics and the contract.
struct OperationRoutes<S: Stores>: RouteGroup {
    let places: Locator<S.Places, S.Campuses>
    let follower: ChangeFollower<S>
    let metrics: PrometheusCollectorRegistry
    let openAPIDocument: ByteBuffer?

    func register(in table: inout RouteTable) {
        table.add(.get, "/health", .anyone) { _, context in try await health(context: context) }
        table.add(.get, "/metrics", .anyone) { _, _ in metricsText() }
        table.add(.get, "/openapi.yaml", .anyone) { _, context in try openAPI(context: context) }
    }

    func health(context: VicinityRequestContext) async throws -> Response {
        let count: Int
        do {
            count = try await places.placeCount()
        } catch {
            context.logger.error("Health check failed: the place store threw", metadata: ["error": "\(error)"])
            throw APIError.storeUnavailable
        }
        if follower.isBehind, let since = follower.sinceLastRead {
            context.logger.warning("Health check: behind the record's changes", metadata: ["seconds": "\(since.milliseconds / 1000)"])
            throw APIError.behindRecord(since)
        }
        return try WireEncoding.response(HealthBody(places: count))
    }

    /// The time since the change feed was last read is measured as it is asked for, so that a follower that
    /// stopped reading shows its age growing.
    func metricsText() -> Response {
        if let since = follower.sinceLastRead {
            Gauge(label: "vicinity_change_feed_seconds_since_read").record(since.milliseconds / 1000)
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: metrics.emitToBuffer())))
    }

    func openAPI(context: VicinityRequestContext) throws -> Response {
        guard let openAPIDocument else {
            context.logger.error("The OpenAPI document is missing from the resource bundle")
            throw APIError.missingResource("OpenAPI document")
        }
        return Response(
            status: .ok, headers: [.contentType: OpenAPIDocument.mediaType], body: .init(byteBuffer: openAPIDocument))
    }
}
