import GeoCore
import Hummingbird
import VicinityCore

/// The wire form of accounts, people, friends and positions: JSON values with the contract's field names.
/// Absent facts are `null`, never missing members, so that every client reads one shape.
extension Wire {
    /// One's own account. `email` is the verified address (null until one is confirmed), `pending_email` the
    /// one waiting for its code.
    static func account(_ account: Account) -> JSONValue {
        .object([
            "id": .string(account.id.rawValue),
            "username": .string(account.username.rawValue),
            "first_name": .string(account.firstName.rawValue),
            "last_name": .string(account.lastName.rawValue),
            "email": account.email.map { .string($0.rawValue) } ?? .null,
            "email_verified": .bool(account.isVerified),
            "pending_email": account.pendingEmail.map { .string($0.rawValue) } ?? .null,
            "privacy_mode": .bool(account.privacyMode),
            "default_share": .string(account.defaultShare.rawValue),
            "created_at": .string(account.createdAt.rfc3339),
        ])
    }

    /// An account as operators see it (`vicinity users --json`): the owner's view, and whether it is disabled.
    public static func operatorView(_ account: Account) -> JSONValue {
        guard case .object(var fields) = Self.account(account) else { return Self.account(account) }
        fields["disabled"] = .bool(account.disabled)
        return .object(fields)
    }

    /// The answer to a request for a code: the same whatever the address, and how long a code works.
    static func codeRequested(lifetime: Duration) -> JSONValue {
        .object(["code_lifetime_s": .number(Double(lifetime.wholeSecondsRoundedUp))])
    }

    static func person(_ view: PersonView) -> JSONValue {
        var fields = summaryFields(view.person)
        switch view.relationship {
        case .none:
            fields["relationship"] = .string("none")
            fields["request_id"] = .null
        case .friend:
            fields["relationship"] = .string("friend")
            fields["request_id"] = .null
        case .requestSent(let id):
            fields["relationship"] = .string("request_sent")
            fields["request_id"] = .string(id.rawValue)
        case .requestReceived(let id):
            fields["relationship"] = .string("request_received")
            fields["request_id"] = .string(id.rawValue)
        case .blocked:
            fields["relationship"] = .string("blocked")
            fields["request_id"] = .null
        }
        return .object(fields)
    }

    /// Someone the caller blocked: who, and since when.
    static func block(_ view: BlockView) -> JSONValue {
        .object(["user": summary(view.person), "since": .string(view.since.rfc3339)])
    }

    /// A friend request; `state` is `pending`, or `accepted` when sending it made the two friends.
    static func friendRequest(_ view: FriendRequestView, state: String) -> [String: JSONValue] {
        [
            "id": .string(view.request.id.rawValue),
            "from": summary(view.from),
            "to": summary(view.to),
            "created_at": .string(view.request.createdAt.rfc3339),
            "state": .string(state),
        ]
    }

    /// A friend as the privacy rule lets the caller see them. `position`, `status`, `label`, `on_campus`,
    /// `updated_at` and `precision` are null unless `presence` is `current` or `last_seen`.
    static func friend(_ view: FriendView) -> [String: JSONValue] {
        var fields = summaryFields(view.friend)
        fields["since"] = .string(view.since.rfc3339)
        fields["share"] = .string(view.shareWithFriend.rawValue)
        fields["share_until"] = view.shareWithFriendUntil.map { .string($0.rfc3339) } ?? .null
        fields["sharing_my_position"] = .bool(view.shareWithFriend != .none)
        fields["precision"] = view.precision.map { .string($0.rawValue) } ?? .null
        fields["presence"] = .string(view.presence.rawValue)
        fields["position"] = view.position.map { coordinates($0) } ?? .null
        fields["status"] = view.position?.status.map { .string($0.rawValue) } ?? .null
        fields["label"] = view.position.map { .string($0.label) } ?? .null
        fields["on_campus"] = view.position?.onCampus.map(JSONValue.bool) ?? .null
        fields["updated_at"] = view.position.map { .string($0.updatedAt.rfc3339) } ?? .null
        fields["distance_m"] = view.distance.map { .number($0.meters) } ?? .null
        fields["bearing_deg"] = view.bearing.map { .number($0.degrees) } ?? .null
        return fields
    }

    /// Friends as a list, or as map pins (GeoJSON points titled with the name, subtitled with the label) for
    /// those with a position the caller may see.
    static func friends(_ views: [FriendView], as representation: Representation) -> Response {
        switch representation {
        case .json:
            return WireEncoding.response(json: .object(["friends": .array(views.map { .object(friend($0)) })]), negotiated: true)
        case .geoJSON:
            let features = views.compactMap { view -> GeoJSONFeature? in
                guard let position = view.position else { return nil }
                var properties = friend(view)
                properties["title"] = .string(view.friend.displayName)
                properties["subtitle"] = .string(position.label)
                return GeoJSONFeature(id: view.friend.id.rawValue, geometry: .point(position.coordinate), properties: properties)
            }
            return WireEncoding.response(
                json: GeoJSONFeatureCollection(features: features).jsonValue, contentType: Representation.geoJSONMediaType,
                negotiated: true)
        }
    }

    /// The caller's own position with what it says.
    static func ownPosition(_ position: SharedPosition, presence: Presence) -> [String: JSONValue] {
        [
            "lat": .number(position.coordinate.latitude),
            "lon": .number(position.coordinate.longitude),
            "accuracy_m": position.accuracy.map { .number($0.distance.meters) } ?? .null,
            "status": position.status.map { .string($0.rawValue) } ?? .null,
            "label": .string(position.label),
            "on_campus": position.onCampus.map(JSONValue.bool) ?? .null,
            "updated_at": .string(position.updatedAt.rfc3339),
            "presence": .string(presence.rawValue),
        ]
    }

    /// Where the caller is after sending a position: their position, the label and the closest place.
    static func positionUpdate(_ update: PositionUpdate) -> JSONValue {
        var fields = ownPosition(update.position, presence: .current)
        fields["closest"] = update.whereabouts.closest.map { .object(hit($0)) } ?? .null
        fields["campuses"] = campuses(update.whereabouts.campuses)
        return .object(fields)
    }

    static func campuses(_ campuses: [Campus]) -> JSONValue {
        .array(campuses.map { .object(["id": .string($0.id.rawValue), "name": .string($0.name)]) })
    }

    /// The way to a friend: how far, which way, and a link that opens walking directions to `position`.
    static func direction(_ view: FriendView, to position: SharedPosition) -> JSONValue {
        var fields = friend(view)
        fields["directions_url"] = .string(DirectionsURL.walking(to: position.coordinate))
        return .object(fields)
    }

    private static func coordinates(_ position: SharedPosition) -> JSONValue {
        .object([
            "lat": .number(position.coordinate.latitude),
            "lon": .number(position.coordinate.longitude),
            "accuracy_m": position.accuracy.map { .number($0.distance.meters) } ?? .null,
        ])
    }
}

extension DirectionsURL {
    /// Walking directions from the phone's position, for finding a friend on foot.
    static func walking(to destination: Coordinate) -> String {
        to(destination) + "&travelmode=walking"
    }
}
