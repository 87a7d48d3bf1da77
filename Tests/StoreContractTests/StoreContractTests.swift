import Foundation
import GRDB
import GeoCore
import GeoTestSupport
import Logging
import Testing
import VicinityCore
import VicinityImport
import VicinitySpatiaLite
import VicinitySQL

/// The stores under test. Every test in this file runs against each, so that the SpatiaLite store is held
/// to the in-memory reference and both to brute force.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case inMemory, spatiaLite, postGIS
    var testDescription: String { rawValue }

    /// Every kind this run can test: PostGIS only with a server (`TestPostGIS`).
    static var available: [StoreKind] { TestPostGIS.url == nil ? [.inMemory, .spatiaLite] : allCases }
}

/// The place stores under test: the two stores, and the hot in-memory index in front of SpatiaLite that the
/// server runs on, each held to brute force.
enum PlaceStoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case inMemory, spatiaLite, indexedSpatiaLite, postGIS
    var testDescription: String { rawValue }

    /// Every kind this run can test: PostGIS only with a server (`TestPostGIS`).
    static var available: [PlaceStoreKind] { TestPostGIS.url == nil ? allCases.filter { $0 != .postGIS } : allCases }

    func make() async throws -> PlaceSubject {
        switch self {
        case .inMemory:
            let store = InMemoryStore()
            return PlaceSubject(places: store, campuses: store, file: nil, spatiaLite: nil)
        case .spatiaLite:
            let file = TemporaryFile()
            let store = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"))
            return PlaceSubject(places: store, campuses: store, file: file, spatiaLite: store)
        case .indexedSpatiaLite:
            let file = TemporaryFile()
            let store = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"))
            return PlaceSubject(
                places: try await IndexedPlaces(record: store), campuses: try await IndexedCampuses(record: store),
                file: file, spatiaLite: store)
        case .postGIS:
            let schema = try await PostGISSchema()
            return PlaceSubject(places: schema.store, campuses: schema.store, file: nil, spatiaLite: nil, postGIS: schema)
        }
    }
}

/// A place store and, for SpatiaLite, its file, for PostGIS its schema: closed, then removed, when the test
/// lets go of it.
final class PlaceSubject: Sendable {
    let places: any PlaceStore
    let campuses: any CampusStore
    let file: TemporaryFile?
    let spatiaLite: SpatiaLiteStore?
    let postGIS: PostGISSchema?

    init(
        places: any PlaceStore, campuses: any CampusStore, file: TemporaryFile?, spatiaLite: SpatiaLiteStore?,
        postGIS: PostGISSchema? = nil
    ) {
        self.places = places
        self.campuses = campuses
        self.file = file
        self.spatiaLite = spatiaLite
        self.postGIS = postGIS
    }

    deinit { try? spatiaLite?.close() }
}

/// A database path in the temporary folder, removed with its WAL files when the test is done.
final class TemporaryFile: Sendable {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("vicinity-\(UUID().uuidString).sqlite").path
    deinit {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}

/// Places for the property tests: a real sample of GeoNames populated places (every polar and near-antimeridian
/// one, and every hundredth of the rest), plus seeded points scattered at known distances around centres near
/// the antimeridian and the poles, where no populated places are.
enum Fixture {
    static let geonames: [Place] = {
        guard let url = Bundle.module.url(forResource: "geonames-sample", withExtension: "csv", subdirectory: "Fixtures"),
            let file = try? PlaceFileReader.read(path: url.path)
        else { preconditionFailure("the GeoNames sample fixture is missing or invalid") }
        return file.places
    }()

    static let categories: [VicinityCore.Category] = ["populated_place", "scatter_a", "scatter_b"]

    static let scattered: [Place] = {
        var generator = SeededGenerator(seed: 2026)
        var places: [Place] = []
        for cluster in 0..<48 {
            let centre = randomCentre(using: &generator, kind: cluster)
            for index in 0..<25 {
                let distance = [50.0, 900, 1100, 20_000, 60_000][index % 5] * Double.random(in: 0...1, using: &generator)
                let point = destination(from: centre, distance: distance, bearing: Double.random(in: 0..<360, using: &generator))
                places.append(makePlace("scatter-\(cluster)-\(index)", category: categories[1 + index % 2], at: point))
            }
        }
        return places
    }()

