import GeoCore

/// A search radius as the service accepts it: more than 0 m and at most 50 km.
public struct SearchRadius: Hashable, Sendable {
    public let distance: Distance

    /// 1000 m: the walking distance the apps ask about when they say nothing else.
    public static let standard = SearchRadius(uncheckedMeters: 1000)
    /// 50 km keeps a single query's candidate set bounded on city-scale data.
    public static let maximum = Distance(meters: 50_000)

    public init(meters: Double) throws(ValidationError) {
        guard meters.isFinite, meters > 0, meters <= Self.maximum.meters else {
            throw ValidationError(field: "radius", message: "must be a number of metres in (0, \(Int(Self.maximum.meters))]")
        }
        distance = Distance(meters: meters)
    }

    private init(uncheckedMeters: Double) { distance = Distance(meters: uncheckedMeters) }

    /// Half a great circle: every point of the sphere is within it. Not for clients (their searches stay
    /// bounded); for the few places of a small category when none is near (`Locator.recommendedTemples`).
    static let wholeEarth = SearchRadius(uncheckedMeters: Double.pi * Earth.meanRadius.meters)
}

/// How many results one query may return: 1 to 500.
public struct ResultLimit: Hashable, Sendable {
    public let value: Int

    public static let maximum = 500
    public static let standard = ResultLimit(unchecked: 20)

    public init(_ value: Int) throws(ValidationError) {
        guard (1...Self.maximum).contains(value) else {
            throw ValidationError(field: "limit", message: "must be an integer in [1, \(Self.maximum)]")
        }
        self.value = value
    }

    private init(unchecked: Int) { value = unchecked }
}

/// "What is within `radius` of `centre`?", optionally only of some categories (empty means all), and only
/// after a cursor: the next page of an earlier answer.
public struct NearbyQuery: Hashable, Sendable {
    public var centre: Coordinate
    public var radius: SearchRadius
    public var categories: Set<Category>
    public var limit: ResultLimit
    public var after: NearbyCursor?

    public init(
        centre: Coordinate,
        radius: SearchRadius = .standard,
        categories: Set<Category> = [],
        limit: ResultLimit = .standard,
        after: NearbyCursor? = nil
    ) {
        self.centre = centre
        self.radius = radius
        self.categories = categories
        self.limit = limit
        self.after = after
    }
}

/// Where a page of nearby places ended: the next page holds the places that rank after this distance and id.
///
/// A keyset rather than an offset, so a page never repeats or skips a place because others were added or
/// removed nearer the centre in between; a place that moves or is added between pages is seen where it is
/// when the page that covers its distance is read.
public struct NearbyCursor: Hashable, Sendable {
    public var distance: Distance
    public var id: PlaceID

    public init(distance: Distance, id: PlaceID) {
        self.distance = distance
        self.id = id
    }

    /// The cursor as text for a URL: the exact distance (its bits, so no rounding moves the boundary) and the
    /// id, base64url-encoded. It is opaque to clients; only `init(token:)` reads it.
    public var token: String {
        let text = String(distance.meters.bitPattern, radix: 16) + ":" + id.rawValue
        return Base64URL.encode(Array(text.utf8))
    }

    public init(token: String) throws(ValidationError) {
        let problem = ValidationError(field: "cursor", message: "is not a cursor from a `next` link of this service")
        guard let bytes = Base64URL.decode(token), let text = String(validating: bytes, as: UTF8.self),
            let separator = text.firstIndex(of: ":"),
            let bits = UInt64(text[..<separator], radix: 16)
        else { throw problem }
        let meters = Double(bitPattern: bits)
        guard meters.isFinite, meters >= 0, let id = try? PlaceID(String(text[text.index(after: separator)...])) else {
            throw problem
        }
        self.init(distance: Distance(meters: meters), id: id)
    }
}

/// One page of a nearby answer, and where the next begins when there is more.
public struct NearbyPage: Hashable, Sendable {
    public var hits: [PlaceHit]
    /// Set only when at least one more place ranks after the last hit.
    public var next: NearbyCursor?

    public init(hits: [PlaceHit], next: NearbyCursor?) {
        self.hits = hits
        self.next = next
    }

    /// Makes a page from up to `limit + 1` ranked hits: the one beyond the limit only says that more exist.
    public init(ranked: [PlaceHit], limit: ResultLimit) {
        hits = ranked
        if hits.count > limit.value {
            // Dropping the tail in place keeps the hits where they are: a copy of a long page was a retain and
            // a release per place.
            hits.removeLast(hits.count - limit.value)
            next = hits.last.map { NearbyCursor(distance: $0.distance, id: $0.place.id) }
        } else {
            next = nil
        }
    }
}

/// Name or alias search: case-insensitive substring, optionally within some categories.
public struct PlaceSearch: Hashable, Sendable {
    public var text: String
    public var categories: Set<Category>
    public var limit: ResultLimit

    public init(text: String, categories: Set<Category> = [], limit: ResultLimit = .standard) {
        self.text = text
        self.categories = categories
        self.limit = limit
    }
}

/// A place as seen from a point: how far, and in which direction.
public struct PlaceHit: Hashable, Sendable {
    public var place: Place
    public var distance: Distance
    /// Where the place was seen from.
    public let centre: Coordinate

    /// Worked out when asked for: an answer of ids and distances never needs it, and it is the dearest part of
    /// a hit (three trigonometric functions and an arctangent).
    public var bearing: Bearing { initialBearing(from: centre, to: place.coordinate) }

    public init(place: Place, from centre: Coordinate) {
        self.init(place: place, from: centre, distance: haversineDistance(from: centre, to: place.coordinate))
    }

