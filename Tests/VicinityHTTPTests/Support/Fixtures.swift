import Foundation
import GeoCore
import Hummingbird
import HummingbirdTesting
import Logging
import Metrics
import Prometheus
import Synchronization
import VicinityCore
import VicinityHTTP
import VicinityImport
import VicinityPostGIS
import VicinityBcrypt

/// Rows copied verbatim from Data/csulb-buildings.csv (header and six buildings).
let csulbRows = """
    id,name,category,lat,lon,code,aliases,kind,source,xcheck_lightguard_id,xcheck_lightguard_name,xcheck_dist_m
    csulb-anac,Anna W. Ngai Alumni Center,administrative,33.781891,-118.116859,ANAC,,building,SharkPark-App/SharkPark@14cb1534:apps/backend/prisma/lot-data.ts,lg-032,Alumni Center,12.3
    csulb-as,Academic Services,administrative,33.776985,-118.114067,AS,,building,SharkPark-App/SharkPark@14cb1534:apps/backend/prisma/lot-data.ts,lg-029,Academic Services,27.9
    csulb-bh,Brotman Hall,administrative,33.782730,-118.115234,BH,Brotman Hall,building,SharkPark-App/SharkPark@14cb1534:apps/backend/prisma/lot-data.ts,lg-026,Brotman Hall,47.9
    csulb-hsci,Hall of Science,academic,33.779842,-118.112526,HSCI,,building,SharkPark-App/SharkPark@14cb1534:apps/backend/prisma/lot-data.ts,lg-144,Hall of Science,38.9
    csulb-lib,Library,academic,33.777267,-118.114777,LIB,,building,SharkPark-App/SharkPark@14cb1534:apps/backend/prisma/lot-data.ts,lg-025,CSULB University Library,36.7
    csulb-usu,University Student Union,administrative,33.781700,-118.114632,USU,,building,SharkPark-App/SharkPark@14cb1534:apps/backend/prisma/lot-data.ts,lg-024,University Student Union,98.3
    """

/// Rows copied verbatim from Data/bangkok-temples.csv (header and eight temples and shrines).
let bangkokRows = """
    id,name,category,lat,lon,place_key,name_th,source_repo,source_path,source_commit,source_id,license,notes
    th-bkk-001,Wat Pho,buddhist_temple,13.746549,100.492766,wat-pho,,degathem/neighborhood-map,src/js/BangkokLandmarks.js,ed0a02c96e38ae2a9175fc2fa3b20ac08def3c4b,,MIT (repo LICENSE),hand-curated landmark list (2015)
    th-bkk-002,Wat Phra Kaew,buddhist_temple,13.751389,100.492778,wat-phra-kaew,,degathem/neighborhood-map,src/js/BangkokLandmarks.js,ed0a02c96e38ae2a9175fc2fa3b20ac08def3c4b,,MIT (repo LICENSE),hand-curated landmark list (2015)
    th-bkk-003,Wat Saket,buddhist_temple,13.753889,100.506667,wat-saket,,degathem/neighborhood-map,src/js/BangkokLandmarks.js,ed0a02c96e38ae2a9175fc2fa3b20ac08def3c4b,,MIT (repo LICENSE),hand-curated landmark list (2015)
    th-bkk-005,Wat Arun Ratchawararam Ratchawaramahawihan,buddhist_temple,13.743862227153713,100.4884902150277,wat-arun,วัดอรุณราชวรารามราชวรมหาวิหาร,Peepo394/553tourpoint,bkktourpoint.js,d955c0e65bef2d5450f9351e67eb92306458789f,,none stated (no LICENSE file),hand-placed map points (2023); English name added by compiler
    th-bkk-006,ศาลเจ้าแม่กวนอิมเกียนอันเกง  恩很好,shrine,13.739979,100.492687,kian-un-keng-shrine,,PattarapolSan/olap,infrastructure/fakeDB/landmark.js,7c20dad7a4e066beef0cbc2cabefba8de3d95770,fsq:4c63a296fa7bc9285c291127,none stated; content is a Foursquare Places API response (Foursquare terms),foursquare categories: Shrine
    th-bkk-007,Wat Kalayanamitr (วัดกัลยาณมิตรฯ),buddhist_temple,13.739964,100.491322,wat-kalayanamit,,PattarapolSan/olap,infrastructure/fakeDB/landmark.js,7c20dad7a4e066beef0cbc2cabefba8de3d95770,fsq:4b7a40c2f964a5209a272fe3,none stated; content is a Foursquare Places API response (Foursquare terms),foursquare categories: Buddhist Temple
    th-bkk-011,Wat Ratchabophit (วัดราชบพิธสถิตมหาสีมารามราชวรวิหาร),buddhist_temple,13.74909,100.49718,wat-ratchabophit,,PattarapolSan/olap,infrastructure/fakeDB/landmark.js,7c20dad7a4e066beef0cbc2cabefba8de3d95770,fsq:4becb1a3bbe62d7f45487f2b,none stated; content is a Foursquare Places API response (Foursquare terms),foursquare categories: Spiritual Center
    th-bkk-014,Wat Suthat Thepwararam (วัดสุทัศน์เทพวรารามฯ),buddhist_temple,13.751145,100.501088,wat-suthat,,PattarapolSan/olap,infrastructure/fakeDB/landmark.js,7c20dad7a4e066beef0cbc2cabefba8de3d95770,fsq:4bab29b1f964a52075973ae3,none stated; content is a Foursquare Places API response (Foursquare terms),foursquare categories: Buddhist Temple
    """

