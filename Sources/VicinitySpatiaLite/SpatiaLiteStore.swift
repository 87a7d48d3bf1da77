import Foundation
import GRDB
import GeoCore
import Logging
import VicinityCore
import VicinitySQL

/// Places, campuses, accounts, positions, friendships and events in one SQLite file with SpatiaLite geometry
/// and R*Tree spatial indexes.
///
/// The file is a normal SpatiaLite database (WGS84, SRID 4326) that the `spatialite` tool and QGIS open.
/// Exact latitude and longitude are also kept as plain columns, so reading a place never decodes geometry.
/// The index only chooses candidates; GeoCore measures and `Ranking` orders, as in every store.
public final class SpatiaLiteStore: PlaceStore, CampusStore {
    public let path: String
    let pool: DatabasePool
    private let logger: Logger
    /// Wakes this process's readers of the change feed (`ChangeFeed`).
    let changeSignal = ChangeSignal()
    public let positionWrites = GroupCommit.moves()
    /// Failed password checks, in this process's memory: a SQLite record is served by one process.
    public let guesses = MemoryGuessingLedger()
    public let limits = MemoryWindowLedger()
    public let streamLeases = MemoryStreamLeases()

    /// Opens (creating if needed) the database at `path` and brings its schema up to date.
    public init(path: String, logger: Logger, settings: StorageSettings = .standard) throws {
        self.path = path
        self.logger = logger
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try SpatiaLiteConnection.initialise(db)
            try db.execute(sql: settings.pragmas)
        }
        configuration.maximumReaderCount = settings.readers
        // The writer waits for readers that hold the WAL, instead of failing at once.
        configuration.busyMode = .timeout(10)
        configuration.label = "vicinity"
        pool = try DatabasePool(path: path, configuration: configuration)
        // GRDB sets NORMAL on the writer when it turns WAL on, after `prepareDatabase`: the setting goes on again.
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = \(settings.synchronous.rawValue)") }
        // As over PostgreSQL: a file a newer version migrated is refused, never read or migrated by this one. Read
        // on the writer, as the migrations are: a reader left open would be the last connection closed, and a
        // reader cannot fold the write-ahead log back into the file.
        if let unknown = try pool.writeWithoutTransaction({ try Schema.recordedMigrations($0).unknown }).sorted().first {
            throw StoreError.migratedByNewerVersion(recording: unknown)
        }
        try Schema.migrator.migrate(pool)
        let recomputed = try pool.write { db in try SQLitePlans.execute(DerivedColumns.bringUpToDate(), in: db, mayWrite: true).result }
        for column in recomputed {
            // A new or already current database changes no row: only a real recomputation is news.
            logger.log(level: column.rowsChanged > 0 ? .info : .debug, "recomputed a derived column for its current rule", metadata: [
                "column": "\(column.column)", "from_version": "\(column.fromVersion)", "to_version": "\(column.toVersion)",
                "rows_changed": "\(column.rowsChanged)",
            ])
        }
        logger.debug("opened SpatiaLite database", metadata: [
            "path": "\(path)", "spatialite": "\(SpatiaLiteConnection.libraryVersion)",
        ])
    }

    /// Closes every connection, checkpointing the WAL into the database file. Later calls fail; without a
    /// call, the connections close when the store is released.
    public func close() throws {
        try pool.close()
    }

    /// SpatiaLite's version, as the library reports it.
    public var spatiaLiteVersion: String { SpatiaLiteConnection.libraryVersion }

    // MARK: - Places: writes

    public func upsert(
        _ places: [Place], progress: (@Sendable (Int, Int) -> Void)?
    ) async throws -> UpsertSummary {
        try validateBatch(places)
        let logger = logger
        return try await pool.write { db in
            let summary = try Self.apply(places, to: db, mayRebuildIndex: true, progress: progress)
            logger.debug("upserted places", metadata: [
                "count": "\(places.count)", "inserted": "\(summary.inserted)", "updated": "\(summary.updated)",
            ])
            return summary
        }
    }

    public func plannedUpsert(_ places: [Place]) async throws -> UpsertSummary {
        try validateBatch(places)
        return try await pool.writeWithoutTransaction { db in
            var summary = UpsertSummary()
            try db.inTransaction {
                summary = try Self.apply(places, to: db, mayRebuildIndex: false, progress: nil)
                return .rollback
            }
            return summary
        }
    }

    /// Upserts row by row inside the caller's transaction. A batch large against the table is loaded with
    /// the spatial and name indexes set aside and rebuilt once at the end, rather than updated per row.
    static func apply(
        _ places: [Place], to db: Database, mayRebuildIndex: Bool, progress: (@Sendable (Int, Int) -> Void)?
    ) throws -> UpsertSummary {
        let before = try Int.fetchOne(db, sql: "SELECT count(*) FROM place") ?? 0
        let rebuild = mayRebuildIndex && BulkLoad.shouldRebuildIndex(batch: places.count, existing: before)
        let suspendedTriggers = rebuild ? try BulkLoad.suspendTriggers(db, table: "place") : []
        // The page cache of a bulk load holds the table's and indexes' working set (figures in BulkLoad);
        // the connection's own size comes back afterwards, so the writer does not keep it.
        let cacheSize = try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? BulkLoad.cacheKibibytes
        if rebuild { try db.execute(sql: "PRAGMA cache_size = -\(BulkLoad.cacheKibibytes)") }
        defer { if rebuild { try? db.execute(sql: "PRAGMA cache_size = \(cacheSize)") } }
        let statement = try db.makeStatement(sql: Schema.upsertPlace)
        var changed = 0
        let step = max(1, places.count / 100)
        let ordered = rebuild ? BulkLoad.inIDOrder(places) : places
        // The arguments of the next rows are built on another core while SQLite writes these.
        try Prefetch.forEach(ordered, chunk: Prefetch.chunk, prepare: PlaceRow.arguments(for:)) { index, arguments in
            try statement.execute(arguments: arguments)
            changed += db.changesCount
            if index % step == step - 1 { progress?(index + 1, places.count) }
        }
        if rebuild {
            try BulkLoad.resumeTriggers(db, table: "place", triggers: suspendedTriggers)
            try SpatialIndex.repack(db)
        }
        progress?(places.count, places.count)
        try db.execute(sql: "UPDATE data_revision SET revision = revision + 1 WHERE name = 'places'")
        let inserted = (try Int.fetchOne(db, sql: "SELECT count(*) FROM place") ?? 0) - before
        return UpsertSummary(inserted: inserted, updated: changed - inserted, unchanged: places.count - changed)
    }

    // MARK: - Places: reads

    public func place(id: PlaceID) async throws -> Place? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "\(PlaceRow.select) WHERE id = ?", arguments: [id.rawValue]).map(PlaceRow.place)
        }
    }

    public func search(_ search: PlaceSearch) async throws -> [Place] {
        let needle = NameMatch.folded(search.text)
        guard !needle.isEmpty else { return [] }
        return try await pool.read { db in
            let candidates = try NameSearch.candidates(db, needle: needle, categories: search.categories)
            return try Self.load(db, ids: NameMatch.best(candidates, matching: search.text, limit: search.limit))
        }
    }

    public func nearbyPage(_ query: NearbyQuery) async throws -> NearbyPage {
        try await pool.read { db in
            let box = BoundingBox(around: query.centre, radius: query.radius.distance)
            let candidates = try SpatialIndex.candidates(db, in: box, categories: query.categories)
            let ranked = Ranking.nearest(
                candidates, to: query.centre, within: query.radius.distance, after: query.after,
                limit: query.limit.value + 1)
            return NearbyPage(
                ranked: try Self.load(db, ranked).map { PlaceHit(place: $0, from: query.centre) }, limit: query.limit)
        }
    }

    public func closest(to centre: Coordinate, categories: Set<Category>) async throws -> PlaceHit? {
        try await pool.read { db in
            guard let location = try Self.closestLocation(db, to: centre, categories: categories) else { return nil }
            return try Self.load(db, [location]).first.map { PlaceHit(place: $0, from: centre) }
        }
    }

    /// Expanding search: query the index with a growing radius until a candidate lies within it. A candidate
    /// at distance d ≤ r is the global nearest once every place within r has been seen, which the box
    /// guarantees. When a category filter leaves few places, ranking them all is cheaper than expanding.
    private static func closestLocation(
        _ db: Database, to centre: Coordinate, categories: Set<Category>
    ) throws -> PlaceLocation? {
        if !categories.isEmpty,
            try SpatialIndex.count(db, categories: categories) <= BulkLoad.bruteForceClosestLimit
        {
            let all = try SpatialIndex.locations(db, categories: categories)
            return Ranking.nearest(all, to: centre, within: nil, limit: 1).first
        }
        var radius = Distance.meters(ClosestSearch.initialRadiusMeters)
        while true {
            let box = BoundingBox(around: centre, radius: radius)
            let candidates = try SpatialIndex.candidates(db, in: box, categories: categories)
            if let best = Ranking.nearest(candidates, to: centre, within: radius, limit: 1).first { return best }
            if box.longitudeRanges == [-180...180] && box.minLatitude <= -90 && box.maxLatitude >= 90 {
                // The box already covered the globe: whatever it held is all there is.
                return Ranking.nearest(candidates, to: centre, within: nil, limit: 1).first
            }
            radius = radius * 2
        }
    }

    public func count() async throws -> Int {
        try await pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM place") ?? 0 }
    }

    public func categories() async throws -> [Category: Int] {
        try await pool.read { db in
            var result: [Category: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT category, count(*) AS places FROM place GROUP BY category") {
                let columns = SQLiteRow(row)
                let category = try columns.text("category")
                result[try readingStored("category \(category)") { try Category(category) }] = try columns.whole("places")
            }
            return result
        }
    }

    public func forEachPlace(_ body: @Sendable ([Place]) throws -> Void) async throws {
        try await forEach(Place.self, where: .all, batch: SQLBatch.load, body)
    }

    public func revision() async throws -> Int {
        try await pool.read { db in try Int.fetchOne(db, sql: "SELECT revision FROM data_revision WHERE name = 'places'") ?? 0 }
    }

    /// Loads whole places for ranked locations, keeping their order.
    private static func load(_ db: Database, _ locations: [PlaceLocation]) throws -> [Place] {
        try load(db, ids: locations.map(\.id))
    }

    /// Loads whole places by id, keeping the order of `ids`.
    private static func load(_ db: Database, ids: [PlaceID]) throws -> [Place] {
        guard !ids.isEmpty else { return [] }
        let rows = try Row.fetchAll(
            db, sql: "\(PlaceRow.select) WHERE id IN (\(databaseQuestionMarks(count: ids.count)))",
            arguments: StatementArguments(ids.map(\.rawValue)))
        let byID = Dictionary(try rows.map { let place = try PlaceRow.place($0); return (place.id, place) }) { a, _ in a }
        return ids.compactMap { byID[$0] }
    }

    // MARK: - Maintenance

    /// Checks the file, every spatial index and the name search index against their tables; returns the
    /// problems found (none: healthy).
    /// Runs on the writer: `CheckSpatialIndex` records its run in SpatiaLite's history table.
    public func integrityProblems() async throws -> [String] {
        try await pool.writeWithoutTransaction { db in
            // An interrupt (a stopped backup's check: `DatabasePool.interrupt`) can stop SpatiaLite's or FTS5's check
            // inside a transaction of its own, which SQLite then leaves open; GRDB stops the process rather than end
            // an access with one open.
            defer { if db.isInsideTransaction { try? db.execute(sql: "ROLLBACK") } }
            var problems = try String.fetchAll(db, sql: "PRAGMA integrity_check").filter { $0 != "ok" }
            for (table, column) in [("place", "geom"), ("campus", "boundary"), ("user_position", "geom"), ("vote", "geom")] {
                if try Int.fetchOne(db, sql: "SELECT CheckSpatialIndex(?, ?)", arguments: [table, column]) != 1 {
                    problems.append("spatial index \(table).\(column) does not match its table")
                }
                // SQLite's own check of the tree's structure: nodes, their bounds, and the rowid and parent maps.
                let structure = try String.fetchOne(db, sql: "SELECT rtreecheck(?)", arguments: ["idx_\(table)_\(column)"])
                if structure != "ok" { problems.append("spatial index \(table).\(column): \(structure ?? "no answer")") }
            }
            // With rank 1, FTS5 also compares the index with the rows of its content table.
            do {
                try db.execute(sql: "INSERT INTO place_name_search(place_name_search, rank) VALUES ('integrity-check', 1)")
            } catch {
                problems.append("name search index does not match the place table (\(error))")
            }
            // A friendship is two rows, one per direction; either alone is half a friendship.
            let halves = try Int.fetchOne(db, sql: """
                SELECT count(*) FROM friendship AS mine
                WHERE NOT EXISTS (SELECT 1 FROM friendship AS theirs
                                  WHERE theirs.account_id = mine.friend_id AND theirs.friend_id = mine.account_id)
                """) ?? 0
            if halves > 0 { problems.append("\(halves) friendship row(s) without their reverse") }
            return problems
        }
    }

    // MARK: - Campuses

    public func upsert(_ campuses: [Campus]) async throws -> UpsertSummary {
        try await pool.write { db in
            var summary = UpsertSummary()
            let statement = try db.makeStatement(sql: Schema.upsertCampus)
            for campus in campuses {
                let existed = try Bool.fetchOne(
                    db, sql: "SELECT 1 FROM campus WHERE id = ?", arguments: [campus.id.rawValue]) ?? false
                try statement.execute(arguments: [campus.id.rawValue, campus.name, Data(WKB.encode(campus.boundary))])
                if !existed { summary.inserted += 1 } else if db.changesCount > 0 { summary.updated += 1 } else { summary.unchanged += 1 }
            }
            try db.execute(sql: "UPDATE data_revision SET revision = revision + 1 WHERE name = 'campuses'")
            return summary
        }
    }

    public func campuses() async throws -> [Campus] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "\(Self.campusSelect) ORDER BY id").map(Self.campus)
        }
    }

    public func campusCount() async throws -> Int {
        try await pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM campus") ?? 0 }
    }

    public func campusRevision() async throws -> Int {
        try await pool.read { db in try Int.fetchOne(db, sql: "SELECT revision FROM data_revision WHERE name = 'campuses'") ?? 0 }
    }

    public func campuses(containing point: Coordinate) async throws -> [Campus] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: """
                \(Self.campusSelect)
                WHERE rowid IN (SELECT pkid FROM idx_campus_boundary
                                WHERE xmin <= ?1 AND xmax >= ?1 AND ymin <= ?2 AND ymax >= ?2)
                ORDER BY id
                """, arguments: [point.longitude, point.latitude])
            .map(Self.campus)
            .filter { $0.boundary.contains(point) }
        }
    }

    static let campusSelect = "SELECT \(SQLDialect.sqlite.columns(of: Campus.table)) FROM campus"

    static func campus(_ row: Row) throws -> Campus { try Campus(row: SQLiteRow(row)) }
}

