import Foundation
import GRDB
import GeoCore
import GeoTestSupport
import Logging
import Synchronization
import Testing
@testable import VicinityCore
@testable import VicinitySpatiaLite
import VicinitySQL

extension BruteForce {
    /// Every place of the categories within the radius, nearest first, ties by id: no limit, no cursor.
    static func everyHit(_ places: [Place], centre: Coordinate, radius: Distance, categories: Set<VicinityCore.Category>) -> [String] {
        var hits: [(id: String, distance: Double)] = []
        for place in places where categories.isEmpty || categories.contains(place.category) {
            let distance = haversineDistance(from: centre, to: place.coordinate).meters
            if distance <= radius.meters { hits.append((place.id.rawValue, distance)) }
        }
        hits.sort { a, b in a.distance != b.distance ? a.distance < b.distance : a.id < b.id }
        return hits.map(\.id)
    }
}

/// Reads every page of a nearby answer by following `next`.
func walkPages(_ store: any PlaceStore, _ first: NearbyQuery, between: (NearbyCursor) async throws -> Void = { _ in }) async throws -> (ids: [String], pages: Int) {
    var query = first
    var ids: [String] = []
    var pages = 0
    while true {
        let page = try await store.nearbyPage(query)
        pages += 1
        ids += page.hits.map(\.place.id.rawValue)
        if page.next == nil && page.hits.count == query.limit.value {
            // A full last page is only right when nothing ranks after it.
            let after = page.hits.last.map { NearbyCursor(distance: $0.distance, id: $0.place.id) }
            var probe = query
            probe.after = after
            #expect(try await store.nearby(probe).isEmpty, "a page without next must be the last")
        }
        guard let next = page.next else { return (ids, pages) }
        try await between(next)
        query.after = next
    }
}

/// Places of one category spread over the globe from the fixture's centres, enough (6,000) that a category-filtered
/// closest search cannot rank them all directly.
enum WideFixture {
    static let places: [Place] = {
        var generator = SeededGenerator(seed: 5_000)
        var places: [Place] = []
        for index in 0..<6_000 {
            let centre = randomCentre(using: &generator, kind: index)
            let point = destination(
                from: centre, distance: Double.random(in: 0...2_000_000, using: &generator),
                bearing: Double.random(in: 0..<360, using: &generator))
            places.append(Fixture.makePlace("wide-\(index)", category: index % 3 == 0 ? "wide_rare" : "wide_common", at: point))
        }
        return places
    }()
}

@Suite("Place store contract: pages and large categories")
struct PagingContractTests {
    @Test("following next from the first page gives every hit of the radius once, in order, as brute force does",
          arguments: PlaceStoreKind.available)
    func pagesCoverEveryHit(kind: PlaceStoreKind) async throws {
        let subject = try await kind.make()
        let places = Fixture.all
        _ = try await subject.places.upsert(places)
        var generator = SeededGenerator(seed: 77)
        for index in 0..<120 {
            let centre = index % 2 == 0
                ? places[Int.random(in: 0..<places.count, using: &generator)].coordinate
                : randomCentre(using: &generator, kind: index)
            let radius = try SearchRadius(meters: [1000.0, 20_000, 50_000][index % 3] * Double.random(in: 0.5...1, using: &generator))
            let categories: Set<VicinityCore.Category> = index % 4 == 0 ? [Fixture.categories[1]] : []
            let limit = try ResultLimit([1, 3, 7, 25][index % 4])
            let (ids, pages) = try await walkPages(
                subject.places, NearbyQuery(centre: centre, radius: radius, categories: categories, limit: limit))
            let expected = BruteForce.everyHit(places, centre: centre, radius: radius.distance, categories: categories)
            #expect(ids == expected, "query \(index) at \(centre)")
            #expect(pages == max(1, (expected.count + limit.value - 1) / limit.value))
        }
    }

    @Test("later pages of a dense circle read a ring beyond the cursor and give what brute force gives, at the antimeridian and a pole too")
    func densePagesFromTheRing() throws {
        var generator = SeededGenerator(seed: 2_611)
        let centres = [
            try Coordinate(latitude: 33.779842, longitude: -118.112526),
            try Coordinate(latitude: -16.5, longitude: 179.9995),
            try Coordinate(latitude: 89.995, longitude: 12),
        ]
        var places: [Place] = []
        for (index, centre) in centres.enumerated() {
            for point in 0..<3_000 {
                // Uniform over the disc, and some exactly on one spot so that ties by id cross page edges.
                let distance = point % 50 == 0 ? 800 : 3_000 * Double.random(in: 0...1, using: &generator).squareRoot()
                let spot = destination(from: centre, distance: distance, bearing: point % 50 == 0 ? 90 : Double.random(in: 0..<360, using: &generator))
                places.append(Fixture.makePlace("dense-\(index)-\(point)", category: "populated_place", at: spot))
            }
        }
        var grid = PointGrid<Place, VicinityCore.Category>(group: { $0.category })
        grid.insert(contentsOf: places)
        for (index, centre) in centres.enumerated() {
            for (radius, limit) in [(2_500.0, 37), (2_999.0, 500), (1_200.0, 1)] {
                var ids: [String] = []
                var after: (distance: Distance, id: PlaceID)?
                while true {
                    let page = grid.nearest(to: centre, within: Distance(meters: radius), after: after, limit: limit)
                    ids += page.map(\.item.id.rawValue)
                    guard page.count == limit, let last = page.last else { break }
                    after = (last.distance, last.item.id)
                }
                let expected = BruteForce.everyHit(places, centre: centre, radius: Distance(meters: radius), categories: [])
                #expect(ids == expected, "centre \(index), radius \(radius), limit \(limit)")
            }
        }
    }