    static var all: [Place] { geonames + scattered }

    static func makePlace(_ id: String, name: String? = nil, category: VicinityCore.Category, at point: Coordinate) -> Place {
        do {
            return try Place(id: PlaceID(id), name: name ?? id, category: category, coordinate: point)
        } catch {
            preconditionFailure("\(error)")
        }
    }
}

/// The oracle: every place measured, filtered and sorted, with no index and no shared ranking code.
enum BruteForce {
    static func nearby(_ places: [Place], _ query: NearbyQuery) -> [(id: String, distance: Double)] {
        var hits: [(id: String, distance: Double)] = []
        for place in places where query.categories.isEmpty || query.categories.contains(place.category) {
            let distance = haversineDistance(from: query.centre, to: place.coordinate).meters
            if distance <= query.radius.distance.meters { hits.append((place.id.rawValue, distance)) }
        }
        hits.sort { a, b in a.distance != b.distance ? a.distance < b.distance : a.id < b.id }
        return Array(hits.prefix(query.limit.value))
    }

    /// Name search by its stated rule, with no index and no shared ranking code: every place of the categories
    /// whose folded name or alias contains the folded text; exact, then prefix, then substring; by name, then id.
    static func search(_ places: [Place], _ search: PlaceSearch) -> [String] {
        let needle = NameMatch.folded(search.text)
        guard !needle.isEmpty else { return [] }
        var hits: [(rank: Int, name: String, id: String)] = []
        for place in places where search.categories.isEmpty || search.categories.contains(place.category) {
            var best: Int?
            for name in [place.name] + place.aliases {
                let folded = NameMatch.folded(name)
                let rank = folded == needle ? 0 : folded.hasPrefix(needle) ? 1 : folded.contains(needle) ? 2 : nil
                if let rank { best = min(best ?? rank, rank) }
            }
            if let best { hits.append((best, place.name, place.id.rawValue)) }
        }
        hits.sort { a, b in a.rank != b.rank ? a.rank < b.rank : a.name != b.name ? a.name < b.name : a.id < b.id }
        return hits.prefix(search.limit.value).map(\.id)
    }

    static func closest(_ places: [Place], to centre: Coordinate, categories: Set<VicinityCore.Category>) -> (id: String, distance: Double)? {
        var best: (id: String, distance: Double)?
        for place in places where categories.isEmpty || categories.contains(place.category) {
            let candidate = (id: place.id.rawValue, distance: haversineDistance(from: centre, to: place.coordinate).meters)
            guard let current = best else { best = candidate; continue }
            if candidate.distance < current.distance || (candidate.distance == current.distance && candidate.id < current.id) {
                best = candidate
            }
        }
        return best
    }
}

@Suite("Place store contract")
struct StoreContractTests {
    @Test("nearby() equals brute force for thousands of random centres, radii, categories and limits",
          arguments: PlaceStoreKind.available)
    func nearbyMatchesBruteForce(kind: PlaceStoreKind) async throws {
        let subject = try await kind.make()
        let places = Fixture.all
        let summary = try await subject.places.upsert(places)
        #expect(summary.inserted == places.count)
        var generator = SeededGenerator(seed: 99)
        for index in 0..<2500 {
            // Half the centres sit on a fixture point, so that many queries have hits near their edge.
            let centre = index % 2 == 0
                ? places[Int.random(in: 0..<places.count, using: &generator)].coordinate
                : randomCentre(using: &generator, kind: index)
            let radius = try SearchRadius(meters: [1.0, 100, 1000, 10_000, 50_000][index % 5] * Double.random(in: 0.01...1, using: &generator))
            let categories: Set<VicinityCore.Category> = index % 3 == 0 ? [] : [Fixture.categories[index % 3], Fixture.categories[0]]
            let limit = try ResultLimit([1, 5, 20, 500][index % 4])
            let query = NearbyQuery(centre: centre, radius: radius, categories: categories, limit: limit)
            let hits = try await subject.places.nearby(query)
            let expected = BruteForce.nearby(places, query)
            #expect(hits.map(\.place.id.rawValue) == expected.map(\.id), "query \(index): \(query)")
            #expect(hits.map(\.distance.meters) == expected.map(\.distance))
        }
    }

