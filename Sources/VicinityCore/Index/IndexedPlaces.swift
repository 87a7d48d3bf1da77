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
    public let record: Record
    private let index: FollowedCopy<PointGrid<Place, Category>>

    /// Loads every place of the record into memory.
    public init(record: Record) async throws {
        self.record = record
        index = try await FollowedCopy(revision: { try await record.revision() }, load: { try await Self.load(record) })
    }

    private static func load(_ record: Record) async throws -> PointGrid<Place, Category> {
        let loaded = Mutex<[Place]>([])
        try await record.forEachPlace { batch in loaded.withLock { $0 += batch } }
        var grid = PointGrid<Place, Category>(group: { $0.category })
        let places = loaded.withLock { places in
            defer { places = [] }
            return places
        }
        grid.reserveCapacity(places.count)
        grid.insert(contentsOf: places)
        return grid
    }

    /// Reloads from the record when it changed in a way this index did not see. Returns whether it reloaded.
    @discardableResult
    public func refreshIfStale() async throws -> Bool {
        try await index.refreshIfStale()
    }

    // MARK: - Writes

    public func upsert(_ places: [Place], progress: (@Sendable (Int, Int) -> Void)?) async throws -> UpsertSummary {
        try await index.change {
            try await record.upsert(places, progress: progress)
        } apply: { grid in
            for place in places { grid.insert(place) }
        }
    }

    public func plannedUpsert(_ places: [Place]) async throws -> UpsertSummary {
        try await record.plannedUpsert(places)
    }

    // MARK: - Reads from memory

    public func place(id: PlaceID) async throws -> Place? {
        index.read { $0.item(id) }
    }

    public func nearbyPage(_ query: NearbyQuery) async throws -> NearbyPage {
        nearbyPageNow(query)
    }

    public func closest(to centre: Coordinate, categories: Set<Category>) async throws -> PlaceHit? {
        closestNow(to: centre, categories: categories)
    }

    public func count() async throws -> Int {
        index.read { $0.count }
    }

    public func categories() async throws -> [Category: Int] {
        index.read { $0.countsByGroup }
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

extension IndexedPlaces: HeldPlaceReads {
    public func nearbyPageNow(_ query: NearbyQuery) -> NearbyPage {
        let ranked = index.read { grid in
            grid.nearest(
                to: query.centre, within: query.radius.distance, groups: query.categories,
                after: query.after.map { ($0.distance, $0.id) }, limit: query.limit.value + 1
            ) { PlaceHit(place: $0, from: query.centre, distance: $1) }
        }
        return NearbyPage(ranked: ranked, limit: query.limit)
    }

    public func closestNow(to centre: Coordinate, categories: Set<Category>) -> PlaceHit? {
        index.read { $0.closest(to: centre, groups: categories) }
            .map { PlaceHit(place: $0.item, from: centre, distance: $0.distance) }
    }
}

/// Campus boundaries held in memory in front of a store of record: "is this point on campus?" is asked with
/// every closest-place answer and every shared position, and there are few campuses, so all of them are
/// kept and tested directly. Follows other processes' writes as `IndexedPlaces` does.
public final class IndexedCampuses<Record: CampusStore>: CampusStore {
    public let record: Record
    /// In order of id, as `campuses()` lists them.
    private let held: FollowedCopy<[Campus]>

    public init(record: Record) async throws {
        self.record = record
        held = try await FollowedCopy(revision: { try await record.campusRevision() }, load: { try await record.campuses() })
    }

    @discardableResult
    public func refreshIfStale() async throws -> Bool {
        try await held.refreshIfStale()
    }

    public func upsert(_ campuses: [Campus]) async throws -> UpsertSummary {
        try await held.change {
            try await record.upsert(campuses)
        } apply: { held in
            // The later of two with one id wins, as in the record.
            var byID = Dictionary(held.map { ($0.id, $0) }, uniquingKeysWith: { _, later in later })
            for campus in campuses { byID[campus.id] = campus }
            held = byID.values.sorted { $0.id < $1.id }
        }
    }

    public func campuses() async throws -> [Campus] { held.read { $0 } }
    public func campusCount() async throws -> Int { campusCountNow() }
    public func campusRevision() async throws -> Int { try await record.campusRevision() }

    public func campuses(containing point: Coordinate) async throws -> [Campus] {
        campusesNow(containing: point)
    }
}

extension IndexedCampuses: HeldCampusReads {
    public func campusesNow(containing point: Coordinate) -> [Campus] {
        held.read { $0.filter { $0.boundary.contains(point) } }
    }

    public func campusCountNow() -> Int { held.read { $0.count } }
}

/// A set of stores with places, campuses, shared positions, open public votes and alerts held in memory in front of
/// the record's, and over a record other processes share, the sessions, accounts and friendships looked up: what
/// the server runs on.
public struct IndexedStores<Record: Stores>: Stores {
    public let record: Record
    public let places: IndexedPlaces<Record.Places>
    public let campuses: IndexedCampuses<Record.Campuses>
    public let positions: IndexedPositions<Record.Positions>
    public let votes: IndexedVotes<Record.Votes>
    public let alerts: HeldAlerts<Record.Friends>
    public let accounts: HeldAccounts<Record.Accounts>
    public let friends: HeldFriendships<Record.Friends>

    /// Loads the record's places, campuses, positions, the public votes open at `now` and the alerts into memory,
    /// and holds up to `held` sessions, as many accounts and the friendships of as many people once looked up
    /// (none by default: each is read from the record, which sees another process's change at once;
    /// `HeldAccounts` and `HeldFriendships` say what holding them changes). The unsettled alerts are read again at
    /// most once in `alertRereads` (`HeldAlerts`).
    public init(
        record: Record, at now: Timestamp, held: Int = 0, alertRereads: Duration = HeldAlerts<Record.Friends>.standardRereadEvery
    ) async throws {
        self.record = record
        places = try await IndexedPlaces(record: record.places)
        campuses = try await IndexedCampuses(record: record.campuses)
        positions = try await IndexedPositions(record: record.positions)
        votes = try await IndexedVotes(record: record.votes, at: now)
        alerts = try await HeldAlerts(record: record.friends, rereadEvery: alertRereads)
        // The alerts' sights are read again for every account or friendship changed, here or through the feed.
        let alerts = alerts
        accounts = HeldAccounts(record: record.accounts, capacity: held) { alerts.sightsChanged(of: $0) }
        friends = HeldFriendships(record: record.friends, capacity: held) { alerts.sightsChanged(of: $0) }
    }

    /// Reloads whatever another process changed. Returns what was reloaded, for the log.
    public func refreshIfStale() async throws -> (places: Bool, campuses: Bool) {
        (try await places.refreshIfStale(), try await campuses.refreshIfStale())
    }

    public var events: Record.Events { record.events }
    public var changes: Record.Changes { record.changes }
    public var guesses: Record.Guesses { record.guesses }
    public var limits: Record.Limits { record.limits }
    public var streamLeases: Record.StreamLeases { record.streamLeases }
    public var outbox: Record.Outbox { record.outbox }
    public var devices: Record.Devices { record.devices }
    public var push: Record.Push { record.push }

    public func follow(_ changes: [Change], at now: Timestamp) async throws {
        var users: [UserID] = [], votes: Set<VoteID> = [], alerted: Set<UserID> = [], signedOut: Set<UserID> = []
        var changedAccounts: Set<UserID> = [], befriended: Set<UserID> = [], moved: [AlertMove] = []
        for change in changes {
            switch change {
            case .position(let user): users.append(user)
            case .vote(let id): votes.insert(id)
            case .alerts(let user): alerted.insert(user)
            case .alertMoved(let move): moved.append(move)
            case .sessions(let user): signedOut.insert(user)
            case .account(let user): changedAccounts.insert(user)
            case .friendships(let user): befriended.insert(user)
            case .event: continue
            }
        }
        // Forgotten before positions are read again: a position committed after a change to who may see it is
        // never read here before that change is.
        if !signedOut.isEmpty { accounts.forget(signedOut) }
        if !changedAccounts.isEmpty { accounts.forgetAccounts(changedAccounts) }
        if !befriended.isEmpty { friends.forget(befriended) }
        try await positions.refresh(users)
        try await self.votes.refresh(votes, at: now)
        try await alerts.refresh(alerted, moved: moved)
    }

    public func reloadFollowed(at now: Timestamp) async throws {
        try await positions.reload()
        try await votes.reload(at: now)
        try await alerts.reload()
        accounts.forgetAll()
        friends.forgetAll()
    }

    public func heldAlerts(of person: UserID) -> AlertContext? { alerts.alerts(of: person) }
    public func alertsChanged(of people: [UserID]) { alerts.unsettle(people) }
    public func alertsAdvanced(_ changes: [AlertChange], moved: Set<AlertID>) { alerts.advanced(changes, moved: moved) }
}