    @Test("a cell's farthest point from a centre is one of its corners, never nearer than any point inside it")
    func farthestCornerBoundsTheCell() throws {
        var generator = SeededGenerator(seed: 47)
        for kind in 0..<200 {
            let centre = randomCentre(using: &generator, kind: kind)
            let near = destination(from: centre, distance: Double.random(in: 0...3_000, using: &generator),
                                   bearing: Double.random(in: 0..<360, using: &generator))
            let cell = PointGrid<Place, VicinityCore.Category>.cell(of: near)
            let farthest = PointGrid<Place, VicinityCore.Category>.farthestCorner(of: cell, from: centre)
            let south = Double(cell >> 20) / 256 - 90, west = Double(cell & 0xFFFFF) / 256 - 180
            for _ in 0..<50 {
                let inside = try Coordinate(
                    latitude: min(90, south + Double.random(in: 0...1, using: &generator) / 256),
                    longitude: min(180, west + Double.random(in: 0...1, using: &generator) / 256))
                #expect(haversineDistance(from: centre, to: inside).meters <= farthest + 1e-6, "centre \(centre), cell \(cell)")
            }
        }
    }

    @Test("places added while a client pages are never repeated, and unchanged places are each seen once",
          arguments: PlaceStoreKind.available)
    func pagesUnderConcurrentWrites(kind: PlaceStoreKind) async throws {
        let subject = try await kind.make()
        // Scatter cluster 0 of the fixture: 25 places within 60 km of one centre.
        let cluster = Fixture.scattered.filter { $0.id.rawValue.hasPrefix("scatter-0-") }
        _ = try await subject.places.upsert(cluster)
        let centre = cluster[0].coordinate
        let radius = try SearchRadius(meters: 50_000)
        let before = BruteForce.everyHit(cluster, centre: centre, radius: radius.distance, categories: [])
        var added: [Place] = []
        var addedBehind: Set<String> = []
        let (ids, _) = try await walkPages(subject.places, NearbyQuery(centre: centre, radius: radius, limit: ResultLimit(4))) { cursor in
            // Between pages, one place appears just behind the cursor and one at the edge of the radius.
            let behind = Fixture.makePlace("added-behind-\(added.count)", category: "scatter_a",
                                           at: destination(from: centre, distance: cursor.distance.meters / 2, bearing: 10))
            let ahead = Fixture.makePlace("added-ahead-\(added.count)", category: "scatter_a",
                                          at: destination(from: centre, distance: 49_000, bearing: 200))
            added += [behind, ahead]
            addedBehind.insert(behind.id.rawValue)
            _ = try await subject.places.upsert([behind, ahead])
        }
        #expect(Set(ids).count == ids.count, "no place is repeated")
        #expect(ids.filter { !$0.hasPrefix("added-") } == before, "every original place once, in order")
        #expect(ids.filter { addedBehind.contains($0) }.isEmpty, "places added behind the cursor are not served late")
        #expect(ids.contains { $0.hasPrefix("added-ahead-") }, "places added ahead of the cursor are found")
    }

    @Test("a category-filtered closest over more than 5,000 places of the category equals brute force",
          arguments: PlaceStoreKind.available)
    func closestInLargeCategory(kind: PlaceStoreKind) async throws {
        let subject = try await kind.make()
        let places = Fixture.all + WideFixture.places
        _ = try await subject.places.upsert(places)
        #expect(try await subject.places.categories()["wide_common"] == 4_000)
        var generator = SeededGenerator(seed: 4_242)
        for index in 0..<400 {
            let centre = randomCentre(using: &generator, kind: index)
            let categories: Set<VicinityCore.Category> = [["wide_common"], ["wide_common", "wide_rare"], ["wide_rare", "scatter_a"]][index % 3]
            let hit = try await subject.places.closest(to: centre, categories: categories)
            let expected = BruteForce.closest(places, to: centre, categories: categories)
            #expect(hit?.place.id.rawValue == expected?.id, "centre \(centre), categories \(categories)")
            #expect(hit?.distance.meters == expected?.distance)
        }
    }

    @Test("a cursor survives its text form exactly; text that is not a cursor is refused")
    func cursorTokens() throws {
        let cursor = NearbyCursor(distance: .meters(1234.5678901234567), id: try PlaceID("wat-phra-kaew/ü:1"))
        #expect(try NearbyCursor(token: cursor.token) == cursor)
        #expect(!cursor.token.contains { "+/=".contains($0) }, "URL-safe, unpadded")
        for bad in ["", "x", "Zm9v", "!!!!", cursor.token + "A", Base64URL.encode(Array("nan:x".utf8)), Base64URL.encode(Array("7ff8000000000000:x".utf8))] {
            #expect(throws: ValidationError.self, "\"\(bad)\"") { try NearbyCursor(token: bad) }
        }
    }
}

