import GeoCore

/// How exactly someone shares where they are with one friend.
public enum ShareLevel: String, Hashable, Sendable, CaseIterable {
    /// The position itself.
    case exact
    /// The closest building's name and point only (`BuildingArea`): distances, bearings, pins and live moves
    /// are to the building, never to the person, and a move inside it tells the friend nothing.
    case building
    /// Nothing: the friend sees what they would see of someone with no position.
    case none

    /// What a friendship starts with when a person has chosen no default.
    public static let standard = ShareLevel.exact

    /// The level a side shares at `now`: `level` until `until`, then the sharer's default (`fallback`), read
    /// off the clock as vote states are, whether or not the end has been announced yet.
    public static func effective(_ level: ShareLevel, until: Timestamp?, fallback: ShareLevel, at now: Timestamp) -> ShareLevel {
        guard let until, now >= until else { return level }
        return fallback
    }

    /// The longest a level may be given for: a week. Longer is "until I change it", which needs no end.
    public static let longestFor = Duration.seconds(7 * 24 * 3600)

    /// A level as clients send it.
    public init(wire text: String, field: String) throws(ValidationError) {
        guard let level = ShareLevel(rawValue: text) else {
            throw ValidationError(field: field, message: "must be one of exact, building, none")
        }
        self = level
    }
}

/// Where a position is at building level: the place closest to it, when it is close enough to be a landmark
/// (`LabelRule.landmark`), and whether the position is around it. Two positions in the same area tell a friend
/// who sees buildings only the same thing.
public struct BuildingArea: Hashable, Sendable {
    public var place: PlaceID
    public var name: String
    /// The place's own point: what a friend sharing at building level is shown at.
    public var coordinate: Coordinate
    /// Within `LabelRule.around` of the place.
    public var isAround: Bool

    /// Nil beyond the landmark distance: no building says where someone is, so nothing is shown.
    public init?(closest: PlaceHit, rule: LabelRule) {
        guard closest.distance <= rule.landmark else { return nil }
        place = closest.place.id
        name = closest.place.name
        coordinate = closest.place.coordinate
        isAround = closest.distance <= rule.around
    }

    /// "Around Library", or "Near Library" farther than `LabelRule.around`: never the distance or direction,
    /// which would place the person within the building's surroundings.
    public var label: String { isAround ? "Around \(name)" : "Near \(name)" }

    /// The same area: nothing a friend sharing at building level sees has changed.
    public func isSameArea(as other: BuildingArea?) -> Bool {
        place == other?.place && isAround == other?.isAround
    }

    /// The position as a friend who is shown this area sees it: the building's point and label, the status,
    /// no accuracy, no campus (near a boundary it would say which side of it the person is), and the time the
    /// person came to this area rather than the time of their last fix.
    public func coarsened(_ position: SharedPosition) -> SharedPosition {
        SharedPosition(
            userID: position.userID, coordinate: coordinate, accuracy: nil, status: position.status, label: label,
            onCampus: nil, closestPlace: place, updatedAt: position.areaSince, areaSince: position.areaSince)
    }
}
