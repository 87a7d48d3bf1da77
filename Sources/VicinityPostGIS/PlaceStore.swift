import Foundation
import GeoCore
import AsyncAlgorithms
import Logging
import NIOCore
import PostgresNIO
import VicinityCore
import VicinitySQL

/// How this store reads whole places (the shared mapping, `Place.schema`) and writes them in bulk.
enum PlaceRow {
    /// Every column of a place, each read by name.
    static let columns = SQLDialect.postgres.columns(of: Place.table)

    static func place(_ row: Columns) throws -> Place { try Place(row: row) }

    static func location(_ row: Columns) throws -> PlaceLocation {
        let id = try row.text("id"), latitude = try row.real("lat"), longitude = try row.real("lon")
        return try readingStored("a place's location") {
            try PlaceLocation(id: PlaceID(id), coordinate: Coordinate(latitude: latitude, longitude: longitude))
        }
    }

    /// One line of COPY's text format for the staging table, in the order of `Staging.fields`: tab-separated,
    /// `\N` for null, with backslash, tab and line breaks escaped.
    /// `direct`: for COPY straight into `place`, whose footprint column reads geometry's text form (hex EWKB,
    /// carrying SRID 4326); otherwise for the staging table's `bytea`.
    static func copyLine(_ place: Place, direct: Bool, into buffer: inout ByteBuffer) {
        for (index, (column, value)) in zip(Place.table.columns, place.sqlValues).enumerated() {
            if index > 0 { buffer.writeInteger(UInt8(ascii: "\t")) }
            switch (value, column.kind) {
            case (.null, _):
                buffer.writeString("\\N")
            case (.bytes(let wkb), .multiPolygon) where direct:
                CopyText.writeHex(EWKB.withSRID4326(wkb), into: &buffer)
            case (.bytes(let bytes), _):
                // bytea's hex form, its backslash escaped for COPY.
                buffer.writeString("\\\\x")
                CopyText.writeHex(bytes, into: &buffer)
            case (.text(let text), _):
                CopyText.write(text, into: &buffer)
            case (.real(let number), _):
                buffer.writeString("\(number)")
            case (.integer(let number), _):
                buffer.writeString("\(number)")
            case (.bool(let flag), _):
                buffer.writeString(flag ? "t" : "f")
            }
        }
        buffer.writeInteger(UInt8(ascii: "\n"))
    }
}

/// PostGIS's extended WKB: WKB whose type word carries a flag that an SRID follows it.
enum EWKB {
    /// 0x20000000 in the type word: an SRID comes next (PostGIS's `WKBSRIDFLAG`).
    private static let sridFlag: UInt32 = 0x2000_0000

    /// Little-endian WKB (what `WKB.encode` writes) with SRID 4326 added after its header.
    static func withSRID4326(_ wkb: [UInt8]) -> [UInt8] {
        guard wkb.count >= 5, wkb[0] == 1 else { return wkb }
        var type = UInt32(wkb[1]) | UInt32(wkb[2]) << 8 | UInt32(wkb[3]) << 16 | UInt32(wkb[4]) << 24
        type |= sridFlag
        let srid: UInt32 = 4326
        var bytes: [UInt8] = [1]
        for value in [type, srid] { bytes += (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        return bytes + wkb[5...]
    }
}

/// COPY's text format.
enum CopyText {
    static func write(_ text: String, into buffer: inout ByteBuffer) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): buffer.writeString("\\\\")
            case UInt8(ascii: "\t"): buffer.writeString("\\t")
            case UInt8(ascii: "\n"): buffer.writeString("\\n")
            case UInt8(ascii: "\r"): buffer.writeString("\\r")
            default: buffer.writeInteger(byte)
            }
        }
    }

    static func writeHex(_ bytes: [UInt8], into buffer: inout ByteBuffer) {
        let digits = Array("0123456789abcdef".utf8)
        for byte in bytes {
            buffer.writeInteger(digits[Int(byte >> 4)])
            buffer.writeInteger(digits[Int(byte & 0x0F)])
        }
    }
}