@Suite("Hot place index over SpatiaLite")
struct HotIndexTests {
    @Test("an index loaded from a filled database answers as brute force without a write of its own")
    func loadsFromTheRecord() async throws {
        let file = TemporaryFile()
        let places = Fixture.all
        do {
            let store = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"))
            _ = try await store.upsert(places)
            try store.close()
        }
        let store = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"))
        defer { try? store.close() }
        let index = try await IndexedPlaces(record: store)
        #expect(try await index.count() == places.count)
        #expect(try await index.categories() == store.categories())
        var generator = SeededGenerator(seed: 8)
        for number in 0..<400 {
            let centre = randomCentre(using: &generator, kind: number)
            let query = try NearbyQuery(centre: centre, radius: SearchRadius(meters: 50_000), limit: ResultLimit(50))
            #expect(try await index.nearby(query).map(\.place.id.rawValue) == BruteForce.nearby(places, query).map(\.id))
            #expect(try await index.closest(to: centre, categories: [])?.place.id.rawValue
                    == BruteForce.closest(places, to: centre, categories: [])?.id)
        }
        for place in places.prefix(200) { #expect(try await index.place(id: place.id) == place) }
    }

    @Test("a write by another process is seen after a refresh; the index's own writes need none")
    func followsOtherWriters() async throws {
        let file = TemporaryFile()
        let store = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"))
        defer { try? store.close() }
        let index = try await IndexedPlaces(record: store)
        _ = try await index.upsert(Array(Fixture.geonames.prefix(10)))
        #expect(try await index.refreshIfStale() == false, "its own write is already in memory")

        // `vicinity import` in another process: a second store on the same file.
        let other = try SpatiaLiteStore(path: file.path, logger: Logger(label: "other"))
        let imported = Fixture.geonames[20]
        _ = try await other.upsert([imported])
        try other.close()
        #expect(try await index.place(id: imported.id) == nil, "not seen before the refresh")
        #expect(try await index.refreshIfStale() == true)
        #expect(try await index.place(id: imported.id) == imported)
        #expect(try await index.count() == 11)

        // An own write after the other process's, with no refresh in between, still leads to a reload.
        let again = try SpatiaLiteStore(path: file.path, logger: Logger(label: "other"))
        _ = try await again.upsert([Fixture.geonames[21]])
        try again.close()
        _ = try await index.upsert([Fixture.geonames[22]])
        #expect(try await index.refreshIfStale() == true)
        #expect(try await index.count() == 13)
    }

    @Test("campuses written by another process are seen after a refresh")
    func campusesFollowOtherWriters() async throws {
        let file = TemporaryFile()
        let store = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"))
        defer { try? store.close() }
        let campuses = try await IndexedCampuses(record: store)
        #expect(try await campuses.campusCount() == 0)
        #expect(try await campuses.refreshIfStale() == false)
        func point(_ lat: Double, _ lon: Double) throws -> Coordinate { try Coordinate(latitude: lat, longitude: lon) }
        // A synthetic rectangle around Hall of Science (as in Data/csulb-buildings.csv).
        let campus = try Campus(id: PlaceID("c"), name: "C", boundary: MultiPolygon(Polygon(exterior: [
            point(33.77, -118.12), point(33.77, -118.10), point(33.79, -118.10), point(33.79, -118.12), point(33.77, -118.12),
        ])))
        let other = try SpatiaLiteStore(path: file.path, logger: Logger(label: "other"))
        _ = try await other.upsert([campus])
        try other.close()
        #expect(try await campuses.campuses(containing: point(33.779842, -118.112526)).isEmpty, "not before the refresh")
        #expect(try await campuses.refreshIfStale() == true)
        #expect(try await campuses.campuses(containing: point(33.779842, -118.112526)) == [campus])

        // Its own writes, out of order and one id twice: memory lists what the record lists.
        func renamed(_ id: String, _ name: String) throws -> Campus {
            try Campus(id: PlaceID(id), name: name, boundary: campus.boundary)
        }
        _ = try await campuses.upsert([try renamed("e", "E"), try renamed("a", "A1"), try renamed("a", "A2"), try renamed("c", "C")])
        #expect(try await campuses.campuses() == store.campuses())
        #expect(try await campuses.campuses().map(\.name) == ["A2", "C", "E"])
        #expect(try await campuses.refreshIfStale() == false, "its own write needs no reload")
    }

    @Test("a refused batch changes neither the record nor memory")
    func refusedBatch() async throws {
        let file = TemporaryFile()
        let store = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"))
        defer { try? store.close() }
        let index = try await IndexedPlaces(record: store)
        let places = Array(Fixture.geonames.prefix(3))
        await #expect(throws: BatchError.self) { try await index.upsert(places + [places[0]]) }
        #expect(try await index.count() == 0)
        #expect(try await store.count() == 0)
    }
}