/// Positions taken from the rows above, for queries.
enum Spot {
    /// Hall of Science (csulb-hsci).
    static let hallOfScience = coordinate(33.779842, -118.112526)
    /// Wat Pho (th-bkk-001).
    static let watPho = coordinate(13.746549, 100.492766)

    static func coordinate(_ latitude: Double, _ longitude: Double) -> Coordinate {
        do { return try Coordinate(latitude: latitude, longitude: longitude) } catch {
            preconditionFailure("fixture coordinate (\(latitude), \(longitude)) is invalid: \(error)")
        }
    }
}

/// Reads fixture rows with the importer the service uses.
func places(fromCSV text: String) throws -> [Place] {
    try PlaceFileReader.read(data: Data(text.utf8), format: .csv).places
}

/// An in-memory store loaded with the given fixture CSVs.
func store(_ csvs: String...) async throws -> InMemoryStore {
    let store = InMemoryStore()
    _ = try await store.upsert(csvs.flatMap { try places(fromCSV: $0) })
    return store
}

/// swift-metrics allows one bootstrap per process; every test shares this registry, so metric assertions
/// look for series, never for exact counts.
let sharedRegistry: PrometheusCollectorRegistry = {
    let registry = PrometheusCollectorRegistry()
    MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
    return registry
}()

/// Log records kept in memory so that tests can read what the service logged.
final class LogRecorder: Sendable {
    struct Record: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }

    private let storage = Watched<[Record]>([])

    var records: [Record] { storage.value }

    func append(_ record: Record) { storage.update { $0.append(record) } }

    /// The records once `condition` holds of them: for a line the server logs when what a test waits for has
    /// happened. Fails after `waiting(for:)`'s deadline, saying `what` never came.
    func records(until what: String, _ condition: @escaping @Sendable ([Record]) -> Bool) async throws -> [Record] {
        try await waiting(for: what) { try await self.storage.wait(until: condition) }
    }

    var logger: Logger {
        Logger(label: "vicinity.test") { _ in Handler(recorder: self) }
    }

    struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
            recorder.append(Record(
                level: event.level, message: "\(event.message)", metadata: merged.mapValues { "\($0)" }))
        }
    }
}

/// The given place and campus stores with the in-memory store for everything else: for tests that break or
/// swap one store.
struct MixedStores<Places: PlaceStore, Campuses: CampusStore>: Stores {
    let places: Places
    let campuses: Campuses
    let rest = InMemoryStore()
    var accounts: InMemoryStore { rest }
    var positions: InMemoryStore { rest }
    var friends: InMemoryStore { rest }
    var events: InMemoryStore { rest }
    var votes: InMemoryStore { rest }
    var changes: InMemoryStore { rest }
    var outbox: InMemoryStore { rest }
    var devices: InMemoryStore { rest }
    var push: InMemoryStore { rest }
    var guesses: MemoryGuessingLedger { rest.guesses }
    var limits: MemoryWindowLedger { rest.limits }
    var streamLeases: MemoryStreamLeases { rest.streamLeases }
}

/// bcrypt at its minimum cost: tests check the rules around hashing, not the hash's strength, and cost 10
/// would make each sign-up take a large share of a second in a debug build.
let testHasher = BcryptHasher(cost: .forTesting(4))

func services<S: Stores>(_ stores: S, clock: ManualClock = ManualClock(), settings: ServiceSettings = .standard) -> Services<S> {
    var settings = settings
    // The follower's lag is read off the test's clock: a test that moves it by minutes would see `/health` say
    // the server is behind until the next read. Only the tests of lag itself (which set their own rules) should.
    if settings.following == .standard { settings.following.behindAfter = .seconds(600) }
    return Services(stores: stores, clock: clock, hasher: testHasher, settings: settings)
}

/// The application the executable runs, over the given stores, driven through the router.
func withApp<S: Stores>(
    stores: S,
    clock: ManualClock = ManualClock(),
    settings: ServiceSettings = .standard,
    options: HTTPOptions = .standard,
    logs: LogRecorder = LogRecorder(),
    _ test: @Sendable (any TestClientProtocol) async throws -> Void
) async throws {
    let services = services(stores, clock: clock, settings: settings)
    // As `vicinity serve` does: the follower's cursor is taken before the first request.
    try await services.follower.prepare()
    let app = buildApplication(
        services: services,
        options: options,
        metrics: sharedRegistry,
        logger: logs.logger
    )
    try await app.test(.router, test)
}

