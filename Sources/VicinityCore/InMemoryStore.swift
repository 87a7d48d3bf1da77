import Foundation
import GeoCore
import Synchronization

/// A store that keeps everything in memory and answers by brute force over every place.
///
/// It is the reference the other stores are tested against, and a store for tests of the layers above.
public final class InMemoryStore: PlaceStore, CampusStore {
    private struct State {
        var places: [PlaceID: Place] = [:]
        var campuses: [PlaceID: Campus] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    public func upsert(
        _ places: [Place], progress: (@Sendable (Int, Int) -> Void)?
    ) async throws -> UpsertSummary {
        try validateBatch(places)
        let summary = state.withLock { Self.merge(places, into: &$0.places, key: \.id) }
        progress?(places.count, places.count)
        return summary
    }

    public func plannedUpsert(_ places: [Place]) async throws -> UpsertSummary {
        try validateBatch(places)
        return state.withLock { state in
            var summary = UpsertSummary()
            for place in places {
                switch state.places[place.id] {
                case nil: summary.inserted += 1
                case place: summary.unchanged += 1
                default: summary.updated += 1
                }
            }
            return summary
        }
    }

    public func place(id: PlaceID) async throws -> Place? {
        state.withLock { $0.places[id] }
    }

    public func search(_ search: PlaceSearch) async throws -> [Place] {
        let all = state.withLock { Array($0.places.values) }
        return NameMatch.rank(all, matching: search)
    }

    public func nearby(_ query: NearbyQuery) async throws -> [PlaceHit] {
        let places = state.withLock { $0.places }
        let candidates = places.values.lazy
            .filter { query.categories.isEmpty || query.categories.contains($0.category) }
            .map { PlaceLocation(id: $0.id, coordinate: $0.coordinate) }
        return Ranking.nearest(candidates, to: query.centre, within: query.radius.distance, limit: query.limit.value)
            .compactMap { places[$0.id].map { PlaceHit(place: $0, from: query.centre) } }
    }

    public func closest(to centre: Coordinate, categories: Set<Category>) async throws -> PlaceHit? {
        let places = state.withLock { $0.places }
        let candidates = places.values.lazy
            .filter { categories.isEmpty || categories.contains($0.category) }
            .map { PlaceLocation(id: $0.id, coordinate: $0.coordinate) }
        return Ranking.nearest(candidates, to: centre, within: nil, limit: 1).first
            .flatMap { places[$0.id] }
            .map { PlaceHit(place: $0, from: centre) }
    }

    public func count() async throws -> Int { state.withLock { $0.places.count } }

    public func categories() async throws -> [Category: Int] {
        state.withLock { state in state.places.values.reduce(into: [:]) { $0[$1.category, default: 0] += 1 } }
    }

    public func upsert(_ campuses: [Campus]) async throws -> UpsertSummary {
        state.withLock { Self.merge(campuses, into: &$0.campuses, key: \.id) }
    }

    /// Stores each value under its key, counting what was new, replaced or already identical.
    private static func merge<Value: Equatable>(
        _ values: [Value], into storage: inout [PlaceID: Value], key: KeyPath<Value, PlaceID>
    ) -> UpsertSummary {
        var summary = UpsertSummary()
        for value in values {
            switch storage.updateValue(value, forKey: value[keyPath: key]) {
            case nil: summary.inserted += 1
            case value: summary.unchanged += 1
            default: summary.updated += 1
            }
        }
        return summary
    }

    public func campuses() async throws -> [Campus] {
        state.withLock { $0.campuses.values.sorted { $0.id < $1.id } }
    }

    public func campusCount() async throws -> Int { state.withLock { $0.campuses.count } }

    public func campuses(containing point: Coordinate) async throws -> [Campus] {
        try await campuses().filter { $0.boundary.contains(point) }
    }
}

/// Name search rules shared by every store: a case- and diacritic-insensitive substring of the name or an
/// alias; exact matches first, then prefixes, then the rest, each group by name then id.
public enum NameMatch {
    /// The folded form stores compare: lower case, accents removed. Canonical decomposition first, so that
    /// "é" becomes "e" plus a combining accent that is then dropped; ASCII text skips that work.
    public static func folded(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return text.lowercased() }
        return fold(decomposed(text))
    }

    static func fold(_ text: String) -> String {
        String(String.UnicodeScalarView(text.lowercased().unicodeScalars.filter {
            $0.properties.generalCategory != .nonspacingMark
        }))
    }

    /// 0 for an exact match, 1 for a prefix, 2 for a substring, nil for no match.
    public static func rank(of place: Place, folded needle: String) -> Int? {
        ([place.name] + place.aliases).compactMap { name -> Int? in
            let candidate = folded(name)
            if candidate == needle { return 0 }
            if candidate.hasPrefix(needle) { return 1 }
            return candidate.contains(needle) ? 2 : nil
        }.min()
    }

    public static func rank(_ places: some Sequence<Place>, matching search: PlaceSearch) -> [Place] {
        let needle = folded(search.text)
        return places
            .filter { search.categories.isEmpty || search.categories.contains($0.category) }
            .compactMap { place in rank(of: place, folded: needle).map { (rank: $0, place: place) } }
            .sorted { a, b in
                if a.rank != b.rank { return a.rank < b.rank }
                if a.place.name != b.place.name { return a.place.name < b.place.name }
                return a.place.id < b.place.id
            }
            .prefix(search.limit.value)
            .map(\.place)
    }

    /// Canonical decomposition so that "é" becomes "e" + a combining accent that `fold` drops.
    static func decomposed(_ text: String) -> String { text.decomposedStringWithCanonicalMapping }
}