    @Test("closest() equals the brute-force minimum everywhere, including the poles and the antimeridian",
          arguments: PlaceStoreKind.available)
    func closestMatchesBruteForce(kind: PlaceStoreKind) async throws {
        let subject = try await kind.make()
        let places = Fixture.all
        _ = try await subject.places.upsert(places)
        var generator = SeededGenerator(seed: 123)
        for index in 0..<1500 {
            let centre = randomCentre(using: &generator, kind: index)
            let categories: Set<VicinityCore.Category> = index % 4 == 0 ? [Fixture.categories[1]] : []
            let hit = try await subject.places.closest(to: centre, categories: categories)
            let expected = BruteForce.closest(places, to: centre, categories: categories)
            #expect(hit?.place.id.rawValue == expected?.id, "centre \(centre)")
            #expect(hit?.distance.meters == expected?.distance)
        }
    }

    @Test("temples with none within the radius are the nearest however far, as brute force ranks them, poles and antimeridian too",
          arguments: PlaceStoreKind.available)
    func templesBeyondTheRadius(kind: PlaceStoreKind) async throws {
        let subject = try await kind.make()
        let places = Fixture.all
        _ = try await subject.places.upsert(places)
        let temples = TempleCategories(categories: [Fixture.categories[1]])
        var generator = SeededGenerator(seed: 77)
        var beyond = 0
        for index in 0..<200 {
            let centre = randomCentre(using: &generator, kind: index)
            let radius = try SearchRadius(meters: [1.0, 20_000][index % 2])
            let limit = try ResultLimit([1, 5, 20][index % 3])
            let answer = try await Self.recommend(subject.places, subject.campuses, temples, centre, radius, limit)
            let ranked: [Ranked] = places.filter { temples.categories.contains($0.category) }.map { place in
                Ranked(id: place.id.rawValue, distance: haversineDistance(from: centre, to: place.coordinate).meters)
            }.sorted()
            let within = ranked.filter { $0.distance <= radius.distance.meters }
            let expected = Array((within.isEmpty ? ranked : within).prefix(limit.value))
            #expect(answer.withinRadius == !within.isEmpty, "centre \(centre)")
            #expect(answer.page.hits.map { $0.place.id.rawValue } == expected.map(\Ranked.id), "centre \(centre)")
            #expect(answer.page.hits.map { $0.distance.meters } == expected.map(\Ranked.distance))
            if within.isEmpty {
                beyond += 1
                #expect(answer.page.next == nil)
            }
        }
        #expect(beyond > 50, "most centres have no temple within 1 m")
    }

    /// A place as brute force ranks it: by distance, then id.
    private struct Ranked: Comparable {
        var id: String
        var distance: Double
        static func < (a: Ranked, b: Ranked) -> Bool { a.distance != b.distance ? a.distance < b.distance : a.id < b.id }
    }

    private static func recommend<Places: PlaceStore, Campuses: CampusStore>(
        _ places: Places, _ campuses: Campuses, _ temples: TempleCategories, _ centre: Coordinate, _ radius: SearchRadius,
        _ limit: ResultLimit
    ) async throws -> TempleRecommendation {
        try await Locator(places: places, campuses: campuses, temples: temples)
            .recommendedTemples(around: centre, radius: radius, limit: limit)
    }

    @Test("an empty store has no closest place and nothing nearby", arguments: PlaceStoreKind.available)
    func emptyStore(kind: PlaceStoreKind) async throws {
        let subject = try await kind.make()
        let centre = try Coordinate(latitude: 33.7830, longitude: -118.1141)
        #expect(try await subject.places.closest(to: centre, categories: []) == nil)
        #expect(try await subject.places.nearby(NearbyQuery(centre: centre)).isEmpty)
        #expect(try await subject.places.count() == 0)
    }

