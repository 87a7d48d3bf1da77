import GeoCore

/// Turns a position into words people use: "Around Hall of Science", and whether it is on campus.
public struct LabelRule: Hashable, Sendable {
    /// Within this distance of the closest place, a position is "Around" it. 100 m: the two independent
    /// sources of CSULB building positions shipped in Data/ disagree by up to 98 m for the same building
    /// (median 16.5 m), so a tighter threshold would call people "away" from a building they stand in.
    public var around: Distance
    /// Within this distance, the label names the closest place with distance and direction; beyond it, a place
    /// is too far to be a landmark for where someone is.
    public var landmark: Distance

    public static let standard = LabelRule(around: .meters(100), landmark: .meters(1000))

    public init(around: Distance, landmark: Distance) {
        self.around = around
        self.landmark = landmark
    }

    public func label(closest: PlaceHit?, onCampus: Bool?) -> String {
        if let closest, closest.distance <= around {
            return "Around \(closest.place.name)"
        }
        if let closest, closest.distance <= landmark {
            let prefix = onCampus == true ? "On campus, " : ""
            let metres = Int(closest.distance.meters.rounded())
            return "\(prefix)\(metres) m \(closest.bearing.opposite.compassPoint) of \(closest.place.name)"
        }
        return onCampus == true ? "On campus" : "Away from known places"
    }
}

extension Bearing {
    /// The reverse direction: where the observer is as seen from the place.
    public var opposite: Bearing { Bearing(degrees: degrees + 180) }
}

/// Where a position is, in the terms the apps show.
public struct Whereabouts: Hashable, Sendable {
    /// The closest place (of the requested categories), if the store has any.
    public var closest: PlaceHit?
    public var label: String
    /// True or false against the loaded campus boundaries; nil when none is loaded.
    public var onCampus: Bool?
    /// The campuses containing the position.
    public var campuses: [Campus]

    /// From the closest place, the campuses containing the position and how many campuses there are.
    init(closest: PlaceHit?, containing: [Campus], campusCount: Int, rule: LabelRule) {
        let onCampus: Bool? = campusCount == 0 ? nil : !containing.isEmpty
        self.init(closest: closest, label: rule.label(closest: closest, onCampus: onCampus), onCampus: onCampus, campuses: containing)
    }

    public init(closest: PlaceHit?, label: String, onCampus: Bool?, campuses: [Campus]) {
        self.closest = closest
        self.label = label
        self.onCampus = onCampus
        self.campuses = campuses
    }
}

/// `Locator`'s reads by position over stores that hold their data in memory (`HeldPlaceReads`,
/// `HeldCampusReads`), answered without waiting, with the same rules.
public struct HeldLocator: Sendable {
    let places: any HeldPlaceReads
    let campuses: any HeldCampusReads
    let labelRule: LabelRule

    public func whereabouts(of position: Coordinate, categories: Set<Category> = []) -> Whereabouts {
        Whereabouts(
            closest: places.closestNow(to: position, categories: categories),
            containing: campuses.campusesNow(containing: position), campusCount: campuses.campusCountNow(), rule: labelRule)
    }

    public func nearby(_ query: NearbyQuery) -> NearbyPage {
        places.nearbyPageNow(query)
    }
}

/// Answers "where am I?" and "what is near me?" from the stores, with the service's rules applied: the place
/// service that the HTTP front and the friend finder call. It keeps its stores to itself, so no caller can
/// skip a rule on the way to them.
public struct Locator<Places: PlaceStore, Campuses: CampusStore>: Sendable {
    private let places: Places
    private let campuses: Campuses
    public let labelRule: LabelRule
    public let temples: TempleCategories

    /// The same reads answered without waiting, when both stores hold their data in memory; nil otherwise.
    public let now: HeldLocator?