/// How an upsert reaches the table: rows stream with COPY into a temporary table, then one statement applies
/// them with the upsert-by-id rule, counting what it inserted and changed.
enum Staging {
    /// One column of a place as COPY carries it: its staging type, how the `place` column is made from it,
    /// and how two stored values are compared (footprints as WKB, bit for bit, as SpatiaLite compares its
    /// blobs). `PlaceRow.copyLine` writes the fields in this order.
    struct Field {
        var name: String
        var type: String
        var value: String
        var compared: String

        init(_ name: String, _ type: String, value: String? = nil, compared: String? = nil) {
            self.name = name
            self.type = type
            self.value = value ?? name
            self.compared = compared ?? name
        }
    }

    /// The place's columns (`Place.schema`), geometry staged as WKB.
    static let fields = Place.table.columns.map { column -> Field in
        switch column.kind {
        case .text: Field(column.name, "text")
        case .integer: Field(column.name, "bigint")
        case .real: Field(column.name, "double precision")
        case .boolean: Field(column.name, "boolean")
        case .bytes: Field(column.name, "bytea")
        case .json(let type): Field(column.name, type)
        case .multiPolygon:
            Field(column.name, "bytea", value: "ST_GeomFromWKB(\(column.name), 4326)", compared: "ST_AsBinary(%@.\(column.name))")
        }
    }

    static var columns: [String] { fields.map(\.name) }

    static let create = PostgresQuery(unsafeSQL: """
        CREATE TEMPORARY TABLE place_staging (\(fields.map { "\($0.name) \($0.type)" }.joined(separator: ", "))) ON COMMIT DROP
        """)

    private static let insertion = """
        INSERT INTO place AS p (\(columns.joined(separator: ", ")))
        SELECT \(fields.map(\.value).joined(separator: ", ")) FROM place_staging
        """

    /// Insert or update by id; an identical row is left alone, so re-imports change nothing.
    static let apply = PostgresQuery(unsafeSQL: """
        WITH changed AS (
            \(insertion)
            ON CONFLICT (id) DO UPDATE SET \(fields.dropFirst().map { "\($0.name) = excluded.\($0.name)" }.joined(separator: ", "))
            WHERE \(fields.dropFirst().map { field in
                field.compared == field.name
                    ? "p.\(field.name) IS DISTINCT FROM excluded.\(field.name)"
                    : field.compared.replacingOccurrences(of: "%@", with: "p") + " IS DISTINCT FROM "
                        + field.compared.replacingOccurrences(of: "%@", with: "excluded")
            }.joined(separator: " OR "))
            RETURNING (xmax = 0) AS inserted
        )
        SELECT count(*) FILTER (WHERE inserted) AS inserted, count(*) AS changed FROM changed
        """)


    /// Streams the places with COPY into `table`, whose columns are `columns`: into `place` itself, or a table
    /// made like it, with `direct`; else into the staging table.
    static func copy(
        _ places: [Place], into table: String, direct: Bool, on connection: PostgresConnection, logger: Logger,
        progress: (@Sendable (Int, Int) -> Void)?
    ) async throws {
        try await connection.copyFrom(table: table, columns: columns, logger: logger) { writer in
            var buffer = ByteBuffer()
            buffer.reserveCapacity(chunkBytes + 4096)
            let step = max(1, places.count / 100)
            for (index, place) in places.enumerated() {
                PlaceRow.copyLine(place, direct: direct, into: &buffer)
                if buffer.readableBytes >= chunkBytes {
                    try await writer.write(buffer)
                    buffer.clear()
                }
                if index % step == step - 1 { progress?(index + 1, places.count) }
            }
            if buffer.readableBytes > 0 { try await writer.write(buffer) }
        }
    }

    /// About a megabyte of COPY text per message: large enough that each costs nothing, small enough to
    /// stream.
    static let chunkBytes = 1 << 20
}