@Suite("Derived columns")
struct DerivedColumnTests {
    @Test("a database whose search text was folded by the previous rule is brought up to the current one on opening")
    func searchTextFollowsTheRule() async throws {
        let file = TemporaryFile()
        let coordinate = try Coordinate(latitude: 33.7798, longitude: -118.1125)
        // Names with runs of white space: the previous rule (version 1) kept them, the current one makes each
        // run one space.
        let places = [
            try Place(id: PlaceID("a"), name: "Hall  of\tScience", category: "academic", aliases: ["HSCI\u{00A0} Annex"], coordinate: coordinate),
            try Place(id: PlaceID("b"), name: "Library", category: "academic", coordinate: coordinate),
        ]
        do {
            let store = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"))
            _ = try await store.upsert(places)
            try store.close()
        }
        // Make the file what the schema before "v5 derived column rules" left: the version table absent and
        // search text as the previous rule folded it (lower case, accents removed, spacing kept).
        let old = try DatabaseQueue(path: file.path)
        try await old.write { db in
            try db.execute(sql: "DROP TABLE derived_column")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'v5 derived column rules'")
            try db.execute(sql: "UPDATE place SET search_text = ? WHERE id = 'a'", arguments: ["hall  of\tscience\nhsci\u{00A0} annex"])
        }
        try old.close()
        do {
            // What the old database answers, read as the previous version would: no match for the folded text.
            let queue = try DatabaseQueue(path: file.path)
            let stored = try await queue.read { db in try String.fetchOne(db, sql: "SELECT search_text FROM place WHERE id = 'a'") }
            #expect(stored == "hall  of\tscience\nhsci\u{00A0} annex")
            try queue.close()
        }

        let reopened = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"))
        defer { try? reopened.close() }
        #expect(try await reopened.search(PlaceSearch(text: "hall of science")).map(\.id.rawValue) == ["a"])
        #expect(try await reopened.search(PlaceSearch(text: "hsci annex")).map(\.id.rawValue) == ["a"])
        #expect(try await reopened.integrityProblems().isEmpty, "the name index follows the recomputed text")
        #expect(try await reopened.upsert(places) == UpsertSummary(unchanged: 2), "the stored text now equals the rule's")
    }

    @Test("re-importing a place whose stored search text is stale rewrites it")
    func upsertComparesSearchText() async throws {
        let file = TemporaryFile()
        let store = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"))
        defer { try? store.close() }
        let place = try Place(id: PlaceID("a"), name: "Hall of Science", category: "academic",
                              coordinate: Coordinate(latitude: 33.7798, longitude: -118.1125))
        _ = try await store.upsert([place])
        try await store.pool.write { db in try db.execute(sql: "UPDATE place SET search_text = 'stale'") }
        #expect(try await store.search(PlaceSearch(text: "science")).isEmpty)
        #expect(try await store.upsert([place]) == UpsertSummary(updated: 1))
        #expect(try await store.search(PlaceSearch(text: "science")).map(\.id) == [place.id])
    }
}

@Suite("SpatiaLite bulk load")
struct BulkLoadTests {
    @Test("a bulk load puts back every trigger it set aside, and they work again afterwards")
    func triggersComeBack() async throws {
        let file = TemporaryFile()
        let store = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"))
        defer { try? store.close() }
        let triggers = { try await store.pool.read { db in
            try String.fetchAll(db, sql: "SELECT name || ':' || sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'place' ORDER BY name")
        } }
        let before = try await triggers()
        #expect(before.contains { $0.hasPrefix("ggi_place_geom:") } && before.contains { $0.hasPrefix("place_name_search_insert:") })
        _ = try await store.upsert(Fixture.geonames)
        #expect(try await triggers() == before)
        #expect(try await store.integrityProblems().isEmpty)
        // SpatiaLite's geometry check refuses a point in another reference system, as before the load.
        await #expect(throws: (any Error).self) {
            try await store.pool.write { db in
                try db.execute(sql: """
                    INSERT INTO place (id, name, category, search_text, lat, lon, geom)
                    VALUES ('x', 'x', 'x', 'x', 0, 0, MakePoint(0, 0, 3857))
                    """)
            }
        }
    }
}

extension BulkLoadTests {
    @Test("a bulk load packs the R*Tree: SQLite's and SpatiaLite's checks pass and each row's rectangle is the one the R*Tree module itself would store")
    func packedIndexMatchesTheModule() async throws {
        let file = TemporaryFile()
        let store = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"))
        defer { try? store.close() }
        // Every polar and near-antimeridian GeoNames place and the scattered points around the poles.
        _ = try await store.upsert(Fixture.all)
        #expect(try await store.integrityProblems().isEmpty)
        try await store.pool.write { db in
            #expect(try String.fetchOne(db, sql: "SELECT rtreecheck('idx_place_geom')") == "ok")
            // The same rows inserted one by one through the module, which rounds to 32-bit floats itself.
            try db.execute(sql: """
                CREATE VIRTUAL TABLE temp.by_module USING rtree(pkid, xmin, xmax, ymin, ymax);
                INSERT INTO temp.by_module SELECT rowid, lon, lon, lat, lat FROM place;
                """)
            let differing = try Int.fetchOne(db, sql: """
                SELECT count(*) FROM (SELECT * FROM idx_place_geom EXCEPT SELECT * FROM temp.by_module
                                      UNION ALL SELECT * FROM temp.by_module EXCEPT SELECT * FROM idx_place_geom)
                """)
            #expect(differing == 0)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM idx_place_geom") == Fixture.all.count)
        }
        // Single writes after the packing go through the module as usual and keep the tree valid.
        let moved = Fixture.makePlace(Fixture.all[7].id.rawValue, category: "populated_place",
                                      at: Fixture.all[2000].coordinate)
        _ = try await store.upsert([moved, Fixture.makePlace("after-packing", category: "populated_place", at: Fixture.all[9].coordinate)])
        #expect(try await store.integrityProblems().isEmpty)
        #expect(try await store.pool.read { db in try String.fetchOne(db, sql: "SELECT rtreecheck('idx_place_geom')") } == "ok")
    }