    @Test("a query with no place within the radius returns an empty list, and an unmatched category finds nothing",
          arguments: PlaceStoreKind.available)
    func emptyResults(kind: PlaceStoreKind) async throws {
        let subject = try await kind.make()
        _ = try await subject.places.upsert(Fixture.geonames)
        // Point Nemo, the ocean pole of inaccessibility (48°52.6′S 123°23.6′W): nothing within 50 km.
        let nemo = try Coordinate(latitude: -(48 + 52.6 / 60), longitude: -(123 + 23.6 / 60))
        #expect(try await subject.places.nearby(NearbyQuery(centre: nemo, radius: SearchRadius(meters: 50_000))).isEmpty)
        #expect(try await subject.places.closest(to: nemo, categories: ["no_such_category"]) == nil)
    }

    @Test("upsert inserts, leaves identical places alone and updates changed ones", arguments: PlaceStoreKind.available)
    func upsertCounts(kind: PlaceStoreKind) async throws {
        let subject = try await kind.make()
        let places = Array(Fixture.geonames.prefix(50))
        #expect(try await subject.places.upsert(places) == UpsertSummary(inserted: 50))
        #expect(try await subject.places.upsert(places) == UpsertSummary(unchanged: 50))
        var changed = places
        changed[3].name = "Renamed"
        changed[7].coordinate = try Coordinate(latitude: 0, longitude: 0)
        #expect(try await subject.places.plannedUpsert(changed) == UpsertSummary(updated: 2, unchanged: 48))
        #expect(try await subject.places.place(id: places[3].id)?.name == places[3].name, "a planned upsert changes nothing")
        #expect(try await subject.places.upsert(changed) == UpsertSummary(updated: 2, unchanged: 48))
        #expect(try await subject.places.place(id: places[3].id)?.name == "Renamed")
        let moved = try await subject.places.nearby(NearbyQuery(centre: Coordinate(latitude: 0, longitude: 0), radius: SearchRadius(meters: 1)))
        #expect(moved.map(\.place.id) == [places[7].id], "the spatial index follows a moved place")
        #expect(try await subject.places.count() == 50)
    }

    @Test("a batch with a repeated id is refused whole and changes nothing", arguments: PlaceStoreKind.available)
    func duplicateIDs(kind: PlaceStoreKind) async throws {
        let subject = try await kind.make()
        let places = Array(Fixture.geonames.prefix(5))
        await #expect(throws: BatchError.self) { try await subject.places.upsert(places + [places[2]]) }
        #expect(try await subject.places.count() == 0)
    }

    @Test("a large batch rebuilds the index and a small one updates it live; both are queryable",
          arguments: PlaceStoreKind.available)
    func bulkThenLive(kind: PlaceStoreKind) async throws {
        let subject = try await kind.make()
        _ = try await subject.places.upsert(Fixture.geonames)
        let few = Array(Fixture.scattered.prefix(10))
        #expect(try await subject.places.upsert(few).inserted == 10)
        for place in few {
            let hit = try await subject.places.closest(to: place.coordinate, categories: [place.category])
            #expect(hit?.distance == .zero)
            // The name index was rebuilt after the bulk load and follows live inserts again.
            #expect(try await subject.places.search(PlaceSearch(text: place.name)).map(\.id) == [place.id])
        }
        let bulkLoaded = Fixture.geonames[100]
        #expect(try await subject.places.search(PlaceSearch(text: bulkLoaded.name, limit: ResultLimit(500))).map(\.id).contains(bulkLoaded.id))
    }

