import ArgumentParser
import Foundation
import GeoCore
import Hummingbird
import Logging
import Metrics
import NIOCore
import Prometheus
import VicinityBcrypt
import VicinityCore
import VicinityHTTP
import VicinitySpatiaLite
import VicinitySQL

/// `vicinity serve`: the HTTP service over the record `--db` names, until SIGTERM or SIGINT.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the HTTP service.",
        discussion: """
            Every option may also come from the environment: VICINITY_HOST, VICINITY_PORT, VICINITY_DB, \
            VICINITY_TEMPLE_CATEGORIES, VICINITY_BCRYPT_COST, VICINITY_POSITION_MAX_AGE, \
            VICINITY_SESSION_LIFETIME, VICINITY_TRUSTED_PROXIES, VICINITY_LOG_LEVEL, VICINITY_DB_READERS, \
            VICINITY_DB_CACHE_MIB, VICINITY_DB_MMAP_MIB, VICINITY_REQUEST_TIMEOUT, VICINITY_MAX_CONNECTIONS, \
            VICINITY_MAX_CONNECTIONS_PER_CLIENT, VICINITY_IPV6_PREFIX, VICINITY_LEAFLET_DIR, VICINITY_PAGE_DIR, \
            VICINITY_MAP_TILES, VICINITY_MAP_ATTRIBUTION, VICINITY_MAP_START. A command-line option wins \
            over the environment. \
            SIGTERM or SIGINT stops accepting connections and lets requests in flight finish.
            """
    )

    static let defaultHost = "127.0.0.1"
    static let defaultPort = 8080

    @Option(help: ArgumentHelp(
        "Address to listen on.", discussion: "Default: $VICINITY_HOST, else \(defaultHost).", valueName: "address"))
    var host: String?

    @Option(help: ArgumentHelp(
        "TCP port to listen on; 0 picks a free one, named in the start-up line.",
        discussion: "Default: $VICINITY_PORT, else \(defaultPort).", valueName: "port"))
    var port: Int?

    @OptionGroup var database: DatabaseOptions

    @Option(name: .customLong("temple-categories"), help: ArgumentHelp(
        "Comma-separated categories that /v1/temples/recommended answers with.",
        discussion: "Default: $VICINITY_TEMPLE_CATEGORIES, else \(Self.standardTempleList).",
        valueName: "list"))
    var templeCategories: String?

    @Option(name: .customLong("bcrypt-cost"), help: ArgumentHelp(
        "bcrypt work factor for new password hashes, \(BcryptCost.minimum) to 31; each step doubles the time a guess costs.",
        discussion: "Default: $VICINITY_BCRYPT_COST, else \(BcryptCost.standard).", valueName: "cost"))
    var bcryptCost: Int?

    @Option(name: .customLong("position-max-age"), help: ArgumentHelp(
        "Age after which a shared position is last seen rather than current: a number with s, m, h or d.",
        discussion: "Default: $VICINITY_POSITION_MAX_AGE, else 24h.", valueName: "age"))
    var positionMaxAge: String?

    @Option(name: .customLong("session-lifetime"), help: ArgumentHelp(
        "How long a sign-in token works: a number with s, m, h or d.",
        discussion: "Default: $VICINITY_SESSION_LIFETIME, else 30d.", valueName: "duration"))
    var sessionLifetime: String?

    @Option(name: .customLong("vote-settling-time"), help: ArgumentHelp(
        "How long a vote's initiator has to settle ballots cast under the same name before the result is published as it stands: a number with s, m, h or d.",
        discussion: "Fixed in each vote when it opens. Default: $VICINITY_VOTE_SETTLING_TIME, else 24h.", valueName: "duration"))
    var voteSettlingTime: String?

    @Option(name: .customLong("trusted-proxy"), help: ArgumentHelp(
        "IP address of a reverse proxy whose X-Forwarded-For names the client (repeat for several).",
        discussion: "Default: $VICINITY_TRUSTED_PROXIES (comma-separated), else none: the peer is the client.",
        valueName: "address"))
    var trustedProxies: [String] = []

    @Option(name: .customLong("db-readers"), help: ArgumentHelp(
        "SpatiaLite only: SQLite read connections, \(StorageSettings.readerRange.lowerBound) to \(StorageSettings.readerRange.upperBound): how many reads of the database run at once.",
        discussion: "Default: $VICINITY_DB_READERS, else \(StorageSettings.standardReaders).", valueName: "count"))
    var databaseReaders: Int?

    @Option(name: .customLong("db-cache-mib"), help: ArgumentHelp(
        "SpatiaLite only: page cache of each SQLite connection, in MiB.",
        discussion: "Default: $VICINITY_DB_CACHE_MIB, else \(StorageSettings.standardCacheMebibytes).", valueName: "MiB"))
    var databaseCache: Int?

    @Option(name: .customLong("db-mmap-mib"), help: ArgumentHelp(
        "SpatiaLite only: how much of the database file each SQLite connection reads through a memory map, in MiB; 0 for none.",
        discussion: "Default: $VICINITY_DB_MMAP_MIB, else \(StorageSettings.standardMmapMebibytes).", valueName: "MiB"))
    var databaseMmap: Int?

    @Option(name: .customLong("request-timeout"), help: ArgumentHelp(
        "Longest a request may take to arrive, headers and body together, from its first byte; then 408: a number with s or m.",
        discussion: "Default: $VICINITY_REQUEST_TIMEOUT, else 20s.", valueName: "duration"))
    var requestTimeout: String?

    @Option(name: .customLong("max-connections"), help: ArgumentHelp(
        "Open connections served at once; past it new ones are answered 503 at once.",
        discussion: "Default: $VICINITY_MAX_CONNECTIONS, else \(HTTPOptions.standard.maximumConnections), lowered to stay well under the process's descriptor limit.",
        valueName: "count"))
    var maximumConnections: Int?

    @Option(name: .customLong("max-connections-per-client"), help: ArgumentHelp(
        "Open connections of one client (an IPv4 address, an IPv6 prefix) served at once.",
        discussion: "Default: $VICINITY_MAX_CONNECTIONS_PER_CLIENT, else \(HTTPOptions.standard.maximumConnectionsPerClient).",
        valueName: "count"))
    var maximumConnectionsPerClient: Int?

    @Option(name: .customLong("ipv6-prefix"), help: ArgumentHelp(
        "Leading bits of an IPv6 address that name one client, for every limit per client, \(AddressGroups.ipv6PrefixLengths.lowerBound) to \(AddressGroups.ipv6PrefixLengths.upperBound).",
        discussion: "Default: $VICINITY_IPV6_PREFIX, else \(AddressGroups.standard.ipv6PrefixLength): a subscriber's /64.",
        valueName: "bits"))
    var ipv6Prefix: Int?

    @Option(name: .customLong("leaflet-dir"), help: ArgumentHelp(
        "Folder holding Leaflet (leaflet.js, leaflet.css, images/) for the map page at /.",
        discussion: "Default: $VICINITY_LEAFLET_DIR, else \(PageOptions.debianLeafletDirectory) (Debian's libjs-leaflet). Without it the page says the map library is missing.",
        valueName: "folder"))
    var leafletDirectory: String?

    @Option(name: .customLong("page-dir"), help: ArgumentHelp(
        "Serve the map page's own files from this folder, read at every request, instead of the built-in copy.",
        discussion: "Default: $VICINITY_PAGE_DIR, else the built-in copy. For editing the page (Sources/VicinityHTTP/Resources/web) without rebuilding.",
        valueName: "folder"))
    var pageDirectory: String?

    @Option(name: .customLong("map-tiles"), help: ArgumentHelp(
        "A raster tile server's URL template for the map page, with {z}, {x} and {y} (and {s} for subdomains).",
        discussion: "Default: $VICINITY_MAP_TILES, else none: the map draws only campuses and places, on a plain background. Needs --map-attribution.",
        valueName: "url-template"))
    var mapTiles: String?

    @Option(name: .customLong("map-attribution"), help: ArgumentHelp(
        "The attribution the tile server's licence asks the map to show, such as \"© OpenStreetMap contributors\".",
        discussion: "Default: $VICINITY_MAP_ATTRIBUTION.", valueName: "text"))
    var mapAttribution: String?

    @Option(name: .customLong("map-start"), help: ArgumentHelp(
        "Where the map page opens: LAT,LON,ZOOM.",
        discussion: "Default: $VICINITY_MAP_START, else \(MapView.standard.centre.latitude),\(MapView.standard.centre.longitude),\(MapView.standard.zoom) (Hall of Science, CSULB).",
        valueName: "lat,lon,zoom"))
    var mapStart: String?

    @Option(name: .customLong("log-level"), help: ArgumentHelp(
        "trace, debug, info, notice, warning, error or critical.",
        discussion: "Default: $VICINITY_LOG_LEVEL, else info.", valueName: "level"))
    var logLevel: String?

    private static var standardTempleList: String {
        TempleCategories.standard.categories.map(\.rawValue).sorted().joined(separator: ",")
    }

    /// The options with the environment and defaults applied, each checked.
    struct Settings {
        var host: String
        var port: Int
        var services: ServiceSettings
        var bcryptCost: BcryptCost
        var trustedProxies: Set<String>
        var logLevel: Logger.Level
        var storage: StorageSettings
        var requestTimeout: Duration
        /// As given; nil for the default, which the descriptor limit decides at start (`connectionCap`).
        var maximumConnections: Int?
        var maximumConnectionsPerClient: Int
        var addressGroups: AddressGroups
        var page: PageOptions

        /// The connection cap under the descriptor limit in force: the one given, checked against it, or
        /// the standard one lowered to fit.
        func connectionCap(descriptorLimit: Int) throws -> Int {
            guard let room = DescriptorLimit.connectionCap(under: descriptorLimit) else {
                throw ValidationError(
                    "the descriptor limit (ulimit -n) of \(descriptorLimit) leaves room for fewer than \(DescriptorLimit.minimumConnections) connections; raise it")
            }
            guard let given = maximumConnections else { return min(HTTPOptions.standard.maximumConnections, room) }
            guard given <= room else {
                throw ValidationError(
                    "--max-connections (or VICINITY_MAX_CONNECTIONS) \(given) does not fit under the descriptor limit of \(descriptorLimit), which leaves room for \(room); raise the limit or ask for fewer")
            }
            return given
        }
    }

    func settings(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Settings {
        let host = host ?? environment["VICINITY_HOST"] ?? Self.defaultHost
        guard !host.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw ValidationError("--host (or VICINITY_HOST) must not be empty")
        }

        let port: Int
        if let given = self.port {
            port = given
        } else if let text = environment["VICINITY_PORT"] {
            guard let parsed = Int(text) else { throw ValidationError("VICINITY_PORT must be a port number, not \"\(text)\"") }
            port = parsed
        } else {
            port = Self.defaultPort
        }
        guard (0...65535).contains(port) else { throw ValidationError("the port must be in 0...65535, not \(port)") }

        let list = templeCategories ?? environment["VICINITY_TEMPLE_CATEGORIES"] ?? Self.standardTempleList
        let parsed = VicinityCore.Category.list([list], field: "temple category")
        if let problem = parsed.errors.first { throw ValidationError("\(problem.field) \(problem.message)") }
        // An empty set would recommend nothing; refuse it rather than serve an endpoint that never answers.
        guard !parsed.categories.isEmpty else { throw ValidationError("--temple-categories needs at least one category") }

        var cost = BcryptCost.standard
        if let text = bcryptCost.map(String.init) ?? environment["VICINITY_BCRYPT_COST"] {
            do { cost = try BcryptCost(Int(text) ?? -1) } catch {
                throw ValidationError("--bcrypt-cost (or VICINITY_BCRYPT_COST) \(error.message), not \"\(text)\"")
            }
        }

        var services = ServiceSettings(temples: TempleCategories(categories: parsed.categories))
        if let text = positionMaxAge ?? environment["VICINITY_POSITION_MAX_AGE"] {
            services.friends.positions.maximumAge = try Self.duration(text, option: "--position-max-age (or VICINITY_POSITION_MAX_AGE)")
        }
        if let text = sessionLifetime ?? environment["VICINITY_SESSION_LIFETIME"] {
            services.accounts.sessionLifetime = try Self.duration(text, option: "--session-lifetime (or VICINITY_SESSION_LIFETIME)")
        }
        if let text = voteSettlingTime ?? environment["VICINITY_VOTE_SETTLING_TIME"] {
            services.votes.settlingTime = try Self.duration(text, option: "--vote-settling-time (or VICINITY_VOTE_SETTLING_TIME)")
        }

        let proxyList = trustedProxies.isEmpty
            ? (environment["VICINITY_TRUSTED_PROXIES"] ?? "").split(separator: ",").map(String.init) : trustedProxies
        var proxies: Set<String> = []
        for text in proxyList.map({ $0.trimmingCharacters(in: .whitespaces) }) where !text.isEmpty {
            // Written as the server will see peers, so that "::1" and "0:0:0:0:0:0:0:1" are one proxy.
            guard let address = try? SocketAddress(ipAddress: text, port: 0), let canonical = address.ipAddress else {
                throw ValidationError("--trusted-proxy (or VICINITY_TRUSTED_PROXIES) must be an IP address, not \"\(text)\"")
            }
            proxies.insert(canonical)
        }

        /// The option, else the environment variable; nil when neither is given.
        func whole(_ given: Int?, _ variable: String) throws -> Int? {
            if let given { return given }
            guard let text = environment[variable] else { return nil }
            guard let parsed = Int(text) else { throw ValidationError("\(variable) must be a whole number, not \"\(text)\"") }
            return parsed
        }
        func whole(_ given: Int?, _ variable: String, standard: Int) throws -> Int {
            try whole(given, variable) ?? standard
        }
        if database.isServer, let option = [
            (databaseReaders, "--db-readers"), (databaseCache, "--db-cache-mib"), (databaseMmap, "--db-mmap-mib"),
        ].first(where: { $0.0 != nil })?.1 {
            throw ValidationError("\(option) tunes a SpatiaLite file; --db names a PostgreSQL server, whose settings are its own")
        }
        let readers = try whole(databaseReaders, "VICINITY_DB_READERS", standard: StorageSettings.standardReaders)
        let cache = try whole(databaseCache, "VICINITY_DB_CACHE_MIB", standard: StorageSettings.standardCacheMebibytes)
        let mmap = try whole(databaseMmap, "VICINITY_DB_MMAP_MIB", standard: StorageSettings.standardMmapMebibytes)
        let storage: StorageSettings
        do {
            storage = try StorageSettings(readers: readers, cacheMebibytes: cache, mmapMebibytes: mmap)
        } catch {
            let option = switch error {
            case .readers: "--db-readers (or VICINITY_DB_READERS)"
            case .cacheMebibytes: "--db-cache-mib (or VICINITY_DB_CACHE_MIB)"
            case .mmapMebibytes: "--db-mmap-mib (or VICINITY_DB_MMAP_MIB)"
            }
            throw ValidationError("\(option): \(error.message)")
        }

        var timeout = HTTPOptions.standard.requestTimeout
        if let text = requestTimeout ?? environment["VICINITY_REQUEST_TIMEOUT"] {
            timeout = try Self.duration(text, option: "--request-timeout (or VICINITY_REQUEST_TIMEOUT)")
        }
        let maximumConnections = try whole(maximumConnections, "VICINITY_MAX_CONNECTIONS")
        if let maximumConnections, maximumConnections < DescriptorLimit.minimumConnections {
            throw ValidationError("--max-connections (or VICINITY_MAX_CONNECTIONS) must be at least \(DescriptorLimit.minimumConnections), not \(maximumConnections)")
        }
        let perClient = try whole(
            maximumConnectionsPerClient, "VICINITY_MAX_CONNECTIONS_PER_CLIENT",
            standard: HTTPOptions.standard.maximumConnectionsPerClient)
        guard perClient >= 1 else {
            throw ValidationError("--max-connections-per-client (or VICINITY_MAX_CONNECTIONS_PER_CLIENT) must be at least 1, not \(perClient)")
        }
        let prefix = try whole(ipv6Prefix, "VICINITY_IPV6_PREFIX", standard: AddressGroups.standard.ipv6PrefixLength)
        let groups: AddressGroups
        do { groups = try AddressGroups(ipv6PrefixLength: prefix) } catch {
            throw ValidationError("--ipv6-prefix (or VICINITY_IPV6_PREFIX) \(error.message), not \(prefix)")
        }

        var page = PageOptions(
            leafletDirectory: leafletDirectory ?? environment["VICINITY_LEAFLET_DIR"] ?? PageOptions.debianLeafletDirectory,
            pageDirectory: pageDirectory ?? environment["VICINITY_PAGE_DIR"])
        let tiles = mapTiles ?? environment["VICINITY_MAP_TILES"]
        let attribution = mapAttribution ?? environment["VICINITY_MAP_ATTRIBUTION"]
        switch (tiles, attribution) {
        case (let template?, let attribution):
            do { page.tiles = try TileLayer(template: template, attribution: attribution ?? "") } catch {
                let option = error.field == "map tiles" ? "--map-tiles (or VICINITY_MAP_TILES)" : "--map-attribution (or VICINITY_MAP_ATTRIBUTION)"
                throw ValidationError("\(option) \(error.message)")
            }
        case (nil, _?):
            throw ValidationError("--map-attribution (or VICINITY_MAP_ATTRIBUTION) goes with --map-tiles, which is not given")
        case (nil, nil):
            break
        }
        if let text = mapStart ?? environment["VICINITY_MAP_START"] {
            do { page.start = try MapView(text) } catch {
                throw ValidationError("--map-start (or VICINITY_MAP_START) \(error.message), not \"\(text)\"")
            }
        }

        let levelText = logLevel ?? environment["VICINITY_LOG_LEVEL"] ?? "info"
        guard let level = Logger.Level(rawValue: levelText.lowercased()) else {
            throw ValidationError("unknown log level \"\(levelText)\"")
        }
        return Settings(
            host: host, port: port, services: services, bcryptCost: cost, trustedProxies: proxies, logLevel: level,
            storage: storage, requestTimeout: timeout, maximumConnections: maximumConnections,
            maximumConnectionsPerClient: perClient, addressGroups: groups, page: page)
    }

    /// A positive whole number of seconds, minutes, hours or days: `90s`, `15m`, `24h`, `30d`.
    static func duration(_ text: String, option: String) throws -> Duration {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        guard let unit = text.last.flatMap({ units[$0] }), let count = Int64(text.dropLast()), count > 0,
            count <= 3650 * 86_400 / unit
        else { throw ValidationError("\(option) must be a positive whole number with s, m, h or d, such as 24h; not \"\(text)\"") }
        return .seconds(count * unit)
    }

    /// A load time for the start-up line: milliseconds below ten seconds, else seconds.
    static func formatted(_ duration: Duration) -> String {
        let milliseconds = duration.milliseconds
        return milliseconds < 10_000 ? "\(Int(milliseconds.rounded())) ms" : String(format: "%.1f s", milliseconds / 1000)
    }

    func validate() throws {
        _ = try settings()
    }

    func run() async throws {
        let settings = try settings()
        let descriptorLimit = DescriptorLimit.raiseSoftToHard()
        let connectionCap = try settings.connectionCap(descriptorLimit: descriptorLimit)

        // The executable is the one place that picks logging and metrics backends, once per process.
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = settings.logLevel
            return handler
        }
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        let logger = Logger(label: "vicinity")

        try await database.withStore(logger: logger, settings: settings.storage) { record in
            try await serve(
                record, settings: settings, connectionCap: connectionCap, descriptorLimit: descriptorLimit,
                registry: registry, logger: logger)
        }
        logger.info("Vicinity stopped")
    }

    /// Everything past the choice of store, generic over it: the indexes, the services, the HTTP front.
    private func serve<Record: RecordStore>(
        _ record: Record, settings: Settings, connectionCap: Int, descriptorLimit: Int,
        registry: PrometheusCollectorRegistry, logger: Logger
    ) async throws {
        let clock = ContinuousClock()
        let loadStart = clock.now
        // The server answers place reads from memory; the record takes every write first.
        // The feed's cursor before the load: what is written meanwhile is read from the feed afterwards.
        let loadedAfter = try await record.changes.changeCursor()
        let stores = try await IndexedStores(record: record, at: SystemClock().now)
        let loadTime = clock.now - loadStart
        let places = try await stores.places.count()
        let positions = stores.positions.heldCount
        let users = try await record.accountCount()
        let location = record.location
        let temples = settings.services.temples.categories.map(\.rawValue).sorted().joined(separator: ", ")
        if !FileManager.default.fileExists(atPath: settings.page.leafletDirectory + "/leaflet.js") {
            logger.warning(
                "Leaflet is not in its folder: the map page at / will say the map library is missing",
                metadata: ["folder": "\(settings.page.leafletDirectory)", "remedy": "apt-get install libjs-leaflet, or --leaflet-dir"])
        }
        let services = Services(stores: stores, hasher: BcryptHasher(cost: settings.bcryptCost), settings: settings.services)
        // Before the first request, so that nothing written through this front is missed by its streams.
        services.follower.prepare(loadedAfter: loadedAfter)
        let app = buildApplication(
            services: services,
            options: HTTPOptions(
                trustedProxies: settings.trustedProxies, requestTimeout: settings.requestTimeout,
                maximumConnections: connectionCap, maximumConnectionsPerClient: settings.maximumConnectionsPerClient,
                addressGroups: settings.addressGroups, page: settings.page),
            host: settings.host,
            port: settings.port,
            metrics: registry,
            logger: logger,
            background: [PlaceIndexFollower(stores: stores, logger: logger)],
            onListening: { host, port in
                // Said once the socket is bound, so it is never said of a port another process holds. Written
                // straight to the file descriptor: print() is block-buffered when standard output is not a
                // terminal, and the line should reach the log now, not when the buffer fills.
                let line = "Vicinity serving http://\(host):\(port) from \(location) (\(places) places and \(positions) positions in memory, loaded in \(Self.formatted(loadTime)); \(users) users; temples: \(temples); up to \(connectionCap) connections, \(settings.maximumConnectionsPerClient) per client, under a descriptor limit of \(descriptorLimit))\n"
                FileHandle.standardOutput.write(Data(line.utf8))
            }
        )
        do {
            try await app.runService()
        } catch let error as IOError where error.errnoCode == EADDRINUSE || error.errnoCode == EACCES {
            Console.error("vicinity: cannot listen on \(settings.host):\(settings.port): \(String(cString: strerror(error.errnoCode)))")
            throw ExitCode.failure
        }
    }
}