    @Test("a packed R*Tree of any size is valid, finds exactly what brute force finds, and takes inserts and deletes afterwards",
          arguments: [0, 1, 51, 52, 2601, 2602, Fixture.all.count])
    func packedTreeShapes(count: Int) throws {
        let queue = try DatabaseQueue()
        let entries = Fixture.all.prefix(count).enumerated().map { index, place in
            PackedRTree.entry(id: Int64(index + 1), latitude: place.coordinate.latitude, longitude: place.coordinate.longitude)
        }
        try queue.write { db in
            try db.execute(sql: "CREATE VIRTUAL TABLE tree USING rtree(id, min_lon, max_lon, min_lat, max_lat)")
            try PackedRTree.replaceContent(of: "tree", with: entries, in: db)
            #expect(try String.fetchOne(db, sql: "SELECT rtreecheck('tree')") == "ok")
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM tree") == count)
            // Boxes of a degree around every 37th place, plus the whole world.
            var boxes = stride(from: 0, to: count, by: 37).map { index in
                let centre = Fixture.all[index].coordinate
                return (minLongitude: centre.longitude - 1, maxLongitude: centre.longitude + 1,
                        minLatitude: centre.latitude - 1, maxLatitude: centre.latitude + 1)
            }
            boxes.append((-180, 180, -90, 90))
            for box in boxes {
                let found = try Int64.fetchSet(db, sql: """
                    SELECT id FROM tree WHERE min_lon <= ? AND max_lon >= ? AND min_lat <= ? AND max_lat >= ?
                    """, arguments: [box.maxLongitude, box.minLongitude, box.maxLatitude, box.minLatitude])
                let expected = Set(entries.filter {
                    Double($0.minLongitude) <= box.maxLongitude && Double($0.maxLongitude) >= box.minLongitude
                        && Double($0.minLatitude) <= box.maxLatitude && Double($0.maxLatitude) >= box.minLatitude
                }.map(\.id))
                #expect(found == expected)
            }
            let added = Fixture.all[3].coordinate
            try db.execute(sql: "INSERT INTO tree VALUES (1000000, ?, ?, ?, ?)",
                           arguments: [added.longitude, added.longitude, added.latitude, added.latitude])
            try db.execute(sql: "DELETE FROM tree WHERE id IN (1, 52, 2602)")
            #expect(try String.fetchOne(db, sql: "SELECT rtreecheck('tree')") == "ok")
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM tree") == count + 1 - [1, 52, 2602].filter { $0 <= count }.count)
        }
    }
}

@Suite("Storage settings")
struct StorageSettingsTests {
    @Test("every connection, the writer included, runs with the configured synchronous mode", arguments: [
        StorageSettings.Synchronous.full, .normal,
    ])
    func synchronousApplies(mode: StorageSettings.Synchronous) async throws {
        let file = TemporaryFile()
        let store = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"), settings: try StorageSettings(synchronous: mode))
        defer { try? store.close() }
        // SQLite reports FULL as 2 and NORMAL as 1.
        let expected = mode == .full ? 2 : 1
        #expect(try await store.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") } == expected)
        #expect(try await store.pool.read { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") } == expected)
    }

    @Test("every connection runs with the configured page cache and memory map, and the pool opens the configured readers")
    func cacheMapAndReaders() async throws {
        let file = TemporaryFile()
        let settings = try StorageSettings(readers: 3, cacheMebibytes: 16, mmapMebibytes: 64)
        let store = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"), settings: settings)
        defer { try? store.close() }
        #expect(store.pool.configuration.maximumReaderCount == 3)
        // SQLite reports a size given in KiB as a negative number of KiB, and the map in bytes.
        #expect(try await store.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA cache_size") } == -16 * 1024)
        #expect(try await store.pool.read { db in try Int.fetchOne(db, sql: "PRAGMA cache_size") } == -16 * 1024)
        #expect(try await store.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA mmap_size") } == 64 * 1_048_576)
        #expect(try await store.pool.read { db in try Int.fetchOne(db, sql: "PRAGMA mmap_size") } == 64 * 1_048_576)
    }

    @Test("settings out of range are refused before a database opens")
    func outOfRange() {
        #expect(throws: StorageSettings.Problem.readers(0)) { try StorageSettings(readers: 0) }
        #expect(throws: StorageSettings.Problem.readers(65)) { try StorageSettings(readers: 65) }
        #expect(throws: StorageSettings.Problem.cacheMebibytes(0)) { try StorageSettings(cacheMebibytes: 0) }
        #expect(throws: StorageSettings.Problem.mmapMebibytes(-1)) { try StorageSettings(mmapMebibytes: -1) }
        #expect(throws: StorageSettings.Problem.mmapMebibytes(2048)) { try StorageSettings(mmapMebibytes: 2048) }
        #expect(throws: Never.self) { try StorageSettings(readers: 64, cacheMebibytes: 4096, mmapMebibytes: 2047) }
    }
}