    @Test("places come back exactly as stored, footprints with holes included", arguments: PlaceStoreKind.available)
    func roundTrip(kind: PlaceStoreKind) async throws {
        let subject = try await kind.make()
        // Hall of Science, CSULB, as in Data/csulb-buildings.csv. Its footprint here is synthetic: a 80 m square
        // with a 20 m square hole, centred on the building's point (no outline of it is shipped).
        let hall = try Coordinate(latitude: 33.779842, longitude: -118.112526)
        func square(_ halfSide: Double) -> [Coordinate] {
            let diagonal = halfSide * 2.0.squareRoot()
            let corners = [45.0, 135, 225, 315].map { destination(from: hall, distance: diagonal, bearing: $0) }
            return corners + [corners[0]]
        }
        let footprint = MultiPolygon(try Polygon(exterior: square(40), holes: [square(10)]))
        let place = try Place(
            id: PlaceID("csulb-hsci"), name: "Hall of Science", category: "academic", aliases: ["HSCI", "Café"],
            attributes: ["code": "HSCI", "note": "quote \" and \\ backslash"],
            coordinate: hall, footprint: footprint)
        _ = try await subject.places.upsert([place])
        #expect(try await subject.places.place(id: place.id) == place)
        #expect(try await subject.places.place(id: PlaceID("missing")) == nil)
        #expect(try await subject.places.upsert([place]) == UpsertSummary(unchanged: 1))
    }

    @Test("search finds names and aliases without regard to case or accents, exact matches first",
          arguments: PlaceStoreKind.available)
    func search(kind: PlaceStoreKind) async throws {
        let subject = try await kind.make()
        let coordinate = try Coordinate(latitude: 33.78, longitude: -118.11)
        let places = [
            try Place(id: PlaceID("a"), name: "Library Annex", category: "academic", coordinate: coordinate),
            try Place(id: PlaceID("b"), name: "University Library", category: "academic", aliases: ["LIB"], coordinate: coordinate),
            try Place(id: PlaceID("c"), name: "Library", category: "retail", coordinate: coordinate),
            try Place(id: PlaceID("d"), name: "Café Sixty-Nine", category: "retail", aliases: ["CAFÉ"], coordinate: coordinate),
            try Place(id: PlaceID("e"), name: "100% Science_Lab", category: "academic", coordinate: coordinate),
        ]
        _ = try await subject.places.upsert(places)
        let library = try await subject.places.search(PlaceSearch(text: "LIBRARY"))
        #expect(library.map(\.id.rawValue) == ["c", "a", "b"])
        #expect(try await subject.places.search(PlaceSearch(text: "library", categories: ["academic"])).map(\.id.rawValue) == ["a", "b"])
        #expect(try await subject.places.search(PlaceSearch(text: "cafe")).map(\.id.rawValue) == ["d"])
        #expect(try await subject.places.search(PlaceSearch(text: "lib")).map(\.id.rawValue) == ["b", "c", "a"])
        #expect(try await subject.places.search(PlaceSearch(text: "%")).map(\.id.rawValue) == ["e"], "LIKE wildcards are literal")
        #expect(try await subject.places.search(PlaceSearch(text: "e_l")).map(\.id.rawValue) == ["e"])
        #expect(try await subject.places.search(PlaceSearch(text: "zzz")).isEmpty)
        #expect(try await subject.places.search(PlaceSearch(text: "Lib\0rary")).isEmpty, "a NUL is a character like any other")
        #expect(try await subject.places.search(PlaceSearch(text: "\0")).isEmpty)
        #expect(try await subject.places.search(PlaceSearch(text: "library", limit: ResultLimit(1))).count == 1)
    }

    @Test("search equals a scan of the folded names for random pieces of real names, short and long, any case",
          arguments: PlaceStoreKind.available)
    func searchMatchesScan(kind: PlaceStoreKind) async throws {
        let subject = try await kind.make()
        let places = Fixture.geonames
        _ = try await subject.places.upsert(places)
        var generator = SeededGenerator(seed: 31)
        for index in 0..<300 {
            let name = Array(places[Int.random(in: 0..<places.count, using: &generator)].name)
            let length = min(name.count, [1, 2, 3, 4, 6, 10][index % 6])
            let start = Int.random(in: 0...(name.count - length), using: &generator)
            var text = String(name[start..<(start + length)])
            if index % 3 == 0 { text = text.uppercased() }
            let categories: Set<VicinityCore.Category> = [[], ["populated_place"], ["no_such_category"]][index % 5 % 3]
            let search = PlaceSearch(text: text, categories: categories, limit: try ResultLimit([1, 20, 500][index % 3]))
            let found = try await subject.places.search(search).map(\.id.rawValue)
            #expect(found == BruteForce.search(places, search), "search \(index): \"\(text)\"")
        }
    }