    public init(places: Places, campuses: Campuses, labelRule: LabelRule = .standard, temples: TempleCategories = .standard) {
        self.places = places
        self.campuses = campuses
        self.labelRule = labelRule
        self.temples = temples
        if let heldPlaces = places as? any HeldPlaceReads, let heldCampuses = campuses as? any HeldCampusReads {
            now = HeldLocator(places: heldPlaces, campuses: heldCampuses, labelRule: labelRule)
        } else {
            now = nil
        }
    }

    public func whereabouts(of position: Coordinate, categories: Set<Category> = []) async throws -> Whereabouts {
        let closest = try await places.closest(to: position, categories: categories)
        let containing = try await campuses.campuses(containing: position)
        return Whereabouts(closest: closest, containing: containing, campusCount: try await campuses.campusCount(), rule: labelRule)
    }

    public func nearby(_ query: NearbyQuery) async throws -> NearbyPage {
        try await places.nearbyPage(query)
    }

    public func search(_ search: PlaceSearch) async throws -> [Place] {
        try await places.search(search)
    }

    public func place(id: PlaceID) async throws -> Place? {
        try await places.place(id: id)
    }

    /// The building area a shared position is in, from its closest place as it is now; nil when that place is
    /// gone or too far to be a landmark.
    public func area(of position: SharedPosition) async throws -> BuildingArea? {
        guard let id = position.closestPlace, let place = try await places.place(id: id) else { return nil }
        return BuildingArea(closest: PlaceHit(place: place, from: position.coordinate), rule: labelRule)
    }

    /// Temples within the radius, nearest first; when none is, the nearest ones however far (one page), so
    /// that someone told to make merit still learns where the nearest temple is. A later page (`after`) is
    /// always within the radius. With no temple category configured there are none (an empty set would mean
    /// "every category" to the store); `serve` refuses that setting.
    public func recommendedTemples(
        around centre: Coordinate, radius: SearchRadius, limit: ResultLimit, after: NearbyCursor? = nil
    ) async throws -> TempleRecommendation {
        guard !temples.categories.isEmpty else { return TempleRecommendation(page: NearbyPage(hits: [], next: nil), withinRadius: true) }
        let page = try await places.nearbyPage(
            NearbyQuery(centre: centre, radius: radius, categories: temples.categories, limit: limit, after: after))
        guard page.hits.isEmpty, after == nil else { return TempleRecommendation(page: page, withinRadius: true) }
        let beyond = try await places.nearbyPage(
            NearbyQuery(centre: centre, radius: .wholeEarth, categories: temples.categories, limit: limit))
        return TempleRecommendation(page: NearbyPage(hits: beyond.hits, next: nil), withinRadius: false)
    }

    public func placeCount() async throws -> Int {
        try await places.count()
    }

    /// Every loaded campus, by id: what a map draws as boundaries.
    public func allCampuses() async throws -> [Campus] {
        try await campuses.campuses()
    }
}

/// Recommended temples: within the radius, or, when none is, the nearest beyond it.
public struct TempleRecommendation: Hashable, Sendable {
    public var page: NearbyPage
    /// False when no temple was within the radius and `page` holds the nearest ones beyond it.
    public var withinRadius: Bool

    public init(page: NearbyPage, withinRadius: Bool) {
        self.page = page
        self.withinRadius = withinRadius
    }
}

/// Which places count as temples for the horoscope flow's "go and remove the bad luck" advice.
public struct TempleCategories: Hashable, Sendable {
    public var categories: Set<Category>

    /// Buddhist temples and shrines: where Thai custom goes to make merit after a bad fortune. Churches,
    /// mosques and other places of worship in the data are not recommended by default; operators can widen
    /// the set.
    public static let standard = TempleCategories(categories: ["buddhist_temple", "shrine"])

    public init(categories: Set<Category>) { self.categories = categories }
}

extension Category: ExpressibleByStringLiteral {
    /// For literals in code, which are written already normalised.
    public init(stringLiteral value: String) {
        do { try self.init(value) } catch { preconditionFailure("invalid category literal \(value): \(error)") }
    }
}