extension PostGISStore: PlaceStore {
    public func upsert(_ places: [Place], progress: (@Sendable (Int, Int) -> Void)?) async throws -> UpsertSummary {
        try validateBatch(places)
        let summary: UpsertSummary
        if places.count >= BulkLoad.minimumBatch, let loaded = try await sideLoad(places, progress: progress) {
            summary = loaded
        } else {
            summary = try await transaction(maintenance: true) {
                try await Self.apply(places, in: $0, mayRebuildIndexes: true, progress: progress)
            }
        }
        logger.debug("upserted places", metadata: [
            "count": "\(places.count)", "inserted": "\(summary.inserted)", "updated": "\(summary.updated)",
        ])
        return summary
    }

    public func plannedUpsert(_ places: [Place]) async throws -> UpsertSummary {
        try validateBatch(places)
        // Never the bulk path: a plan must not drop indexes (and lock readers out) only to roll back.
        return try await transaction(rollback: true, maintenance: true) {
            try await Self.apply(places, in: $0, mayRebuildIndexes: false, progress: nil)
        }
    }

    /// Raises the places' revision first: its row lock makes concurrent upserts of places take turns, so each
    /// one's counts are its own.
    static func apply(
        _ places: [Place], in transaction: Transaction, mayRebuildIndexes: Bool, progress: (@Sendable (Int, Int) -> Void)?
    ) async throws -> UpsertSummary {
        try await transaction.execute("UPDATE data_revision SET revision = revision + 1 WHERE name = 'places'")
        guard !places.isEmpty else { return UpsertSummary() }
        let existing: Int = try await transaction.rows("SELECT count(*) AS count FROM place").first?.decode("count") ?? 0
        let setAside = mayRebuildIndexes && BulkLoad.shouldSetIndexesAside(batch: places.count, existing: existing)
            ? try await BulkLoad.setIndexesAside(in: transaction, keyToo: existing == 0) : []
        // Into an empty table the rows go straight in: nothing to compare with, and the batch's ids are unique
        // (`validateBatch`). Otherwise through the staging table, for the upsert by id.
        let direct = existing == 0
        if !direct { try await transaction.execute(Staging.create) }
        try await Staging.copy(
            places, into: direct ? "place" : "place_staging", direct: direct, on: transaction.connection,
            logger: transaction.logger, progress: progress)
        let inserted: Int, changed: Int
        if direct {
            (inserted, changed) = (places.count, places.count)
        } else {
            guard let counts = try await transaction.rows(Staging.apply).first else {
                throw StoreError.database("the upsert reported no counts")
            }
            (inserted, changed) = (try counts.decode("inserted"), try counts.decode("changed"))
        }
        for definition in setAside { try await transaction.execute(PostgresQuery(unsafeSQL: definition)) }
        progress?(places.count, places.count)
        return UpsertSummary(inserted: inserted, updated: changed - inserted, unchanged: places.count - changed)
    }

    public func place(id: PlaceID) async throws -> Place? {
        try await rows("SELECT \(unescaped: PlaceRow.columns) FROM place WHERE id = \(id.rawValue)").first.map(PlaceRow.place)
    }

