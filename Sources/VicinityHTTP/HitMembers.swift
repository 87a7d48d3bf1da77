import GeoCore
import VicinityCore

/// The members of one place in a list of nearby places or recommended temples. The cases are in the order JSON
/// writes keys (by name), so that the direct writer (`Wire.hitsJSON`) and the JSON values (`Wire.hit`) are both
/// made from this one list and give the same bytes.
enum HitMember: String, CaseIterable, Sendable {
    case aliases
    case attributes
    case bearing = "bearing_deg"
    case category
    case directions = "directions_url"
    case distance = "distance_m"
    case footprint
    case id
    case latitude = "lat"
    case longitude = "lon"
    case name

    /// The member's value as JSON values write it; `Wire.writeHit` writes the same without building it.
    func value(in hit: PlaceHit) -> JSONValue {
        let place = hit.place
        switch self {
        case .aliases: return .array(place.aliases.map(JSONValue.string))
        case .attributes: return .object(place.attributes.mapValues(JSONValue.string))
        case .bearing: return .number(hit.bearing.degrees)
        case .category: return .string(place.category.rawValue)
        case .directions: return .string(DirectionsURL.to(place.coordinate))
        case .distance: return .number(hit.distance.meters)
        case .footprint: return Wire.footprint(place)
        case .id: return .string(place.id.rawValue)
        case .latitude: return .number(place.coordinate.latitude)
        case .longitude: return .number(place.coordinate.longitude)
        case .name: return .string(place.name)
        }
    }
}

/// Which members each place of a list carries. A client that needs only some (ids and distances, say) names
/// them in `fields`, and a long answer then costs a fraction of the bytes to write, send and read.
struct HitMembers: Equatable, Sendable, ExpressibleByArrayLiteral {
    private var bits: UInt16

    init(_ members: some Sequence<HitMember>) {
        bits = 0
        for member in members { insert(member) }
    }

    init(arrayLiteral members: HitMember...) { self.init(members) }

    func contains(_ member: HitMember) -> Bool { bits & Self.bit(member) != 0 }

    mutating func insert(_ member: HitMember) { bits |= Self.bit(member) }

    /// What a nearby place carries unless the client chose: everything but the outline and directions.
    static let place: HitMembers = [.aliases, .attributes, .bearing, .category, .distance, .id, .latitude, .longitude, .name]
    /// A recommended temple: a place with the link that starts navigation to it.
    static let temple: HitMembers = {
        var members = place
        members.insert(.directions)
        return members
    }()

    /// The names `fields` accepts for nearby places: the members a place carries by default (the outline has
    /// its own switch, `footprint=true`).
    static let selectable = HitMember.allCases.filter(place.contains)

    private static func bit(_ member: HitMember) -> UInt16 {
        // `allCases` has eleven members, so each has a bit of the sixteen.
        1 << UInt16(HitMember.allCases.firstIndex(of: member) ?? 0)
    }
}