/// How the SQLite file trades durability for speed; the figures that chose each value are with it.
public struct StorageSettings: Hashable, Sendable {
    /// When a commit waits for the disk (`PRAGMA synchronous`), in WAL mode.
    public enum Synchronous: String, Hashable, Sendable {
        /// Every commit waits for the WAL to reach the disk: survives a power cut.
        case full = "FULL"
        /// Commits wait for no disk write; the WAL reaches the disk at checkpoints. A crash of the process or
        /// the system loses nothing; a power cut may lose the last commits, never the file's consistency.
        case normal = "NORMAL"
    }

    /// The settings a value may take, so that a bad one is refused before the database opens.
    public enum Problem: Error, Equatable, Sendable {
        case readers(Int)
        case cacheMebibytes(Int)
        case mmapMebibytes(Int)

        public var message: String {
            switch self {
            case .readers(let count): "readers must be \(StorageSettings.readerRange), not \(count)"
            case .cacheMebibytes(let size): "the page cache must be \(StorageSettings.cacheRange) MiB, not \(size)"
            case .mmapMebibytes(let size): "the memory map must be \(StorageSettings.mmapRange) MiB, not \(size)"
            }
        }
    }

    public static let readerRange = 1...64
    public static let cacheRange = 1...4096
    /// SQLite caps `mmap_size` at its compile-time maximum (2 GiB in Debian's build) and silently lowers a
    /// larger request; the range says so instead.
    public static let mmapRange = 0...2047

