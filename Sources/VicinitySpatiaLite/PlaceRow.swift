import Foundation
import GRDB
import GeoCore
import VicinityCore
import VicinitySQL

/// How this store reads and writes whole places: the shared mapping (`Place.schema`), with the upsert that
/// leaves an identical row alone.
enum PlaceRow {
    /// Every column of a place, read by name.
    static let select = "SELECT \(SQLDialect.sqlite.columns(of: Place.table)) FROM place"

    /// The values of `Schema.upsertPlace`, in the order of `Place.schema`.
    static func arguments(for place: Place) -> StatementArguments {
        SQLitePlans.arguments(place.sqlValues)
    }

    static func place(_ row: Row) throws -> Place { try Place(row: SQLiteRow(row)) }
}

/// Candidate selection through SpatiaLite's R*Tree on `place.geom`.
enum SpatialIndex {
    /// Locations whose index rectangle meets the box. The R*Tree stores rectangles rounded outwards to 32-bit
    /// floats, so a point inside the box is never missed; extra candidates are removed by exact ranking.
    static func candidates(_ db: Database, in box: BoundingBox, categories: Set<Category>) throws -> [PlaceLocation] {
        var result: [PlaceLocation] = []
        let filter = categoryFilter(categories)
        let statement = try db.cachedStatement(sql: """
            SELECT id, lat, lon FROM place
            WHERE rowid IN (SELECT pkid FROM idx_place_geom WHERE xmin <= ? AND xmax >= ? AND ymin <= ? AND ymax >= ?)
            \(filter.sql)
            """)
        for range in box.longitudeRanges {
            let arguments: StatementArguments =
                [range.upperBound, range.lowerBound, box.maxLatitude, box.minLatitude] + filter.arguments
            let rows = try Row.fetchCursor(statement, arguments: arguments)
            while let row = try rows.next() { result.append(try location(row)) }
        }
        return result
    }

    /// Every location in the categories, for when there are too few to be worth an index search.
    static func locations(_ db: Database, categories: Set<Category>) throws -> [PlaceLocation] {
        let filter = categoryFilter(categories)
        let statement = try db.cachedStatement(sql: "SELECT id, lat, lon FROM place WHERE 1 \(filter.sql)")
        return try Row.fetchAll(statement, arguments: filter.arguments).map(location)
    }

    static func count(_ db: Database, categories: Set<Category>) throws -> Int {
        let filter = categoryFilter(categories)
        return try Int.fetchOne(db, sql: "SELECT count(*) FROM place WHERE 1 \(filter.sql)", arguments: filter.arguments) ?? 0
    }

    /// `AND category IN (...)` and its arguments; empty for no categories (every category).
    static func categoryFilter(_ categories: Set<Category>) -> (sql: String, arguments: StatementArguments) {
        guard !categories.isEmpty else { return ("", []) }
        let sorted = categories.sorted().map(\.rawValue)
        return ("AND category IN (\(databaseQuestionMarks(count: sorted.count)))", StatementArguments(sorted))
    }

    private static func location(_ row: Row) throws -> PlaceLocation {
        let columns = SQLiteRow(row)
        let id = try columns.text("id"), latitude = try columns.real("lat"), longitude = try columns.real("lon")
        return try readingStored("place \(id)") {
            try PlaceLocation(id: PlaceID(id), coordinate: Coordinate(latitude: latitude, longitude: longitude))
        }
    }

    /// Refills the R*Tree from every row in one packed pass (`PackedRTree`), for after a bulk load that
    /// suspended its triggers. A point's rectangle is its coordinate: `geom` is `MakePoint(lon, lat)`.
    static func repack(_ db: Database) throws {
        var entries: [PackedRTree.Entry] = []
        let rows = try Row.fetchCursor(db, sql: "SELECT rowid AS key, lat, lon FROM place")
        while let row = try rows.next() {
            let columns = SQLiteRow(row)
            entries.append(PackedRTree.entry(id: try columns.integer("key"), latitude: try columns.real("lat"), longitude: try columns.real("lon")))
        }
        try PackedRTree.replaceContent(of: "idx_place_geom", with: entries, in: db)
    }
}

/// Candidate selection for name search through the trigram index on the folded names.
enum NameSearch {
    /// The trigram index needs three characters to look anything up; shorter text is matched by a scan.
    static let indexedLength = 3

    /// Every place of the categories whose folded names contain `needle` (already folded), with what ranking
    /// needs; `NameMatch` then orders them as every store does.
    static func candidates(_ db: Database, needle: String, categories: Set<Category>) throws -> [NameMatch.Candidate] {
        let filter = SpatialIndex.categoryFilter(categories)
        let sql: String
        let pattern: String
        // FTS5 reads its query as C text, so a NUL would cut it short (an "unterminated string" error); such
        // text is scanned instead, where a cut pattern only widens the candidates that ranking then filters.
        if needle.unicodeScalars.count >= indexedLength, !needle.unicodeScalars.contains("\0") {
            // An FTS5 string in double quotes is matched as one phrase, which for trigrams means a substring.
            sql = """
                SELECT id, name, search_text FROM place
                WHERE rowid IN (SELECT rowid FROM place_name_search WHERE place_name_search MATCH ?) \(filter.sql)
                """
            pattern = "\"" + needle.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        } else {
            sql = "SELECT id, name, search_text FROM place WHERE search_text LIKE ? ESCAPE '\\' \(filter.sql)"
            pattern = "%" + escapeLike(needle) + "%"
        }
        let rows = try Row.fetchCursor(db.cachedStatement(sql: sql), arguments: [pattern] + filter.arguments)
        var result: [NameMatch.Candidate] = []
        while let row = try rows.next() {
            let columns = SQLiteRow(row)
            let id = try columns.text("id"), name = try columns.text("name"), searchText = try columns.text("search_text")
            result.append(NameMatch.Candidate(
                id: try readingStored("place \(id)") { try PlaceID(id) }, name: name,
                foldedNames: searchText.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)))
        }
        return result
    }

    /// Rebuilds the name index from every row in one pass.
    static func rebuildIndex(_ db: Database) throws {
        try db.execute(sql: "INSERT INTO place_name_search(place_name_search) VALUES ('rebuild')")
    }

    private static func escapeLike(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_")
    }
}