    public func search(_ search: PlaceSearch) async throws -> [Place] {
        let needle = NameMatch.folded(search.text)
        // No place's text holds NUL (`Place` refuses it), and PostgreSQL's text cannot carry it.
        guard !needle.isEmpty, !needle.utf8.contains(0) else { return [] }
        let pattern = "%" + Self.escapeLike(needle) + "%"
        let categories = search.categories.map(\.rawValue).sorted()
        // The trigram index answers LIKE for three characters or more; the planner scans for fewer.
        let candidates = try await rows("""
            SELECT id, name, search_text FROM place
            WHERE search_text LIKE \(pattern) AND (cardinality(\(categories)::text[]) = 0 OR category = ANY(\(categories)))
            """
        ).map { row in
            NameMatch.Candidate(
                id: try PlaceID(try row.decode("id", as: String.self)), name: try row.decode("name"),
                foldedNames: try row.decode("search_text", as: String.self)
                    .split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
        }
        return try await load(ids: NameMatch.best(candidates, matching: search.text, limit: search.limit))
    }

    public func nearbyPage(_ query: NearbyQuery) async throws -> NearbyPage {
        let candidates = try await locations(within: query.radius.distance, of: query.centre, categories: query.categories)
        let ranked = Ranking.nearest(
            candidates, to: query.centre, within: query.radius.distance, after: query.after, limit: query.limit.value + 1)
        return NearbyPage(
            ranked: try await load(ids: ranked.map(\.id)).map { PlaceHit(place: $0, from: query.centre) }, limit: query.limit)
    }

    /// The index's nearest place by PostGIS's measure, then every place that could be nearer by GeoCore's:
    /// those within the first one's distance and a margin, ranked exactly.
    public func closest(to centre: Coordinate, categories: Set<VicinityCore.Category>) async throws -> PlaceHit? {
        let list = categories.map(\.rawValue).sorted()
        guard let first = try await rows("""
            SELECT id, lat, lon FROM place
            WHERE cardinality(\(list)::text[]) = 0 OR category = ANY(\(list))
            ORDER BY location <-> ST_SetSRID(ST_MakePoint(\(centre.longitude), \(centre.latitude)), 4326)::geography
            LIMIT 1
            """).first.map(PlaceRow.location)
        else { return nil }
        let bound = haversineDistance(from: centre, to: first.coordinate)
        let candidates = try await locations(within: bound, of: centre, categories: categories)
        guard let best = Ranking.nearest(candidates + [first], to: centre, within: nil, limit: 1).first else { return nil }
        return try await load(ids: [best.id]).first.map { PlaceHit(place: $0, from: centre) }
    }

    /// Locations within the radius and its margin, from the GiST index; the poles and the antimeridian are
    /// the geography type's own business.
    private func locations(
        within radius: Distance, of centre: Coordinate, categories: Set<VicinityCore.Category>
    ) async throws -> [PlaceLocation] {
        let list = categories.map(\.rawValue).sorted()
        return try await rows("""
            SELECT id, lat, lon FROM place
            WHERE ST_DWithin(
                    location, ST_SetSRID(ST_MakePoint(\(centre.longitude), \(centre.latitude)), 4326)::geography,
                    \(CandidateRadius.meters(radius)), false)
                AND (cardinality(\(list)::text[]) = 0 OR category = ANY(\(list)))
            """).map(PlaceRow.location)
    }

    public func count() async throws -> Int {
        try await rows("SELECT count(*) AS count FROM place").first?.decode("count") ?? 0
    }

    public func categories() async throws -> [VicinityCore.Category: Int] {
        var result: [VicinityCore.Category: Int] = [:]
        for row in try await rows("SELECT category, count(*) AS count FROM place GROUP BY category") {
            result[try VicinityCore.Category(try row.decode("category", as: String.self))] = try row.decode("count")
        }
        return result
    }

    public func forEachPlace(_ body: @Sendable ([Place]) throws -> Void) async throws {
        try await forEachBatch("SELECT \(unescaped: PlaceRow.columns) FROM place", decode: PlaceRow.place, body)
    }

    /// Every row of one statement, decoded and handed to `body` a batch at a time as the rows stream in: one
    /// statement reads one snapshot, so a writer committing meanwhile is wholly in the batches or wholly not.
    /// The rows are read on a leased connection and `body` runs here, in the caller's task; a channel hands
    /// each batch over and holds the reader until it is taken, so a slow `body` holds the reader back.
    func forEachBatch<Element: Sendable>(
        _ query: PostgresQuery, decode: @escaping @Sendable (Columns) throws -> Element,
        _ body: ([Element]) throws -> Void
    ) async throws {
        let logger = logger
        let batches = AsyncThrowingChannel<[Element], any Error>()
        async let reading: Void = {
            do {
                try await leased(maintenance: true) { connection in
                    var batch: [Element] = []
                    batch.reserveCapacity(Self.loadBatch)
                    for try await row in try await connection.query(query, logger: logger) {
                        batch.append(try decode(Columns(row.makeRandomAccess())))
                        if batch.count == Self.loadBatch {
                            await batches.send(batch)
                            try Task.checkCancellation()
                            batch.removeAll(keepingCapacity: true)
                        }
                    }
                    if !batch.isEmpty { await batches.send(batch) }
                }
                batches.finish()
            } catch {
                // Whatever stopped the reader, before or after it had a connection, ends the consumer's wait.
                batches.fail(error)
                throw error
            }
        }()
        do {
            for try await batch in batches { try body(batch) }
        } catch {
            // A send waiting for this consumer is released; the reader's own error follows from this one.
            batches.finish()
            _ = try? await reading
            throw error
        }
        try await reading
    }

    /// As in SpatiaLite: large enough that the call costs nothing, small enough that a batch is a few megabytes.
    private static let loadBatch = 10_000

    public func revision() async throws -> Int {
        try await rows("SELECT revision FROM data_revision WHERE name = 'places'").first?.decode("revision") ?? 0
    }

    /// Whole places by id, in the order of `ids`.
    private func load(ids: [PlaceID]) async throws -> [Place] {
        guard !ids.isEmpty else { return [] }
        let list = ids.map(\.rawValue)
        let places = try await rows("SELECT \(unescaped: PlaceRow.columns) FROM place WHERE id = ANY(\(list))").map(PlaceRow.place)
        let byID = Dictionary(places.map { ($0.id, $0) }) { first, _ in first }
        return ids.compactMap { byID[$0] }
    }

    static func escapeLike(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_")
    }
}

extension PostGISStore: CampusStore {
    public func upsert(_ campuses: [Campus]) async throws -> UpsertSummary {
        try await transaction { transaction in
            try await transaction.execute("UPDATE data_revision SET revision = revision + 1 WHERE name = 'campuses'")
            var summary = UpsertSummary()
            for campus in campuses {
                switch try await transaction.upsert(campus) {
                case true?: summary.inserted += 1
                case false?: summary.updated += 1
                case nil: summary.unchanged += 1
                }
            }
            return summary
        }
    }

