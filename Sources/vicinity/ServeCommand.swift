import ArgumentParser
import AsyncHTTPClient
import Foundation
import GeoCore
import Hummingbird
import Logging
import Metrics
import NIOCore
import NIOPosix
import Prometheus
import VicinityBcrypt
import VicinityCore
import VicinityHTTP
import VicinityTransports
import VicinitySpatiaLite
import VicinitySQL

/// `vicinity serve`: the HTTP service over the record `--db` names, until SIGTERM or SIGINT.
struct Serve: AsyncParsableCommand {
    /// Every setting, each declared once with its flag, environment variable, default and help; each property
    /// below takes its name and help from its entry, and `settings` resolves it there.
    static let options = ServeOptionTable()

    static let configuration = CommandConfiguration(
        abstract: "Run the HTTP service.",
        discussion: OptionName.environmentDiscussion(options.names)
            + " SIGTERM or SIGINT stops accepting connections and lets requests in flight finish. SIGHUP reads the TLS"
            + " certificate and key again."
    )

    @Option(Self.options.host) var host: String?
    @Option(Self.options.port) var port: String?
    @Option(Self.options.tlsCertificate) var tlsCertificate: String?
    @Option(Self.options.tlsKey) var tlsKey: String?
    @Option(Self.options.tlsRedirectPort) var tlsRedirectPort: String?
    @OptionGroup var database: DatabaseOptions
    @Option(Self.options.templeCategories) var templeCategories: String?
    @Option(Self.options.bcryptCost) var bcryptCost: String?
    @Option(Self.options.positionCurrentFor) var positionCurrentFor: String?
    @Option(Self.options.positionMaxAge) var positionMaxAge: String?
    @Option(Self.options.alertQuiet) var alertQuiet: String?
    @Option(Self.options.sessionLifetime) var sessionLifetime: String?
    @Option(Self.options.voteSettlingTime) var voteSettlingTime: String?
    @Option(Self.options.trustedProxies) var trustedProxies: [String] = []
    @Option(Self.options.limitsKeyFile) var limitsKeyFile: String?
    @Option(Self.options.databaseReaders) var databaseReaders: String?
    @Option(Self.options.databaseCache) var databaseCache: String?
    @Option(Self.options.databaseMmap) var databaseMmap: String?
    @Option(Self.options.requestTimeout) var requestTimeout: String?
    @Option(Self.options.maximumConnections) var maximumConnections: String?
    @Option(Self.options.maximumConnectionsPerClient) var maximumConnectionsPerClient: String?
    @Option(Self.options.ipv6Prefix) var ipv6Prefix: String?
    @Option(Self.options.leafletDirectory) var leafletDirectory: String?
    @Option(Self.options.qrCodeDirectory) var qrCodeDirectory: String?
    @Option(Self.options.pageDirectory) var pageDirectory: String?
    @Option(Self.options.mapTiles) var mapTiles: String?
    @Option(Self.options.mapAttribution) var mapAttribution: String?
    @Option(Self.options.mapStart) var mapStart: String?
    @Option(Self.options.smtpURL) var smtpURL: String?
    @Option(Self.options.smtpPasswordFile) var smtpPasswordFile: String?
    @Option(Self.options.smtpTLS) var smtpTLS: String?
    @Option(Self.options.smtpCAFile) var smtpCAFile: String?
    @Option(Self.options.mailFrom) var mailFrom: String?
    @Option(Self.options.requireEmail) var requireEmail: String?
    @Option(Self.options.vapidKey) var vapidKey: String?
    @Option(Self.options.vapidSubject) var vapidSubject: String?
    @Option(Self.options.pushAllowHTTP) var pushAllowHTTP: String?
    @Option(Self.options.apnsKey) var apnsKey: String?
    @Option(Self.options.apnsKeyID) var apnsKeyID: String?
    @Option(Self.options.apnsTeamID) var apnsTeamID: String?
    @Option(Self.options.apnsEnvironment) var apnsEnvironment: String?
    @Option(Self.options.accessLog) var accessLog: String?
    @Option(Self.options.logLevel) var logLevel: String?