/// Loading a batch large against the table: the spatial and name indexes are set aside and rebuilt once, and
/// the per-row triggers are suspended and their work done once for the batch.
enum BulkLoad {
    /// Drops every trigger on the table, returning their SQL as the schema holds it, so that a bulk load runs
    /// none of them per row: SpatiaLite's R*Tree updates (`gii_`/`giu_`/`gid_`, replaced by one packing of
    /// the tree), its geometry checks (`ggi_`/`ggu_`, which the upsert statement satisfies
    /// by construction: `MakePoint` and `GeomFromWKB` with SRID 4326 of the column's type), its
    /// last-change stamps (`tmi_`/`tmu_`/`tmd_`) and the name index triggers. Writing 1M rows took 11.2 s with
    /// them and 5.6 s without (one run each, as for `cacheKibibytes`). Only for use inside a transaction that
    /// `resumeTriggers` ends.
    static func suspendTriggers(_ db: Database, table: String) throws -> [String] {
        let triggers = try Row.fetchAll(db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?",
                                        arguments: [table])
        for trigger in triggers { try db.execute(sql: "DROP TRIGGER \((trigger["name"] as String).quotedDatabaseIdentifier)") }
        return triggers.map { $0["sql"] }
    }

    /// Restores the triggers, rebuilds the name index, and stamps the table's geometry columns as changed now,
    /// once, as the suspended stamps would have row by row.
    static func resumeTriggers(_ db: Database, table: String, triggers: [String]) throws {
        for sql in triggers { try db.execute(sql: sql) }
        try NameSearch.rebuildIndex(db)
        try db.execute(sql: """
            UPDATE geometry_columns_time
            SET last_insert = strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), last_update = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
            WHERE lower(f_table_name) = lower(?)
            """, arguments: [table])
    }

    /// The places in the byte order of their ids, as the primary-key index sorts them: new rows then append to
    /// that index instead of landing at random places in it. Writing 1M rows took 5.7 s in spatial (Z) order
    /// and 4.1 s in id order (one run each, as for `cacheKibibytes`); the R*Tree is packed afterwards, so the
    /// row order no longer shapes it.
    static func inIDOrder(_ places: [Place]) -> [Place] {
        places.sorted { $0.id.rawValue.utf8.lexicographicallyPrecedes($1.id.rawValue.utf8) }
    }

    /// 512 MiB of page cache for a bulk load. With SQLite's default 2 MiB, 1M places (a 265 MB file) spent
    /// 14.0 s writing rows and 13.6 s filling the R*Tree; with this cache 11.2 s and 8.1 s (one run each,
    /// 2 cores, `vicinity-bench` on Scripts/bench/make-points.py output). The cache grows only as pages are
    /// read, so small loads never reach it.
    static let cacheKibibytes = 524_288

    static func shouldRebuildIndex(batch: Int, existing: Int) -> Bool {
        batch >= 1000 && batch * 4 >= existing
    }

    /// With this many places or fewer in the requested categories, closest() ranks them all directly.
    static let bruteForceClosestLimit = 5000
}

/// A loop whose per-element preparation runs one chunk ahead on another thread, for work split between Swift
/// (preparing) and SQLite (using what was prepared) on a machine with a core to spare.
enum Prefetch {
    /// 4,096 elements: large enough that handing a chunk over costs nothing next to preparing it, small
    /// enough that a chunk's values stay in cache.
    static let chunk = 4096

    /// Calls `body` with each element's index and prepared value, in order. Preparing the next chunk overlaps
    /// `body`'s work on this one. If `body` throws, the chunk in preparation is finished and dropped.
    static func forEach<Element: Sendable, Prepared: Sendable>(
        _ elements: [Element], chunk: Int, prepare: @escaping @Sendable (Element) -> Prepared,
        _ body: (Int, Prepared) throws -> Void
    ) throws {
        var start = 0
        var current = elements[0..<min(chunk, elements.count)].map(prepare)
        while start < elements.count {
            let nextStart = start + current.count
            let next = Handover<Prepared>()
            if nextStart < elements.count {
                let range = nextStart..<min(nextStart + chunk, elements.count)
                DispatchQueue.global().async {
                    next.values = elements[range].map(prepare)
                    next.ready.signal()
                }
            } else {
                next.ready.signal()
            }
            for (offset, value) in current.enumerated() { try body(start + offset, value) }
            next.ready.wait()
            start = nextStart
            current = next.values
        }
    }
}

/// The next chunk's values: written by the preparing thread before it signals `ready`, read after waiting on
/// it, so the semaphore orders the two.
private final class Handover<Value>: @unchecked Sendable {
    var values: [Value] = []
    let ready = DispatchSemaphore(value: 0)
}