func withApp<Places: PlaceStore, Campuses: CampusStore>(
    places: Places,
    campuses: Campuses,
    settings: ServiceSettings = .standard,
    logs: LogRecorder = LogRecorder(),
    _ test: @Sendable (any TestClientProtocol) async throws -> Void
) async throws {
    try await withApp(stores: MixedStores(places: places, campuses: campuses), settings: settings, logs: logs, test)
}

func withApp(
    _ store: InMemoryStore,
    clock: ManualClock = ManualClock(),
    settings: ServiceSettings = .standard,
    options: HTTPOptions = .standard,
    logs: LogRecorder = LogRecorder(),
    _ test: @Sendable (any TestClientProtocol) async throws -> Void
) async throws {
    try await withApp(stores: store, clock: clock, settings: settings, options: options, logs: logs, test)
}

extension TestResponse {
    func decoded<Value: Decodable>(as type: Value.Type = Value.self) throws -> Value {
        try JSONDecoder().decode(Value.self, from: data)
    }

    var data: Data { Data(body.readableBytesView) }

    /// The body as a JSON object, for members whose absence or null-ness is the point of a test.
    var object: [String: Any]? { (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] }

    var text: String { String(buffer: body) }
}

// MARK: Wire shapes, spelled as the contract spells them

struct PlaceWire: Decodable, Equatable {
    var id: String
    var name: String
    var category: String
    var lat: Double
    var lon: Double
    var aliases: [String]
    var attributes: [String: String]
}

struct HitWire: Decodable, Equatable {
    var id: String
    var name: String
    var category: String
    var lat: Double
    var lon: Double
    var distance_m: Double
    var bearing_deg: Double
    var directions_url: String?
}

struct PlacesWire: Decodable { var places: [HitWire] }
struct TemplesWire: Decodable { var temples: [HitWire] }

struct ProblemWire: Decodable {
    struct FieldError: Decodable, Hashable {
        var field: String
        var message: String
    }

    var type: String
    var title: String
    var status: Int
    var detail: String
    var errors: [FieldError]?

    var fields: [String] { (errors ?? []).map(\.field) }
}

/// A store whose every call fails, as a broken disk or a lost database connection would.
struct FailingStore: PlaceStore, CampusStore {
    struct Failure: Error, CustomStringConvertible {
        var description: String { "disk I/O error reading /var/lib/vicinity/secret.sqlite" }
    }

    func upsert(_ places: [Place], progress: (@Sendable (Int, Int) -> Void)?) async throws -> UpsertSummary { throw Failure() }
    func plannedUpsert(_ places: [Place]) async throws -> UpsertSummary { throw Failure() }
    func place(id: PlaceID) async throws -> Place? { throw Failure() }
    func search(_ search: PlaceSearch) async throws -> [Place] { throw Failure() }
    func nearbyPage(_ query: NearbyQuery) async throws -> NearbyPage { throw Failure() }
    func forEachPlace(_ body: @Sendable ([Place]) throws -> Void) async throws { throw Failure() }
    func revision() async throws -> Int { throw Failure() }
    func closest(to centre: Coordinate, categories: Set<VicinityCore.Category>) async throws -> PlaceHit? { throw Failure() }
    func count() async throws -> Int { throw Failure() }
    func categories() async throws -> [VicinityCore.Category: Int] { throw Failure() }
    func upsert(_ campuses: [Campus]) async throws -> UpsertSummary { throw Failure() }
    func campuses() async throws -> [Campus] { throw Failure() }
    func campuses(containing point: Coordinate) async throws -> [Campus] { throw Failure() }
    func campusCount() async throws -> Int { throw Failure() }
    func campusRevision() async throws -> Int { throw Failure() }
}

/// The PostgreSQL server of `Scripts/test.sh` (`VICINITY_TEST_POSTGRES_URL`); without it the PostGIS cases are
/// left out, as the PostGIS store contracts are.
let testPostgresURL = ProcessInfo.processInfo.environment["VICINITY_TEST_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }

/// A configuration for a new schema of the test server, named `prefix` and a random part. A test waits as
/// long as a busy machine needs for a connection: the service's own 5 s is for answering clients.
func testPostGISConfiguration(_ url: String, schemaPrefix prefix: String, maximumConnections: Int? = nil) throws -> PostGISConfiguration {
    let schema = prefix + "_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
    var configuration = try PostGISConfiguration(url: url + (url.contains("?") ? "&" : "?") + "schema=\(schema)")
    configuration.connectionWait = .seconds(120)
    if let maximumConnections { configuration.maximumConnections = maximumConnections }
    return configuration
}

/// A JSON object's text with its keys sorted, for comparing two answers member by member.
func canonicalJSON(_ object: Any) throws -> String {
    String(decoding: try JSONSerialization.data(withJSONObject: object, options: .sortedKeys), as: UTF8.self)
}