    public let synchronous: Synchronous
    /// Read connections: how many reads run at once.
    public let readers: Int
    /// Each connection's page cache (`PRAGMA cache_size`).
    public let cacheMebibytes: Int
    /// How much of the file each connection reads through a memory map instead of `read` calls
    /// (`PRAGMA mmap_size`); 0 reads it all with `read`.
    public let mmapMebibytes: Int

    /// NORMAL, which GRDB also picks for WAL: one committed write (a position, a ballot, a place) took a median
    /// 0.42 ms with NORMAL and 0.60 ms with FULL, p99 4.0 ms and 1.4 ms (NORMAL pays for its disk syncs at the
    /// checkpoints instead); one run of `vicinity-bench writes 5000` on this machine's ext4 disk. The writer is
    /// the one serial resource, so the median wins; what a power cut can cost (the last commits before a
    /// checkpoint) is positions the apps send again within seconds.
    public static let standardSynchronous = Synchronous.normal
    /// Four per core. With places, positions and open votes in memory, SQLite reads are sessions, accounts and
    /// friendships, each request another user: 8 readers answered 8–20% more of them than GRDB's default 5
    /// while positions were written (four comparisons, two runs of `Scripts/bench/storage.sh` and one A/B run,
    /// 200,000 users), at the same write rate and 10 MiB more memory; 2 answered 9–29% fewer and 16 cut the
    /// writes by 34–40%. Figures in `docs/BENCHMARKS.md` ("Storage settings").
    public static let standardReaders = 8
    /// SQLite's default 2 MiB. Every commit makes each reader drop its whole cache at its next read (a WAL
    /// reader whose snapshot changed resets its pager), so a larger cache pays only between writes: 64 MiB
    /// answered 13–14% fewer reads while positions were written, for 200 MiB more memory.
    public static let standardCacheMebibytes = 2
    /// None: a 1024 MiB map answered 26–33% fewer reads and 21–28% fewer writes while positions were written
    /// (the same reset unmaps the whole map too), and it leans on the page cache the kernel reclaims from idle
    /// files on these machines.
    public static let standardMmapMebibytes = 0