    /// For a distance already measured by `haversineDistance` from the same centre.
    init(place: Place, from centre: Coordinate, distance: Distance) {
        self.place = place
        self.distance = distance
        self.centre = centre
    }
}

/// What an upsert did, row by row.
public struct UpsertSummary: Hashable, Sendable {
    public var inserted: Int
    public var updated: Int
    public var unchanged: Int

    public init(inserted: Int = 0, updated: Int = 0, unchanged: Int = 0) {
        self.inserted = inserted
        self.updated = updated
        self.unchanged = unchanged
    }

    public var total: Int { inserted + updated + unchanged }
}

/// Where a place is, without the rest of it: what stores rank before they load whole places.
public struct PlaceLocation: Hashable, Sendable {
    public var id: PlaceID
    public var coordinate: Coordinate

    public init(id: PlaceID, coordinate: Coordinate) {
        self.id = id
        self.coordinate = coordinate
    }
}

/// The one ranking every store applies to the candidates its index chose, so that all stores agree to the
/// last metre: haversine distance from GeoCore, nearest first, ties broken by id.
public enum Ranking {
    /// The candidates within `radius` of `centre` (all of them when `radius` is nil), nearest first,
    /// at most `limit`.
    public static func nearest<Candidates: Sequence<PlaceLocation>>(
        _ candidates: Candidates, to centre: Coordinate, within radius: Distance?, after: NearbyCursor? = nil,
        limit: Int
    ) -> [PlaceLocation] {
        nearest(
            candidates, to: centre, within: radius, after: after.map { ($0.distance, $0.id) }, limit: limit,
            at: \.coordinate, id: \.id
        ).map(\.item)
    }

    /// Any located things, ranked as places are: by distance from `centre`, then by id, so that equal
    /// distances come out the same in every store. Each comes with its distance. With `after`, only those
    /// that rank after that distance and id: the next page.
    public static func nearest<Candidates: Sequence, ID: Comparable>(
        _ candidates: Candidates, to centre: Coordinate, within radius: Distance?,
        after: (distance: Distance, id: ID)? = nil, limit: Int,
        at coordinate: (Candidates.Element) -> Coordinate, id: (Candidates.Element) -> ID
    ) -> [(item: Candidates.Element, distance: Distance)] {
        guard limit > 0 else { return [] }
        let measure = HaversineCentre(centre)
        var hits: [(item: Candidates.Element, distance: Distance)] = []
        for item in candidates {
            let distance = measure.distance(to: coordinate(item))
            guard radius.map({ distance <= $0 }) ?? true else { continue }
            if let after, !ranks(distance, id(item), after: after) { continue }
            hits.append((item, distance))
        }
        return best(hits, limit: limit, id: id)
    }

    /// Whether a thing at `distance` with `id` comes after the cursor: farther, or as far with a greater id.
    /// The id is only read on a tie.
    public static func ranks<ID: Comparable>(
        _ distance: Distance, _ id: @autoclosure () -> ID, after cursor: (distance: Distance, id: ID)
    ) -> Bool {
        distance > cursor.distance || (distance == cursor.distance && id() > cursor.id)
    }

    /// The first `limit` of things already measured, nearest first, ties by id.
    ///
    /// Only the `limit` nearest are sorted: the distance of the `limit`-th is found first among the bare
    /// distances (a selection, no comparisons of ids), and what lies beyond it is left out. A search reads about
    /// twice the things it answers with, so this halves the sort. The sort compares distances alone, and ids
    /// only within a run of equal distances after it (rare with measured coordinates): a comparison that may
    /// read ids made the sort of a 500-place page a twentieth of its answer's time.
    public static func best<Item, ID: Comparable>(
        _ measured: [(item: Item, distance: Distance)], limit: Int, id: (Item) -> ID
    ) -> [(item: Item, distance: Distance)] {
        guard limit > 0 else { return [] }
        if limit == 1 {
            return measured.min { a, b in a.distance != b.distance ? a.distance < b.distance : id(a.item) < id(b.item) }
                .map { [$0] } ?? []
        }
        var kept = measured
        if measured.count > limit {
            var distances = measured.map(\.distance.meters)
            let cut = smallest(limit, in: &distances)
            // Everything at the cut's distance stays, so that ties across it are settled by id below.
            kept = measured.filter { $0.distance.meters <= cut }
        }
        kept.sort { $0.distance.meters < $1.distance.meters }
        var start = 0
        while start < kept.count {
            var end = start + 1
            while end < kept.count, kept[end].distance == kept[start].distance { end += 1 }
            if end - start > 1 { kept[start..<end].sort { id($0.item) < id($1.item) } }
            start = end
        }
        if kept.count > limit { kept.removeLast(kept.count - limit) }
        return kept
    }

    /// The `rank`-th smallest of `values` (1 is the smallest), by Hoare's selection; `values` is reordered.
    static func smallest(_ rank: Int, in values: inout [Double]) -> Double {
        precondition(rank >= 1 && rank <= values.count, "a rank within the values")
        var low = 0, high = values.count - 1
        let wanted = rank - 1
        while low < high {
            // The median of three as the pivot keeps sorted or reversed input from the quadratic case.
            let middle = low + (high - low) / 2
            let pivot = max(min(values[low], values[middle]), min(max(values[low], values[middle]), values[high]))
            var left = low, right = high
            while left <= right {
                while values[left] < pivot { left += 1 }
                while values[right] > pivot { right -= 1 }
                if left <= right {
                    values.swapAt(left, right)
                    left += 1
                    right -= 1
                }
            }
            if wanted <= right {
                high = right
            } else if wanted >= left {
                low = left
            } else {
                return values[wanted]
            }
        }
        return values[wanted]
    }
}