@Suite("Point grid")
struct PointGridTests {
    @Test("a load that repeats an id keeps the last copy once, and moves and removals leave no stale member")
    func repeatsMovesAndRemovals() throws {
        var grid = PointGrid<Place, VicinityCore.Category>(group: { $0.category })
        let places = Array(Fixture.scattered.prefix(50))
        var moved = places[7]
        moved.coordinate = places[30].coordinate
        grid.insert(contentsOf: places + [moved])
        #expect(grid.count == 50)
        var expected = places
        expected[7] = moved
        func check(_ current: [Place]) {
            for place in current {
                let found = grid.nearest(to: place.coordinate, within: .meters(200_000), limit: 500).map(\.item.id.rawValue)
                let brute = BruteForce.everyHit(current, centre: place.coordinate, radius: .meters(200_000), categories: [])
                #expect(found == Array(brute.prefix(500)), "around \(place.id)")
            }
        }
        check(expected)
        grid.remove(places[3].id)
        expected.remove(at: 3)
        var again = moved
        again.coordinate = places[0].coordinate
        grid.insert(again)
        expected[try #require(expected.firstIndex { $0.id == again.id })] = again
        #expect(grid.count == 49)
        #expect(grid.countsByGroup.values.reduce(0, +) == 49)
        check(expected)
    }
}

@Suite("Hot vote index over SpatiaLite")
struct HotVoteIndexTests {
    @Test("open public votes nearby from memory equal brute force, after ballots that complete votes and votes whose time runs out")
    func nearbyMatchesBruteForce() async throws {
        let file = TemporaryFile()
        let store = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"))
        defer { try? store.close() }
        try await nearbyVotesMatchBruteForce(accounts: store, votes: try await IndexedVotes(record: store, at: epoch))
    }

    @Test("fifty ballots at once: memory shows the final count of a vote that stays open and never lists one that filled up")
    func concurrentBallots() async throws {
        let file = TemporaryFile()
        let store = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"))
        defer { try? store.close() }
        let ana = try account("ana")
        try await store.createAccount(ana, passwordHash: someHash)
        var voters: [Account] = []
        for number in 0..<50 {
            let voter = try account("voter\(number)")
            try await store.createAccount(voter, passwordHash: someHash)
            voters.append(voter)
        }
        let index = try await IndexedVotes(record: store, at: epoch)
        let roomy = try makeVote(by: ana.id, participants: 100, duration: .permanent)
        let small = try makeVote(by: ana.id, at: Fixture.geonames[0].coordinate, participants: 30, duration: .permanent)
        for vote in [roomy, small] { #expect(try await index.createVote(vote, passwordHash: someHash)) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for voter in voters {
                for vote in [roomy, small] { group.addTask { _ = try await index.castBallot(makeBallot(vote, by: voter)) } }
            }
            try await group.waitForAll()
        }
        let later = epoch + .seconds(120)
        let listed = try await index.openPublicVotes(near: hallOfScience, within: Distance(meters: 10), at: later, limit: 20)
        #expect(listed.map(\.ballotsCast) == [50], "the copy with every ballot")
        let full = try await index.openPublicVotes(near: small.location, within: Distance(meters: 10), at: later, limit: 20)
        #expect(full.isEmpty, "a vote that filled up is gone")
        #expect(index.heldCount == 1)
    }

    @Test("copies of a vote arriving out of order: memory keeps the newest revision and never takes an ended vote back")
    func outOfOrderCopies() throws {
        let ana = try account("ana")
        let vote = try makeVote(by: ana.id, participants: 3, duration: .permanent)
        func copy(ballots: Int) -> Vote {
            var copy = vote
            copy.ballotsCast = ballots
            copy.revision = ballots + 1  // the edit below was the first change
            if ballots == 3 { copy.completedAt = epoch + .seconds(30) }
            return copy
        }
        var edited = vote
        edited.subject = try VoteSubject("Dinner?")
        edited.revision = 1
        var held = IndexedVotes<InMemoryStore>.Held()
        held.keep(vote)
        held.keep(edited)
        #expect(held.grid.item(vote.id)?.subject.rawValue == "Dinner?", "an edit with no ballot replaces the copy")
        held.keep(copy(ballots: 2))
        held.keep(copy(ballots: 0))
        held.keep(edited)
        held.keep(copy(ballots: 1))
        #expect(held.grid.item(vote.id)?.ballotsCast == 2, "older copies do not replace a newer one")
        held.keep(copy(ballots: 3))
        #expect(held.grid.item(vote.id) == nil, "the completing copy removes it")
        held.keep(copy(ballots: 2))
        #expect(held.grid.item(vote.id) == nil, "a late copy of a finished vote does not bring it back")
        var privateVote = try makeVote(by: ana.id, visibility: .private)
        privateVote.ballotsCast = 1
        held.keep(privateVote)
        #expect(held.grid.count == 0, "private votes are never held")
        for end in [\Vote.closedAt, \Vote.cancelledAt] {
            let other = try makeVote(by: ana.id)
            held.keep(other)
            var ended = other
            ended[keyPath: end] = epoch + .seconds(10)
            ended.revision = 1
            held.keep(ended)
            #expect(held.grid.item(other.id) == nil, "a closed or cancelled vote leaves memory")
        }
    }