    public static let standard = StorageSettings(
        checked: standardSynchronous, readers: standardReaders, cacheMebibytes: standardCacheMebibytes,
        mmapMebibytes: standardMmapMebibytes)

    /// Refuses values outside their ranges.
    public init(
        synchronous: Synchronous = standardSynchronous, readers: Int = standardReaders,
        cacheMebibytes: Int = standardCacheMebibytes, mmapMebibytes: Int = standardMmapMebibytes
    ) throws(Problem) {
        guard Self.readerRange.contains(readers) else { throw .readers(readers) }
        guard Self.cacheRange.contains(cacheMebibytes) else { throw .cacheMebibytes(cacheMebibytes) }
        guard Self.mmapRange.contains(mmapMebibytes) else { throw .mmapMebibytes(mmapMebibytes) }
        self.init(checked: synchronous, readers: readers, cacheMebibytes: cacheMebibytes, mmapMebibytes: mmapMebibytes)
    }

    /// For values already in range.
    private init(checked synchronous: Synchronous, readers: Int, cacheMebibytes: Int, mmapMebibytes: Int) {
        self.synchronous = synchronous
        self.readers = readers
        self.cacheMebibytes = cacheMebibytes
        self.mmapMebibytes = mmapMebibytes
    }

    /// The statements every connection runs when it opens.
    /// `secure_delete` zeroes what a deletion frees, so that a deleted account leaves nothing in the file's
    /// free pages.
    var pragmas: String {
        """
        PRAGMA secure_delete = ON;
        PRAGMA synchronous = \(synchronous.rawValue);
        PRAGMA cache_size = -\(cacheMebibytes * 1024);
        PRAGMA mmap_size = \(mmapMebibytes * 1_048_576);
        """
    }
}

/// Constants of the search strategies, each with its reason.
enum ClosestSearch {
    /// The first radius of the expanding closest-place search: the service's standard 1000 m radius, where
    /// most campus queries find their answer in one index probe.
    static let initialRadiusMeters = 1000.0
}