    /// The options with the environment and defaults applied, each checked.
    struct Settings {
        var host: String
        var port: Int
        /// From `--tls-cert` and `--tls-key`, read and checked; nil for plain HTTP.
        var tls: TLSOptions?
        var services: ServiceSettings
        var bcryptCost: BcryptCost
        var trustedProxies: Set<String>
        var logLevel: Logger.Level
        /// Where `--access-log` writes, as given; nil for no access log.
        var accessLog: String?
        var storage: StorageSettings
        var requestTimeout: Duration
        /// As given; nil for the default, which the descriptor limit decides at start (`connectionCap`).
        var maximumConnections: Int?
        var maximumConnectionsPerClient: Int
        var addressGroups: AddressGroups
        var page: PageOptions
        /// The relay and the sender's address; nil without `--smtp-url`.
        var mail: (relay: SMTPConfiguration, from: Mailbox)?
        /// From `--vapid-key` and `--vapid-subject`; nil without Web Push.
        var webPush: WebPushConfiguration?
        /// From `--apns-key` and the options that go with it; nil without APNs.
        var apns: APNsConfiguration?
        /// From `--limits-key-file`; nil for the record's own (`RecordStore.sharedLimitKeys`).
        var limitKeys: LimitKeys?

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
                    "\(Serve.options.maximumConnections.name.named) \(given) does not fit under the descriptor limit of \(descriptorLimit), which leaves room for \(room); raise the limit or ask for fewer")
            }
            return given
        }
    }

    func settings(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> Settings {
        let table = Self.options
        /// An option's value: the command line's, else the environment's, else the default.
        func value<Value>(_ entry: EnvironmentOption<Value>, _ given: String?) throws -> Value {
            try entry.resolve(given: given, environment: environment)
        }

        // In the table's order, so that of several bad settings the first in the help is named.
        let host = try value(table.host, host)
        let port = try value(table.port, port)
        let tls = try tlsSettings(port: port, environment: environment)
        var services = ServiceSettings(temples: try value(table.templeCategories, templeCategories))
        let bcryptCost = try value(table.bcryptCost, bcryptCost)
        services.friends.positions.currentFor = try value(table.positionCurrentFor, positionCurrentFor)
        services.alerts.quietPeriod = try value(table.alertQuiet, alertQuiet)
        services.friends.positions.maximumAge = try value(table.positionMaxAge, positionMaxAge)
        guard services.friends.positions.currentFor <= services.friends.positions.maximumAge else {
            throw table.positionCurrentFor.name.refusal(.predicate(
                "must not be longer than \(table.positionMaxAge.name.long) (\(OptionDuration.text(services.friends.positions.maximumAge))), after which a position is gone"))
        }
        services.accounts.sessionLifetime = try value(table.sessionLifetime, sessionLifetime)
        services.votes.settlingTime = try value(table.voteSettlingTime, voteSettlingTime)
        let proxies = try table.trustedProxies.resolve(given: trustedProxies, environment: environment)

        if database.isServer, let tuned = [
            (databaseReaders, table.databaseReaders), (databaseCache, table.databaseCache), (databaseMmap, table.databaseMmap),
        ].first(where: { $0.0 != nil })?.1 {
            throw ValidationError(
                "\(tuned.name.long) tunes a SpatiaLite file; \(table.database.name.long) names a PostgreSQL server, whose settings are its own")
        }
        let readers = try value(table.databaseReaders, databaseReaders)
        let cache = try value(table.databaseCache, databaseCache)
        let mmap = try value(table.databaseMmap, databaseMmap)
        let storage: StorageSettings
        do {
            storage = try StorageSettings(readers: readers, cacheMebibytes: cache, mmapMebibytes: mmap)
        } catch {
            let entry = switch error {
            case .readers: table.databaseReaders
            case .cacheMebibytes: table.databaseCache
            case .mmapMebibytes: table.databaseMmap
            }
            throw entry.name.refusal(.problem(error.message))
        }

        let requestTimeout = try value(table.requestTimeout, requestTimeout)
        let maximumConnections = try value(table.maximumConnections, maximumConnections)
        let perClient = try value(table.maximumConnectionsPerClient, maximumConnectionsPerClient)
        let addressGroups = try value(table.ipv6Prefix, ipv6Prefix)

        var page = PageOptions(
            leafletDirectory: try value(table.leafletDirectory, leafletDirectory),
            qrCodeDirectory: try value(table.qrCodeDirectory, qrCodeDirectory),
            pageDirectory: try value(table.pageDirectory, pageDirectory))
        switch (try value(table.mapTiles, mapTiles), try value(table.mapAttribution, mapAttribution)) {
        case (let template?, let attribution):
            do { page.tiles = try TileLayer(template: template, attribution: attribution ?? "") } catch {
                let entry = error.field == "map tiles" ? table.mapTiles : table.mapAttribution
                throw entry.name.refusal(.predicate(error.message))
            }
        case (nil, _?):
            throw table.mapAttribution.name.refusal(.predicate("goes with \(table.mapTiles.name.long), which is not given"))
        case (nil, nil):
            break
        }
        page.start = try value(table.mapStart, mapStart)

        let mail = try mailSettings(environment: environment)
        let requireEmail = try value(table.requireEmail, requireEmail) ?? (mail != nil)
        if requireEmail, mail == nil {
            throw table.requireEmail.name.refusal(.predicate("needs \(table.smtpURL.name.long): the codes that confirm addresses are mailed"))
        }
        services.accounts.mail = MailSettings(relayConfigured: mail != nil, requireEmail: requireEmail)
        services.votes.verifiedOnlyByDefault = requireEmail
        let allowHTTP = try value(table.pushAllowHTTP, pushAllowHTTP)
        let webPush = try webPushSettings(allowHTTP: allowHTTP, environment: environment)
        let apns = try apnsSettings(environment: environment)
        services.push.allowHTTP = allowHTTP

        var limitKeys: LimitKeys?
        if let file = try value(table.limitsKeyFile, limitsKeyFile) {
            guard let secret = FileManager.default.contents(atPath: file) else {
                throw table.limitsKeyFile.name.refusal(.predicate("names a file that cannot be read: \(file)"))
            }
            do { limitKeys = try LimitKeys(secret: Array(secret)) } catch {
                throw table.limitsKeyFile.name.refusal(.predicate("names a file too short: \(error.message) (make one with head -c 32 /dev/urandom > \(file))"))
            }
        }

        return Settings(
            host: host, port: port, tls: tls, services: services, bcryptCost: bcryptCost, trustedProxies: Set(proxies),
            logLevel: try value(table.logLevel, logLevel), accessLog: try value(table.accessLog, accessLog),
            storage: storage, requestTimeout: requestTimeout,
            maximumConnections: maximumConnections, maximumConnectionsPerClient: perClient, addressGroups: addressGroups,
            page: page, mail: mail, webPush: webPush, apns: apns, limitKeys: limitKeys)
    }

    /// The key with its id and team's, all given, the key read and checked; nil when none is given.
    private func apnsSettings(environment: [String: String]) throws -> APNsConfiguration? {
        let table = Self.options
        let file = try table.apnsKey.resolve(given: apnsKey, environment: environment)
        let keyID = try table.apnsKeyID.resolve(given: apnsKeyID, environment: environment)
        let teamID = try table.apnsTeamID.resolve(given: apnsTeamID, environment: environment)
        let apnsWhere = try table.apnsEnvironment.resolve(given: apnsEnvironment, environment: environment)
        guard let file else {
            let environmentGiven = apnsEnvironment != nil || environment[table.apnsEnvironment.name.variable] != nil
            if let stray = [(keyID != nil, table.apnsKeyID.name), (teamID != nil, table.apnsTeamID.name), (environmentGiven, table.apnsEnvironment.name)]
                .first(where: \.0)?.1 {
                throw stray.refusal(.predicate("goes with \(table.apnsKey.name.long), which is not given"))
            }
            return nil
        }
        guard let keyID else { throw table.apnsKey.name.refusal(.predicate("needs \(table.apnsKeyID.name.long), which is not given")) }
        guard let teamID else { throw table.apnsKey.name.refusal(.predicate("needs \(table.apnsTeamID.name.long), which is not given")) }
        do throws(APNsProblem) {
            return APNsConfiguration(key: try APNsSigningKey(file: file), keyID: keyID, teamID: teamID, environment: apnsWhere)
        } catch {
            throw table.apnsKey.name.refusal(.predicate(error.description))
        }
    }

    /// The key and subject, both given, the key read and checked; nil when neither is given.
    private func webPushSettings(allowHTTP: Bool, environment: [String: String]) throws -> WebPushConfiguration? {
        let table = Self.options
        let file = try table.vapidKey.resolve(given: vapidKey, environment: environment)
        let subject = try table.vapidSubject.resolve(given: vapidSubject, environment: environment)
        guard let file else {
            if subject != nil { throw table.vapidSubject.name.refusal(.predicate("goes with \(table.vapidKey.name.long), which is not given")) }
            return nil
        }
        guard let subject else { throw table.vapidKey.name.refusal(.predicate("needs \(table.vapidSubject.name.long), which is not given")) }
        do throws(WebPushProblem) {
            return WebPushConfiguration(key: try VAPIDKey(file: file), subject: subject, allowHTTP: allowHTTP)
        } catch {
            throw table.vapidKey.name.refusal(.predicate(error.description))
        }
    }

    /// The certificate and key, both given and read, and the redirect port; nil when neither file is given.
    private func tlsSettings(port: Int, environment: [String: String]) throws -> TLSOptions? {
        let table = Self.options
        let certificate = try table.tlsCertificate.resolve(given: tlsCertificate, environment: environment)
        let key = try table.tlsKey.resolve(given: tlsKey, environment: environment)
        let redirectPort = try table.tlsRedirectPort.resolve(given: tlsRedirectPort, environment: environment)
        guard let certificate else {
            if let stray = [(key != nil, table.tlsKey.name), (redirectPort != nil, table.tlsRedirectPort.name)].first(where: \.0)?.1 {
                throw stray.refusal(.predicate("goes with \(table.tlsCertificate.name.long), which is not given"))
            }
            return nil
        }
        guard let key else { throw table.tlsCertificate.name.refusal(.predicate("needs \(table.tlsKey.name.long), which is not given")) }
        if let redirectPort, redirectPort != 0, redirectPort == port {
            throw table.tlsRedirectPort.name.refusal(.predicate("must differ from \(table.port.name.long), \(port)"))
        }
        do throws(TLSFileProblem) {
            return TLSOptions(certificates: try TLSCertificates(files: TLSFiles(certificate: certificate, key: key)), redirectPort: redirectPort)
        } catch {
            throw (error.file == .certificate ? table.tlsCertificate : table.tlsKey).name.refusal(.predicate(error.description))
        }
    }

    /// The relay from `--smtp-url`, its password from the URL, `VICINITY_SMTP_PASSWORD` or
    /// `--smtp-password-file` (one of them), and the sender from `--mail-from`; nil without a URL.
    private func mailSettings(environment: [String: String]) throws -> (relay: SMTPConfiguration, from: Mailbox)? {
        let table = Self.options
        let url = try table.smtpURL.resolve(given: smtpURL, environment: environment)
        let file = try table.smtpPasswordFile.resolve(given: smtpPasswordFile, environment: environment)
        let tls = try table.smtpTLS.resolve(given: smtpTLS, environment: environment)
        let authorities = try table.smtpCAFile.resolve(given: smtpCAFile, environment: environment)
        let from = try table.mailFrom.resolve(given: mailFrom, environment: environment)
        guard let url else {
            if let stray = [(file != nil, table.smtpPasswordFile.name), (tls != nil, table.smtpTLS.name), (authorities != nil, table.smtpCAFile.name),
                            (from != nil, table.mailFrom.name)].first(where: \.0)?.1 {
                throw stray.refusal(.predicate("goes with \(table.smtpURL.name.long), which is not given"))
            }
            return nil
        }
        guard let from else { throw table.mailFrom.name.refusal(.predicate("is required with \(table.smtpURL.name.long)")) }
        var password = environment["VICINITY_SMTP_PASSWORD"]
        if let file {
            guard password == nil else {
                throw table.smtpPasswordFile.name.refusal(.predicate("and VICINITY_SMTP_PASSWORD both give the password: give one"))
            }
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw table.smtpPasswordFile.name.refusal(.predicate("names a file that cannot be read: \(file)"))
            }
            password = String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
        }
        do {
            var relay = try SMTPConfiguration(url: url, password: password, tls: tls)
            relay.certificateAuthorityFile = authorities
            return (relay, from)
        } catch {
            throw table.smtpURL.name.refusal(.problem(error.description))
        }
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
        let accessLog: AccessLog?
        do { accessLog = try settings.accessLog.map(AccessLog.init(path:)) } catch {
            throw ValidationError("\(Self.options.accessLog.name.named): \(error.description)")
        }
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

        try await database.withStore(logger: logger, settings: settings.storage, serving: true) { record in
            try await serve(
                record, settings: settings, accessLog: accessLog, connectionCap: connectionCap,
                descriptorLimit: descriptorLimit, registry: registry, logger: logger)
        }
        await accessLog?.flush()
        logger.info("Vicinity stopped")
    }

    /// Everything past the choice of store, generic over it: the indexes, the services, the HTTP front.
    private func serve<Record: RecordStore>(
        _ record: Record, settings: Settings, accessLog: AccessLog?, connectionCap: Int, descriptorLimit: Int,
        registry: PrometheusCollectorRegistry, logger: Logger
    ) async throws {
        let clock = ContinuousClock()
        let loadStart = clock.now
        // The server answers place reads from memory; the record takes every write first.
        // The feed's cursor before the load: what is written meanwhile is read from the feed afterwards.
        let loadedAfter = try await record.changes.changeCursor()
        let stores = try await IndexedStores(
            record: record, at: SystemClock().now, held: record.isRemote ? HeldAccounts<Record.Accounts>.standardCapacity : 0)
        let loadTime = clock.now - loadStart
        let places = try await stores.places.count()
        let positions = stores.positions.heldCount
        let alerts = stores.alerts.heldCount
        let users = try await record.accountCount()
        let location = record.location
        let temples = settings.services.temples.categories.map(\.rawValue).sorted().joined(separator: ", ")
        if !FileManager.default.fileExists(atPath: settings.page.leafletDirectory + "/leaflet.js") {
            logger.warning(
                "Leaflet is not in its folder: the map page at / will say the map library is missing",
                metadata: ["folder": "\(settings.page.leafletDirectory)", "remedy": "apt-get install libjs-leaflet, or --leaflet-dir"])
        }
        if !FileManager.default.fileExists(atPath: settings.page.qrCodeDirectory + "/qrcode.js") {
            logger.warning(
                "The QR code library is not in its folder: the page will show a phone app's settings without a code to scan",
                metadata: ["folder": "\(settings.page.qrCodeDirectory)", "remedy": "apt-get install node-qrcode-generator, or --qrcode-dir"])
        }
        let mail: (any MailTransport)? = try settings.mail.map { relay, from in
            SMTPMailTransport(client: try SMTPClient(configuration: relay, logger: logger), from: from)
        }
        if let relay = settings.mail?.relay { logger.info("mail goes through \(relay.description)") }
        // One HTTP client for every push, kept for the server's life.
        let pushClient = settings.webPush.map { _ in
            HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: WebPushConfiguration.httpClientConfiguration)
        }
        let apnsClient = settings.apns.map { _ in
            HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: APNsConfiguration.httpClientConfiguration)
        }
        var push: (any PushTransport)?
        if settings.webPush != nil || settings.apns != nil {
            push = PushTransports(
                webPush: settings.webPush.map { WebPushClient(configuration: $0, httpClient: pushClient ?? .shared, logger: logger) },
                apns: settings.apns.map { APNsClient(configuration: $0, httpClient: apnsClient ?? .shared, logger: logger) })
        }
        if let key = settings.webPush?.key { logger.info("Web Push is signed with \(key.description)") }
        if let apns = settings.apns { logger.info("iOS pushes go to APNs \(apns.environment.rawValue) at \(apns.server.absoluteString)") }
        var limitKeys = settings.limitKeys
        if limitKeys == nil { limitKeys = try await record.sharedLimitKeys() }
        let services = Services(
            stores: stores, hasher: BcryptHasher(cost: settings.bcryptCost), mail: mail, push: push, settings: settings.services,
            limitKeys: limitKeys ?? .random(), observeOutbox: OutboxReport.observer(logger: logger))
        // Before the first request, so that nothing written through this front is missed by its streams.
        services.follower.prepare(loadedAfter: loadedAfter)
        let app = buildApplication(
            services: services,
            options: HTTPOptions(
                trustedProxies: settings.trustedProxies, requestTimeout: settings.requestTimeout,
                maximumConnections: connectionCap, maximumConnectionsPerClient: settings.maximumConnectionsPerClient,
                addressGroups: settings.addressGroups, page: settings.page, tls: settings.tls, accessLog: accessLog),
            host: settings.host,
            port: settings.port,
            metrics: registry,
            logger: logger,
            background: [PlaceIndexFollower(stores: stores, logger: logger), MemoryTrim(logger: logger)],
            onListening: { host, port in
                // Said once the socket is bound, so it is never said of a port another process holds. Written
                // straight to the file descriptor: print() is block-buffered when standard output is not a
                // terminal, and the line should reach the log now, not when the buffer fills.
                let scheme = settings.tls == nil ? "http" : "https"
                let line = "Vicinity serving \(scheme)://\(host):\(port) from \(location) (\(places) places, \(positions) positions and \(alerts) alerts in memory, loaded in \(Self.formatted(loadTime)); \(users) users; temples: \(temples); up to \(connectionCap) connections, \(settings.maximumConnectionsPerClient) per client, under a descriptor limit of \(descriptorLimit))\n"
                FileHandle.standardOutput.write(Data(line.utf8))
            },
            onRedirectListening: { host, port in
                FileHandle.standardOutput.write(Data("Vicinity redirecting http://\(host):\(port) to HTTPS\n".utf8))
            }
        )
        // Kept until the server stops: SIGHUP reloads the certificate from here on.
        let reloads = ReloadSignal(logger: logger) { [certificates = settings.tls?.certificates] in
            guard let certificates else {
                logger.notice("SIGHUP: nothing to reload without --tls-cert")
                return
            }
            await certificates.reload(logger: logger)
        }
        defer { withExtendedLifetime(reloads) {} }
        do {
            try await app.runService()
        } catch let error as IOError where error.errnoCode == EADDRINUSE || error.errnoCode == EACCES {
            Console.error("vicinity: cannot listen on \(settings.host):\(settings.port): \(String(cString: strerror(error.errnoCode)))")
            throw ExitCode.failure
        }
        try? await pushClient?.shutdown()
        try? await apnsClient?.shutdown()
    }
}
