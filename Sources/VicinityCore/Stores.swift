import GeoCore

/// Where places live. Stores pick candidates with whatever index they have; `Ranking` orders them, so every
/// store gives the same answer for the same data.
///
/// Writers in other processes may share the data: what each call guarantees then is said with it.
public protocol PlaceStore: Sendable {
    /// Inserts new places and replaces changed ones by id, all or nothing. Re-sending an identical place
    /// changes nothing and counts as unchanged. `progress` is told how many of the places are done.
    /// Concurrent upserts take turns, so each one's summary counts its own changes, and each raises
    /// `revision()` once it has committed.
    func upsert(_ places: [Place], progress: (@Sendable (_ done: Int, _ total: Int) -> Void)?) async throws -> UpsertSummary

    /// What `upsert` would do with these places, changing nothing.
    func plannedUpsert(_ places: [Place]) async throws -> UpsertSummary

    func place(id: PlaceID) async throws -> Place?

    /// Places whose name or alias contains the text, case-insensitively; best (exact, then prefix) first.
    func search(_ search: PlaceSearch) async throws -> [Place]

    /// Places within the radius that rank after the query's cursor, nearest first, with the cursor of the
    /// next page when more remain.
    func nearbyPage(_ query: NearbyQuery) async throws -> NearbyPage

    /// The nearest place of the given categories (any when empty), wherever it is; nil only when the store
    /// holds no such place.
    func closest(to centre: Coordinate, categories: Set<Category>) async throws -> PlaceHit?

    func count() async throws -> Int

    /// Every distinct category with its number of places.
    func categories() async throws -> [Category: Int]

    /// Hands every place to `body`, a batch at a time, from one consistent view of the store: what a hot
    /// index is built from.
    func forEachPlace(_ body: @Sendable ([Place]) throws -> Void) async throws

    /// A number that changes with every committed write of places through any store opened on the same
    /// data, also in another process: a copy of the places made at one revision is current while the
    /// revision stays the same.
    func revision() async throws -> Int
}

extension PlaceStore {
    public func upsert(_ places: [Place]) async throws -> UpsertSummary {
        try await upsert(places, progress: nil)
    }

    /// Places within the radius, nearest first: the first page.
    public func nearby(_ query: NearbyQuery) async throws -> [PlaceHit] {
        try await nearbyPage(query).hits
    }
}

/// Where campus boundaries live.
public protocol CampusStore: Sendable {
    func upsert(_ campuses: [Campus]) async throws -> UpsertSummary
    func campuses() async throws -> [Campus]
    /// The campuses whose boundary contains the point.
    func campuses(containing point: Coordinate) async throws -> [Campus]
    /// How many campuses are loaded: with none, whether a point is on campus is unknown rather than false.
    func campusCount() async throws -> Int
    /// As `PlaceStore.revision()`, for campuses.
    func campusRevision() async throws -> Int
}

/// The result of an upsert that was refused as a whole: each row's problem, nothing written.
public struct BatchError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Problem: Hashable, Sendable {
        /// Index of the row in the batch.
        public var index: Int
        public var message: String
    }

    public var problems: [Problem]

    public init(problems: [Problem]) { self.problems = problems }

    public var description: String {
        problems.map { "row \($0.index): \($0.message)" }.joined(separator: "\n")
    }
}

/// Checks a batch's rules that no single place can: ids are unique within the batch.
public func validateBatch(_ places: [Place]) throws(BatchError) {
    var firstIndex: [PlaceID: Int] = [:]
    // Sized once: a million-place import otherwise rehashes the table twenty times over.
    firstIndex.reserveCapacity(places.count)
    var problems: [BatchError.Problem] = []
    for (index, place) in places.enumerated() {
        if let first = firstIndex[place.id] {
            problems.append(.init(index: index, message: "id \(place.id) repeats row \(first)"))
        } else {
            firstIndex[place.id] = index
        }
    }
    if !problems.isEmpty { throw BatchError(problems: problems) }
}
