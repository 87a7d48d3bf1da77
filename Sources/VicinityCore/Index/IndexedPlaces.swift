import GeoCore
import Synchronization

/// Places held in memory in front of a store of record, which stays the durable copy.
///
/// Reads by position (nearby, closest, temples), by id and counts are answered from a `PointGrid` without
/// touching the record. Writes go to the record first and reach memory after they commit, one at a time in
/// commit order. Name search goes to the record, whose text index it needs.
///
/// Another process may write the record too (`vicinity import` while the server runs): every write raises the
/// record's `revision`, and `refreshIfStale()` reloads when the revision moved without this index knowing why.
public final class IndexedPlaces<Record: PlaceStore>: PlaceStore {
    struct Snapshot: Sendable {
        var grid: PointGrid<Place, Category>
        /// The record's revision this snapshot reflects; nil when it reflects none for sure and must reload.
        var revision: Int?
    }

    public let record: Record
    private let index: SharedIndex<Snapshot>
    private let writes = SerialGate()

    /// Loads every place of the record into memory.
    public init(record: Record) async throws {
        self.record = record
        index = SharedIndex(try await Self.load(record))
    }

    private static func load(_ record: Record) async throws -> Snapshot {
        // The revision is read before the places: a write in between makes the snapshot look older than it
        // is, which costs a needless reload, never a missed one.
        let revision = try await record.revision()
        let loaded = Mutex<[Place]>([])
        try await record.forEachPlace { batch in loaded.withLock { $0 += batch } }
        var grid = PointGrid<Place, Category>(group: { $0.category })
        let places = loaded.withLock { places in
            defer { places = [] }
            return places
        }
        grid.reserveCapacity(places.count)
        grid.insert(contentsOf: places)
        return Snapshot(grid: grid, revision: revision)
    }

    /// Reloads from the record when it changed in a way this index did not see. Returns whether it reloaded.
    @discardableResult
    public func refreshIfStale() async throws -> Bool {
        try await writes.run {
            let held = index.read { $0.revision }
            guard try await record.revision() != held else { return false }
            let fresh = try await Self.load(record)
            index.write { $0 = fresh }
            return true
        }
    }

    // MARK: - Writes

    public func upsert(_ places: [Place], progress: (@Sendable (Int, Int) -> Void)?) async throws -> UpsertSummary {
        try await writes.run {
            let before = index.read { $0.revision }
            let summary = try await record.upsert(places, progress: progress)
            let after = try? await record.revision()
            index.write { snapshot in
                for place in places { snapshot.grid.insert(place) }
                // One step from the revision held means this write alone; any other gap is a write this index
                // has not seen, which `refreshIfStale` will load.
                snapshot.revision = before.flatMap { before in after == before + 1 ? after : nil }
            }
            return summary
        }
    }

    public func plannedUpsert(_ places: [Place]) async throws -> UpsertSummary {
        try await record.plannedUpsert(places)
    }

    // MARK: - Reads from memory

    public func place(id: PlaceID) async throws -> Place? {
        index.read { $0.grid.item(id) }
    }

    public func nearbyPage(_ query: NearbyQuery) async throws -> NearbyPage {
        let ranked = index.read { snapshot in
            snapshot.grid.nearest(
                to: query.centre, within: query.radius.distance, groups: query.categories,
                after: query.after.map { ($0.distance, $0.id) }, limit: query.limit.value + 1)
        }
        return NearbyPage(
            ranked: ranked.map { PlaceHit(place: $0.item, from: query.centre, distance: $0.distance) },
            limit: query.limit)
    }

    public func closest(to centre: Coordinate, categories: Set<Category>) async throws -> PlaceHit? {
        index.read { $0.grid.closest(to: centre, groups: categories) }
            .map { PlaceHit(place: $0.item, from: centre, distance: $0.distance) }
    }

    public func count() async throws -> Int {
        index.read { $0.grid.count }
    }

    public func categories() async throws -> [Category: Int] {
        index.read { $0.grid.countsByGroup }
    }

    // MARK: - Reads from the record

    public func search(_ search: PlaceSearch) async throws -> [Place] {
        try await record.search(search)
    }

    public func forEachPlace(_ body: @Sendable ([Place]) throws -> Void) async throws {
        try await record.forEachPlace(body)
    }

    public func revision() async throws -> Int {
        try await record.revision()
    }
}

/// Campus boundaries held in memory in front of a store of record: "is this point on campus?" is asked with
/// every closest-place answer and every shared position, and there are few campuses, so all of them are
/// kept and tested directly. Follows other processes' writes as `IndexedPlaces` does.
public final class IndexedCampuses<Record: CampusStore>: CampusStore {
    struct Snapshot: Sendable {
        var campuses: [Campus]
        var revision: Int?
    }

    public let record: Record
    private let held: SharedIndex<Snapshot>
    private let writes = SerialGate()

    public init(record: Record) async throws {
        self.record = record
        held = SharedIndex(try await Self.load(record))
    }

    private static func load(_ record: Record) async throws -> Snapshot {
        let revision = try await record.campusRevision()
        return Snapshot(campuses: try await record.campuses(), revision: revision)
    }

    @discardableResult
    public func refreshIfStale() async throws -> Bool {
        try await writes.run {
            guard try await record.campusRevision() != held.read({ $0.revision }) else { return false }
            let fresh = try await Self.load(record)
            held.write { $0 = fresh }
            return true
        }
    }

    public func upsert(_ campuses: [Campus]) async throws -> UpsertSummary {
        try await writes.run {
            let summary = try await record.upsert(campuses)
            let fresh = try? await Self.load(record)
            held.write { $0 = fresh ?? Snapshot(campuses: $0.campuses, revision: nil) }
            return summary
        }
    }

    public func campuses() async throws -> [Campus] { held.read { $0.campuses } }
    public func campusCount() async throws -> Int { held.read { $0.campuses.count } }
    public func campusRevision() async throws -> Int { try await record.campusRevision() }

    public func campuses(containing point: Coordinate) async throws -> [Campus] {
        held.read { $0.campuses.filter { $0.boundary.contains(point) } }
    }
}

/// A set of stores with places, campuses and open public votes held in memory in front of the record's: what
/// the server runs on.
public struct IndexedStores<Record: Stores>: Stores {
    public let record: Record
    public let places: IndexedPlaces<Record.Places>
    public let campuses: IndexedCampuses<Record.Campuses>
    public let votes: IndexedVotes<Record.Votes>

    /// Loads the record's places, campuses and the public votes open at `now` into memory.
    public init(record: Record, at now: Timestamp) async throws {
        self.record = record
        places = try await IndexedPlaces(record: record.places)
        campuses = try await IndexedCampuses(record: record.campuses)
        votes = try await IndexedVotes(record: record.votes, at: now)
    }

    /// Reloads whatever another process changed. Returns what was reloaded, for the log.
    public func refreshIfStale() async throws -> (places: Bool, campuses: Bool) {
        (try await places.refreshIfStale(), try await campuses.refreshIfStale())
    }

    public var accounts: Record.Accounts { record.accounts }
    public var positions: Record.Positions { record.positions }
    public var friends: Record.Friends { record.friends }
    public var events: Record.Events { record.events }
}