    @Test("an index built from a store with votes holds the open public ones; claimed finishes leave memory")
    func loadsAndForgets() async throws {
        let file = TemporaryFile()
        let store = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"))
        defer { try? store.close() }
        let ana = try account("ana")
        try await store.createAccount(ana, passwordHash: someHash)
        let open = try makeVote(by: ana.id, duration: .minutes(5))
        let privateVote = try makeVote(by: ana.id, visibility: .private)
        let permanent = try makeVote(by: ana.id, duration: .permanent)
        for vote in [open, privateVote, permanent] { #expect(try await store.createVote(vote, passwordHash: someHash)) }

        let index = try await IndexedVotes(record: store, at: epoch)
        #expect(index.heldCount == 2, "the two public ones")
        let near = try await index.openPublicVotes(near: hallOfScience, within: Distance(meters: 10), at: epoch, limit: 20)
        #expect(Set(near.map(\.id)) == [open.id, permanent.id])
        // Five minutes later the timed vote is over: not listed, then claimed and forgotten.
        let later = epoch + .seconds(5 * 60)
        #expect(try await index.openPublicVotes(near: hallOfScience, within: Distance(meters: 10), at: later, limit: 20).map(\.id) == [permanent.id])
        #expect(try await index.claimAnnouncements(at: later, limit: 10).map(\.id) == [open.id])
        #expect(index.heldCount == 1)
    }
}

@Suite("Hot position index over SpatiaLite")
struct HotPositionIndexTests {
    static let points = Fixture.all

    /// A position of `user` at one of the fixture's polar, antimeridian or city points.
    static func position(of user: UserID, at point: Int, seconds: Int = 0) -> SharedPosition {
        let place = points[point % points.count]
        return SharedPosition(
            userID: user, coordinate: place.coordinate, accuracy: nil, status: nil, label: "near \(place.name)",
            onCampus: nil, closestPlace: nil, updatedAt: epoch + .seconds(Int64(seconds)))
    }

