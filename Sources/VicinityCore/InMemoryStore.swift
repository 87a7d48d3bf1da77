import GeoCore
import Synchronization

/// A store that keeps everything in memory and answers by brute force over every place.
///
/// It is the reference the other stores are tested against, and a store for tests of the layers above.
public final class InMemoryStore: PlaceStore, CampusStore, Stores {
    struct State {
        var places: [PlaceID: Place] = [:]
        var placeRevision = 0
        var campusRevision = 0
        var campuses: [PlaceID: Campus] = [:]
        var social = SocialState()
        var votes = VoteTables()
        var changes = ChangeLog()
    }

    let state = Mutex(State())
    let changeSignal = ChangeSignal()

    public var places: InMemoryStore { self }
    public var campuses: InMemoryStore { self }
    public var accounts: InMemoryStore { self }
    public var positions: InMemoryStore { self }
    public var friends: InMemoryStore { self }
    public var events: InMemoryStore { self }
    public var votes: InMemoryStore { self }
    public var changes: InMemoryStore { self }
    public var outbox: InMemoryStore { self }
    public var devices: InMemoryStore { self }
    public var push: InMemoryStore { self }
    public let guesses = MemoryGuessingLedger()
    public let limits = MemoryWindowLedger()
    public let streamLeases = MemoryStreamLeases()

    public init() {}

    public func upsert(
        _ places: [Place], progress: (@Sendable (Int, Int) -> Void)?
    ) async throws -> UpsertSummary {
        try validateBatch(places)
        let summary = state.withLock { state in
            state.placeRevision += 1
            return Self.merge(places, into: &state.places, key: \.id)
        }
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
        let places = state.withLock { $0.places }
        let candidates = places.values.lazy
            .filter { search.categories.isEmpty || search.categories.contains($0.category) }
            .map(NameMatch.Candidate.init)
        return NameMatch.best(candidates, matching: search.text, limit: search.limit).compactMap { places[$0] }
    }

    public func nearbyPage(_ query: NearbyQuery) async throws -> NearbyPage {
        let places = state.withLock { $0.places }
        let candidates = places.values.lazy
            .filter { query.categories.isEmpty || query.categories.contains($0.category) }
            .map { PlaceLocation(id: $0.id, coordinate: $0.coordinate) }
        let ranked = Ranking.nearest(
            candidates, to: query.centre, within: query.radius.distance, after: query.after,
            limit: query.limit.value + 1)
        return NearbyPage(
            ranked: ranked.compactMap { places[$0.id].map { PlaceHit(place: $0, from: query.centre) } },
            limit: query.limit)
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

    public func forEachPlace(_ body: @Sendable ([Place]) throws -> Void) async throws {
        try body(Array(state.withLock { $0.places }.values))
    }

    public func revision() async throws -> Int { state.withLock { $0.placeRevision } }

    public func categories() async throws -> [Category: Int] {
        state.withLock { state in state.places.values.reduce(into: [:]) { $0[$1.category, default: 0] += 1 } }
    }

    public func upsert(_ campuses: [Campus]) async throws -> UpsertSummary {
        state.withLock { state in
            state.campusRevision += 1
            return Self.merge(campuses, into: &state.campuses, key: \.id)
        }
    }

    public func campusRevision() async throws -> Int { state.withLock { $0.campusRevision } }

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