    @Test("search follows renames: the old name is no longer found, the new one is", arguments: PlaceStoreKind.available)
    func searchFollowsRenames(kind: PlaceStoreKind) async throws {
        let subject = try await kind.make()
        var place = Fixture.geonames[0]
        _ = try await subject.places.upsert([place])
        let oldName = place.name
        place.name = "Zyxwvut Junction"
        place.aliases = ["Qqq Crossing"]
        #expect(try await subject.places.upsert([place]) == UpsertSummary(updated: 1))
        #expect(try await subject.places.search(PlaceSearch(text: oldName)).isEmpty)
        #expect(try await subject.places.search(PlaceSearch(text: "xwvu")).map(\.id) == [place.id])
        #expect(try await subject.places.search(PlaceSearch(text: "QQQ cross")).map(\.id) == [place.id])
    }

    @Test("campuses containing a point are found by their boundary, holes excluded", arguments: PlaceStoreKind.available)
    func campuses(kind: PlaceStoreKind) async throws {
        let subject = try await kind.make()
        func point(_ lat: Double, _ lon: Double) throws -> Coordinate { try Coordinate(latitude: lat, longitude: lon) }
        let boundary = MultiPolygon(try Polygon(
            exterior: [point(33.77, -118.12), point(33.77, -118.10), point(33.79, -118.10), point(33.79, -118.12), point(33.77, -118.12)],
            holes: [[point(33.775, -118.115), point(33.775, -118.113), point(33.777, -118.113), point(33.777, -118.115), point(33.775, -118.115)]]))
        let campus = try Campus(id: PlaceID("test-campus"), name: "Test campus", boundary: boundary)
        #expect(try await subject.campuses.campusCount() == 0)
        #expect(try await subject.campuses.upsert([campus]) == UpsertSummary(inserted: 1))
        #expect(try await subject.campuses.campusCount() == 1)
        #expect(try await subject.campuses.upsert([campus]) == UpsertSummary(unchanged: 1))
        #expect(try await subject.campuses.campuses() == [campus])
        // The boundary is a synthetic rectangle; the points are Hall of Science (inside), Academic Services
        // (inside the hole) and Wat Pho (far away), as in Data/.
        #expect(try await subject.campuses.campuses(containing: point(33.779842, -118.112526)) == [campus])
        #expect(try await subject.campuses.campuses(containing: point(33.776985, -118.114067)).isEmpty)
        #expect(try await subject.campuses.campuses(containing: point(13.746549, 100.492766)).isEmpty)
    }
}

@Suite("SpatiaLite file")
struct SpatiaLiteFileTests {
    @Test("the database survives reopening and keeps healthy spatial indexes after bulk and live loads")
    func reopen() async throws {
        let file = TemporaryFile()
        do {
            let store = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"))
            _ = try await store.upsert(Fixture.geonames)
            _ = try await store.upsert(Array(Fixture.scattered.prefix(20)))
            #expect(try await store.integrityProblems().isEmpty)
            try store.close()
        }
        let reopened = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"))
        #expect(try await reopened.count() == Fixture.geonames.count + 20)
        #expect(try await reopened.integrityProblems().isEmpty)
        try reopened.close()
    }

    @Test("the integrity check notices a name search index that no longer matches the places")
    func staleNameIndexIsReported() async throws {
        let file = TemporaryFile()
        let store = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"))
        defer { try? store.close() }
        _ = try await store.upsert(Array(Fixture.geonames.prefix(20)))
        // Another program edits the file without the trigger that keeps the index in step.
        let other = try DatabaseQueue(path: file.path)
        try await other.write { db in
            try db.execute(sql: "DROP TRIGGER place_name_search_update")
            try db.execute(sql: "UPDATE place SET search_text = 'edited behind the index' WHERE rowid = 1")
        }
        try other.close()
        let problems = try await store.integrityProblems()
        #expect(problems.count == 1)
        #expect(problems.first?.hasPrefix("name search index does not match the place table") == true)
    }
}