    @Test("memory answers as the record after sets, moves and deletes, and an index loaded afresh holds the same")
    func followsTheRecord() async throws {
        let file = TemporaryFile()
        let store = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"))
        defer { try? store.close() }
        var people: [Account] = []
        for number in 0..<40 {
            let person = try account("person\(number)")
            try await store.createAccount(person, passwordHash: someHash)
            people.append(person)
        }
        // Half the people share before the index loads, so that the load is tested as well as the writes.
        for (number, person) in people.prefix(20).enumerated() { try await store.setPosition(Self.position(of: person.id, at: number)) }
        let index = try await IndexedPositions(record: store)
        #expect(index.heldCount == 20)

        var generator = SeededGenerator(seed: 7)
        for step in 0..<300 {
            let person = people[Int.random(in: 0..<people.count, using: &generator)]
            if step % 5 == 0 {
                let had = try await store.position(of: person.id) != nil
                #expect(try await index.deletePosition(of: person.id) == had)
            } else {
                try await index.setPosition(Self.position(of: person.id, at: Int.random(in: 0..<10_000, using: &generator), seconds: step))
            }
        }
        let ids = people.map(\.id) + [UserID.random()]
        for id in ids { #expect(try await index.position(of: id) == (try await store.position(of: id))) }
        let asked = ids + ids.prefix(5)
        #expect(Set(try await index.positions(of: asked)) == Set(try await store.positions(of: asked)))
        #expect(try await index.positions(of: asked).count == (try await store.positions(of: asked)).count, "each user once")
        let reloaded = try await IndexedPositions(record: store)
        #expect(reloaded.heldCount == index.heldCount)
        for id in ids { #expect(try await reloaded.position(of: id) == (try await index.position(of: id))) }
    }

    @Test("fifty positions of one user sent at once: memory holds the one the record kept")
    func concurrentSends() async throws {
        let file = TemporaryFile()
        let store = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"))
        defer { try? store.close() }
        let ana = try account("ana")
        try await store.createAccount(ana, passwordHash: someHash)
        let index = try await IndexedPositions(record: store)
        for round in 0..<20 {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for point in 0..<50 {
                    group.addTask { try await index.setPosition(Self.position(of: ana.id, at: round * 50 + point, seconds: point)) }
                }
                try await group.waitForAll()
            }
            let kept = try await store.position(of: ana.id)
            #expect(kept != nil)
            #expect(try await index.position(of: ana.id) == kept, "round \(round)")
        }
    }

    @Test("a position the record refuses (no such account) never reaches memory")
    func refusedWrite() async throws {
        let file = TemporaryFile()
        let store = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"))
        defer { try? store.close() }
        let index = try await IndexedPositions(record: store)
        let stranger = UserID.random()
        await #expect(throws: (any Error).self) { try await index.setPosition(Self.position(of: stranger, at: 0)) }
        #expect(try await index.position(of: stranger) == nil)
        #expect(index.heldCount == 0)
    }

    @Test("another process's position passed over for a write of this process that then fails is read again at the next refresh")
    func failedOwnWriteReadsAgain() async throws {
        let subject = try await StalledAna()
        defer { try? subject.store.close() }
        let (store, ana, record, index) = (subject.store, subject.ana, subject.record, subject.index)
        let stalled = Task { try await index.setPosition(Self.position(of: ana.id, at: 1)) }
        await record.writing()
        // Meanwhile another process writes, and the feed gives its change first: memory passes over it, as it
        // would the change of the write under way.
        let theirs = Self.position(of: ana.id, at: 2, seconds: 5)
        try await store.setPosition(theirs)
        try await index.refresh([ana.id])
        #expect(try await index.position(of: ana.id) == nil)
        record.fail()
        await #expect(throws: StalledPositionWrite<SpatiaLiteStore>.Failure.self) { try await stalled.value }
        try await index.refresh([])
        #expect(try await index.position(of: ana.id) == theirs)
    }

    @Test("a write under way holds up only the feed's changes on its own line: the others are in memory when the refresh returns, its line's once the write is done")
    func slowWriteHoldsItsLineOnly() async throws {
        let subject = try await StalledAna()
        defer { try? subject.store.close() }
        let (store, ana, record, index) = (subject.store, subject.ana, subject.record, subject.index)
        // Ten people on lines of their own and one on Ana's (ids are random: drawn until one shares it).
        var apart: [Account] = [], beside: Account?
        var drawn = 0
        while apart.count < 10 || beside == nil {
            drawn += 1
            let person = try account("person\(drawn)")
            if index.stripe(of: person.id) == index.stripe(of: ana.id) {
                if beside == nil { beside = person }
            } else if apart.count < 10 {
                apart.append(person)
            }
        }
        let neighbour = try #require(beside)
        for person in apart + [neighbour] { try await store.createAccount(person, passwordHash: someHash) }

        let stalled = Task { try await index.setPosition(Self.position(of: ana.id, at: 1)) }
        await record.writing()
        // Another process moves them all, and the feed gives their changes while Ana's write holds her line.
        var moved: [UserID: SharedPosition] = [:]
        for (number, person) in (apart + [neighbour]).enumerated() {
            let position = Self.position(of: person.id, at: number + 2, seconds: 1)
            try await store.setPosition(position)
            moved[person.id] = position
        }
        let returned = Mutex(false)
        let changed = Array(moved.keys)
        let refreshing = Task {
            try await index.refresh(changed)
            returned.withLock { $0 = true }
        }
        // Generous: the refresh waits for nothing it should; one that waits for Ana's line never returns.
        var waited = 0
        while !returned.withLock({ $0 }) && waited < 30_000 {
            try await Task.sleep(for: .milliseconds(1))
            waited += 1
        }
        #expect(returned.withLock { $0 }, "the refresh returned while Ana's write was under way")
        for person in apart { #expect(try await index.position(of: person.id) == moved[person.id]) }
        #expect(try await index.position(of: neighbour.id) == nil, "the change on Ana's line waits for her write")

        record.fail()
        await #expect(throws: StalledPositionWrite<SpatiaLiteStore>.Failure.self) { try await stalled.value }
        try await refreshing.value
        var polls = 0
        while try await index.position(of: neighbour.id) != moved[neighbour.id], polls < 30_000 {
            try await Task.sleep(for: .milliseconds(1))
            polls += 1
        }
        #expect(try await index.position(of: neighbour.id) == moved[neighbour.id], "read once Ana's write was done")
    }
}

/// Ana, with an account on a fresh SpatiaLite file, and an index whose record stalls its first position write.
struct StalledAna {
    let file = TemporaryFile()
    let store: SpatiaLiteStore
    let ana: Account
    let record: StalledPositionWrite<SpatiaLiteStore>
    let index: IndexedPositions<StalledPositionWrite<SpatiaLiteStore>>

    init() async throws {
        store = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"))
        ana = try account("ana")
        try await store.createAccount(ana, passwordHash: someHash)
        record = StalledPositionWrite(record: store)
        index = try await IndexedPositions(record: record)
    }
}

/// A record whose first position write waits until `fail()` and then fails without writing, as a write
/// on a connection that drops does.
final class StalledPositionWrite<Record: PositionStore>: PositionStore {
    struct Failure: Error {}

    let record: Record
    private let started = AsyncStream<Void>.makeStream()
    private let released = AsyncStream<Void>.makeStream()
    private let first = Mutex(true)

    init(record: Record) { self.record = record }

    /// Returns once the stalled write has begun.
    func writing() async {
        var iterator = started.stream.makeAsyncIterator()
        _ = await iterator.next()
    }

    func fail() { released.continuation.yield() }

    func setPosition(_ position: SharedPosition, alerts: [AlertChange]) async throws -> Set<AlertID> {
        let isFirst = first.withLock { first in
            defer { first = false }
            return first
        }
        guard isFirst else { return try await record.setPosition(position, alerts: alerts) }
        started.continuation.yield()
        var iterator = released.stream.makeAsyncIterator()
        _ = await iterator.next()
        throw Failure()
    }

    func position(of user: UserID) async throws -> SharedPosition? { try await record.position(of: user) }
    func positions(of users: [UserID]) async throws -> [SharedPosition] { try await record.positions(of: users) }
    func deletePosition(of user: UserID) async throws -> Bool { try await record.deletePosition(of: user) }
    func forEachPosition(_ body: @Sendable ([SharedPosition]) throws -> Void) async throws { try await record.forEachPosition(body) }
}