    public func campuses() async throws -> [Campus] {
        try await rows("SELECT \(unescaped: SQLDialect.postgres.columns(of: Campus.table)) FROM campus ORDER BY id COLLATE \"C\"").map(Self.campus)
    }

    /// Campuses whose bounding box holds the point, from the GiST index; GeoCore decides containment, as in
    /// every store.
    public func campuses(containing point: Coordinate) async throws -> [Campus] {
        try await rows("""
            SELECT \(unescaped: SQLDialect.postgres.columns(of: Campus.table)) FROM campus
            WHERE boundary && ST_SetSRID(ST_MakePoint(\(point.longitude), \(point.latitude)), 4326)
            ORDER BY id COLLATE "C"
            """).map(Self.campus).filter { $0.boundary.contains(point) }
    }

    public func campusCount() async throws -> Int {
        try await rows("SELECT count(*) AS count FROM campus").first?.decode("count") ?? 0
    }

    public func campusRevision() async throws -> Int {
        try await rows("SELECT revision FROM data_revision WHERE name = 'campuses'").first?.decode("revision") ?? 0
    }

    static func campus(_ row: Columns) throws -> Campus { try Campus(row: row) }
}

extension Transaction {
    /// Inserts or updates the campus by id: true when inserted, false when updated, nil when it was the same.
    func upsert(_ campus: Campus) async throws -> Bool? {
        let boundary = ByteBuffer(bytes: WKB.encode(campus.boundary))
        return try await rows("""
            INSERT INTO campus AS c (id, name, boundary) VALUES (\(campus.id.rawValue), \(campus.name), ST_GeomFromWKB(\(boundary), 4326))
            ON CONFLICT (id) DO UPDATE SET name = excluded.name, boundary = excluded.boundary
            WHERE c.name IS DISTINCT FROM excluded.name OR ST_AsBinary(c.boundary) IS DISTINCT FROM ST_AsBinary(excluded.boundary)
            RETURNING (xmax = 0) AS inserted
            """).first?.decode("inserted", as: Bool.self)
    }
}
