import Foundation
import GeoCore
import Logging
import NIOCore
import VicinityBcrypt
import VicinityCore
import VicinityHTTP
import VicinityTransports
import VicinitySpatiaLite

/// Every setting of `vicinity serve`, each declared once with its flag, environment variable, default, help
/// and reader. `Serve` has an `@Option` property for each entry and resolves it here; the help's list of
/// variables is read off this table, in the order of its entries.
struct ServeOptionTable: Sendable {
    /// Loopback, so that a server started by hand is not reachable from the network until asked to be.
    let host = EnvironmentOption(
        "host", variable: "VICINITY_HOST", valueName: "address",
        abstract: "Address to listen on.",
        standard: "127.0.0.1"
    ) { text throws(OptionRefusal) in
        guard !text.trimmingCharacters(in: .whitespaces).isEmpty else { throw .predicate("must not be empty") }
        return text
    }

    /// 8080, the usual port of an HTTP service that is not run as root.
    let port = EnvironmentOption(
        "port", variable: "VICINITY_PORT", valueName: "port",
        abstract: "TCP port to listen on; 0 picks a free one, named in the start-up line.",
        standard: 8080, read: OptionText.port)

    /// The certificate and key are read in `Serve.settings`, both together, so that a refusal can say which file
    /// is at fault and why.
    let tlsCertificate = EnvironmentOption<String?>(
        "tls-cert", variable: "VICINITY_TLS_CERT", valueName: "file",
        abstract: "Serve HTTPS only, with this PEM certificate: the server's first, then its intermediates. HTTP/2 and HTTP/1.1 by ALPN, TLS 1.2 or later; needs --tls-key.",
        standard: nil, shown: "none: plain HTTP",
        note: "SIGHUP reads the certificate and key again, for new connections; open ones are kept.", read: OptionText.verbatim)

    let tlsKey = EnvironmentOption<String?>(
        "tls-key", variable: "VICINITY_TLS_KEY", valueName: "file",
        abstract: "The unencrypted PEM private key of --tls-cert's certificate.",
        standard: nil, shown: nil, read: OptionText.verbatim)

    let tlsRedirectPort = EnvironmentOption<Int?>(
        "tls-redirect-port", variable: "VICINITY_TLS_REDIRECT_PORT", valueName: "port",
        abstract: "Also listen for plain HTTP on this port (80 in front of 443), answering every request 308 to the same path over HTTPS on the host asked for.",
        standard: nil, shown: "none", read: OptionText.port)

    let database = DatabaseOptions.record

    let templeCategories = EnvironmentOption(
        "temple-categories", variable: "VICINITY_TEMPLE_CATEGORIES", valueName: "list",
        abstract: "Comma-separated categories that /v1/temples/recommended answers with.",
        standard: TempleCategories.standard,
        shown: TempleCategories.standard.categories.map(\.rawValue).sorted().joined(separator: ",")
    ) { text throws(OptionRefusal) in
        let list = VicinityCore.Category.list([text], field: "temple category")
        if let problem = list.errors.first { throw .problem("\(problem.field) \(problem.message)") }
        // An empty set would recommend nothing; refuse it rather than serve an endpoint that never answers.
        guard !list.categories.isEmpty else { throw .predicate("needs at least one category") }
        return TempleCategories(categories: list.categories)
    }

    let bcryptCost = EnvironmentOption(
        "bcrypt-cost", variable: "VICINITY_BCRYPT_COST", valueName: "cost",
        abstract: "bcrypt work factor for new password hashes, \(BcryptCost.minimum) to 31; each step doubles the time a guess costs.",
        standard: BcryptCost.standard, shown: "\(BcryptCost.standard)"
    ) { text throws(OptionRefusal) in
        // Text that is no number is refused in the same words as a number out of range.
        do throws(ValidationError) { return try BcryptCost(Int(text) ?? -1) } catch { throw .predicate("\(error.message), not \"\(text)\"") }
    }

    let positionCurrentFor = EnvironmentOption.duration(
        "position-current-for", variable: "VICINITY_POSITION_CURRENT_FOR", valueName: "age",
        abstract: "Age up to which a shared position is current (where someone is now; nearby lists and live moves), after which it is last seen: a number with s, m, h or d.",
        standard: ServiceSettings.standard.friends.positions.currentFor)

    let positionMaxAge = EnvironmentOption.duration(
        "position-max-age", variable: "VICINITY_POSITION_MAX_AGE", valueName: "age",
        abstract: "Age after which a shared position is shown to nobody, as if none were shared: a number with s, m, h or d.",
        standard: ServiceSettings.standard.friends.positions.maximumAge)

    let alertQuiet = EnvironmentOption.duration(
        "alert-quiet", variable: "VICINITY_ALERT_QUIET", valueName: "duration",
        abstract: "The least time between two tellings of one alert (a friend arriving at or leaving one place): a number with s, m, h or d.",
        standard: ServiceSettings.standard.alerts.quietPeriod)

    let sessionLifetime = EnvironmentOption.duration(
        "session-lifetime", variable: "VICINITY_SESSION_LIFETIME", valueName: "duration",
        abstract: "How long a sign-in token works: a number with s, m, h or d.",
        standard: ServiceSettings.standard.accounts.sessionLifetime)

    let voteSettlingTime = EnvironmentOption.duration(
        "vote-settling-time", variable: "VICINITY_VOTE_SETTLING_TIME", valueName: "duration",
        abstract: "How long a vote's initiator has to settle ballots cast under the same name before the result is published as it stands: a number with s, m, h or d.",
        standard: ServiceSettings.standard.votes.settlingTime,
        note: "Fixed in each vote when it opens.")

    let trustedProxies = EnvironmentListOption(
        "trusted-proxy", variable: "VICINITY_TRUSTED_PROXIES", valueName: "address",
        abstract: "IP address of a reverse proxy whose X-Forwarded-For names the client (repeat for several).",
        shown: "none: the peer is the client"
    ) { text throws(OptionRefusal) in
        // Written as the server will see peers, so that "::1" and "0:0:0:0:0:0:0:1" are one proxy.
        guard let address = try? SocketAddress(ipAddress: text, port: 0), let canonical = address.ipAddress else {
            throw .predicate("must be an IP address, not \"\(text)\"")
        }
        return canonical
    }

    /// The file holding the secret the limits' counts are keyed with (`LimitKeys`), so that even someone who
    /// reads the database cannot tell whose usernames and addresses they are.
    let limitsKeyFile = EnvironmentOption<String?>(
        "limits-key-file", variable: "VICINITY_LIMITS_KEY_FILE", valueName: "file",
        abstract: "A file of at least \(LimitKeys.minimumBytes) random bytes (head -c 32 /dev/urandom > FILE) keying the digests that password-guessing and rate limits count under; every server over one PostgreSQL database must be given the same file.",
        standard: nil, shown: "over PostgreSQL, a secret kept in the database; over SpatiaLite, one made at start", read: OptionText.verbatim)

    // The three SQLite settings are read as whole numbers here; `StorageSettings` holds their ranges and
    // checks them together (`Serve.settings`).
    let databaseReaders = EnvironmentOption(
        "db-readers", variable: "VICINITY_DB_READERS", valueName: "count",
        abstract: "SpatiaLite only: SQLite read connections, \(StorageSettings.readerRange.lowerBound) to \(StorageSettings.readerRange.upperBound): how many reads of the database run at once.",
        standard: StorageSettings.standardReaders, read: OptionText.wholeNumber)

    let databaseCache = EnvironmentOption(
        "db-cache-mib", variable: "VICINITY_DB_CACHE_MIB", valueName: "MiB",
        abstract: "SpatiaLite only: page cache of each SQLite connection, in MiB.",
        standard: StorageSettings.standardCacheMebibytes, read: OptionText.wholeNumber)

    let databaseMmap = EnvironmentOption(
        "db-mmap-mib", variable: "VICINITY_DB_MMAP_MIB", valueName: "MiB",
        abstract: "SpatiaLite only: how much of the database file each SQLite connection reads through a memory map, in MiB; 0 for none.",
        standard: StorageSettings.standardMmapMebibytes, read: OptionText.wholeNumber)

    let requestTimeout = EnvironmentOption.duration(
        "request-timeout", variable: "VICINITY_REQUEST_TIMEOUT", valueName: "duration",
        abstract: "Longest a request may take to arrive, headers and body together, from its first byte; then 408: a number with s or m.",
        standard: HTTPOptions.standard.requestTimeout)

    /// None given leaves the cap to the descriptor limit in force at start (`Serve.Settings.connectionCap`).
    let maximumConnections = EnvironmentOption<Int?>(
        "max-connections", variable: "VICINITY_MAX_CONNECTIONS", valueName: "count",
        abstract: "Open connections served at once; past it new ones are answered 503 at once.",
        standard: nil,
        shown: "\(HTTPOptions.standard.maximumConnections), lowered to stay well under the process's descriptor limit"
    ) { text throws(OptionRefusal) in
        try OptionText.wholeNumber(text, atLeast: DescriptorLimit.minimumConnections)
    }

    let maximumConnectionsPerClient = EnvironmentOption(
        "max-connections-per-client", variable: "VICINITY_MAX_CONNECTIONS_PER_CLIENT", valueName: "count",
        abstract: "Open connections of one client (an IPv4 address, an IPv6 prefix) served at once.",
        standard: HTTPOptions.standard.maximumConnectionsPerClient
    ) { text throws(OptionRefusal) in
        try OptionText.wholeNumber(text, atLeast: 1)
    }

    let ipv6Prefix = EnvironmentOption(
        "ipv6-prefix", variable: "VICINITY_IPV6_PREFIX", valueName: "bits",
        abstract: "Leading bits of an IPv6 address that name one client, for every limit per client, \(AddressGroups.ipv6PrefixLengths.lowerBound) to \(AddressGroups.ipv6PrefixLengths.upperBound).",
        standard: AddressGroups.standard,
        shown: "\(AddressGroups.standard.ipv6PrefixLength): a subscriber's /64"
    ) { text throws(OptionRefusal) in
        let bits = try OptionText.wholeNumber(text)
        do throws(ValidationError) { return try AddressGroups(ipv6PrefixLength: bits) } catch { throw .predicate("\(error.message), not \(bits)") }
    }

    let leafletDirectory = EnvironmentOption(
        "leaflet-dir", variable: "VICINITY_LEAFLET_DIR", valueName: "folder",
        abstract: "Folder holding Leaflet (leaflet.js, leaflet.css, images/) for the map page at /.",
        standard: PageOptions.debianLeafletDirectory,
        shown: "\(PageOptions.debianLeafletDirectory) (Debian's libjs-leaflet)",
        note: "Without it the page says the map library is missing.", read: OptionText.verbatim)

    let qrCodeDirectory = EnvironmentOption(
        "qrcode-dir", variable: "VICINITY_QRCODE_DIR", valueName: "folder",
        abstract: "Folder holding qrcode.js, with which the page shows a phone app's settings as a QR code.",
        standard: PageOptions.debianQRCodeDirectory,
        shown: "\(PageOptions.debianQRCodeDirectory) (Debian's node-qrcode-generator)",
        note: "Without it the page shows the settings and the link, without the code.", read: OptionText.verbatim)

    let pageDirectory = EnvironmentOption<String?>(
        "page-dir", variable: "VICINITY_PAGE_DIR", valueName: "folder",
        abstract: "Serve the map page's own files from this folder, read at every request, instead of the built-in copy.",
        standard: nil, shown: "the built-in copy",
        note: "For editing the page (Sources/VicinityHTTP/Resources/web) without rebuilding.", read: OptionText.verbatim)

    let mapTiles = EnvironmentOption<String?>(
        "map-tiles", variable: "VICINITY_MAP_TILES", valueName: "url-template",
        abstract: "A raster tile server's URL template for the map page, with {z}, {x} and {y} (and {s} for subdomains).",
        standard: nil, shown: "none: the map draws only campuses and places, on a plain background",
        note: "Needs --map-attribution.", read: OptionText.verbatim)

    let mapAttribution = EnvironmentOption<String?>(
        "map-attribution", variable: "VICINITY_MAP_ATTRIBUTION", valueName: "text",
        abstract: "The attribution the tile server's licence asks the map to show, such as \"© OpenStreetMap contributors\".",
        standard: nil, shown: nil, read: OptionText.verbatim)

    let mapStart = EnvironmentOption(
        "map-start", variable: "VICINITY_MAP_START", valueName: "lat,lon,zoom",
        abstract: "Where the map page opens: LAT,LON,ZOOM.",
        standard: MapView.standard,
        shown: "\(MapView.standard.centre.latitude),\(MapView.standard.centre.longitude),\(MapView.standard.zoom) (Hall of Science, CSULB)"
    ) { text throws(OptionRefusal) in
        do throws(ValidationError) { return try MapView(text) } catch { throw .predicate("\(error.message), not \"\(text)\"") }
    }

    /// The relay that takes the service's mail (codes that confirm addresses and sign people in).
    let smtpURL = EnvironmentOption<String?>(
        "smtp-url", variable: "VICINITY_SMTP_URL", valueName: "url",
        abstract: "The mail relay for codes: smtp://user@host:port (smtps:// for TLS from the start); the password from the URL, VICINITY_SMTP_PASSWORD or --smtp-password-file, never shown.",
        standard: nil, shown: "none: sign-up codes, sign-in codes and e-mail checks answer 503 naming this setting",
        read: OptionText.verbatim)

    let smtpPasswordFile = EnvironmentOption<String?>(
        "smtp-password-file", variable: "VICINITY_SMTP_PASSWORD_FILE", valueName: "file",
        abstract: "A file holding the relay's password (its first line), read at start; VICINITY_SMTP_PASSWORD gives it directly.",
        standard: nil, shown: "the URL's password, else VICINITY_SMTP_PASSWORD, else none", read: OptionText.verbatim)

    let smtpTLS = EnvironmentOption<SMTPConfiguration.TLSPolicy?>(
        "smtp-tls", variable: "VICINITY_SMTP_TLS", valueName: "policy",
        abstract: "STARTTLS: opportunistic (when the relay offers it), required, or none.",
        standard: nil, shown: "opportunistic for smtp://, required for smtps://"
    ) { text throws(OptionRefusal) in
        guard let policy = SMTPConfiguration.TLSPolicy(rawValue: text) else {
            throw .predicate("must be opportunistic, required or none, not \"\(text)\"")
        }
        return policy
    }

    let smtpCAFile = EnvironmentOption<String?>(
        "smtp-ca-file", variable: "VICINITY_SMTP_CA_FILE", valueName: "file",
        abstract: "A PEM file of certificate authorities the relay's certificate may chain to, besides the system's.",
        standard: nil, shown: "the system's roots only", read: OptionText.verbatim)

    let mailFrom = EnvironmentOption<Mailbox?>(
        "mail-from", variable: "VICINITY_MAIL_FROM", valueName: "address",
        abstract: "Who the service's mail is from, such as \"Vicinity <vicinity@campus.example.edu>\"; needed with --smtp-url.",
        standard: nil, shown: nil
    ) { text throws(OptionRefusal) in
        do throws(MailProblem) { return try Mailbox(parsing: text) } catch { throw .predicate(error.description) }
    }

    let requireEmail = EnvironmentOption<Bool?>(
        "require-email", variable: "VICINITY_REQUIRE_EMAIL", valueName: "true|false",
        abstract: "Whether sign-up needs an e-mail address, confirmed with a code, and new votes take verified voters only unless they say otherwise.",
        standard: nil, shown: "true when --smtp-url is given, else false", read: OptionText.truth)

    /// The key every Web Push is signed with (RFC 8292): browsers subscribe with its public half, so it stays
    /// the same for as long as their subscriptions should work.
    let vapidKey = EnvironmentOption<String?>(
        "vapid-key", variable: "VICINITY_VAPID_KEY", valueName: "file",
        abstract: "The P-256 private key (PEM: EC PRIVATE KEY or PKCS#8) that signs Web Push notifications; make one with vicinity push keygen. Needs --vapid-subject.",
        standard: nil, shown: "none: no Web Push; registering a browser answers 409 naming this setting", read: OptionText.verbatim)

    let vapidSubject = EnvironmentOption<VAPIDSubject?>(
        "vapid-subject", variable: "VICINITY_VAPID_SUBJECT", valueName: "mailto:…|https://…",
        abstract: "How push services reach the operator about this server's pushes (RFC 8292 §2.1): a mailto: or https: URL.",
        standard: nil, shown: nil
    ) { text throws(OptionRefusal) in
        do throws(WebPushProblem) { return try VAPIDSubject(text) } catch { throw .predicate(error.description) }
    }

    /// For a push service that tests start on loopback, which has no certificate.
    let pushAllowHTTP = EnvironmentOption<Bool>(
        "push-allow-http", variable: "VICINITY_PUSH_ALLOW_HTTP", valueName: "true|false",
        abstract: "Take Web Push endpoints over plain http: for a push service on loopback in tests, never in production.",
        standard: false, shown: "false: endpoints must be https", read: OptionText.truth)

    /// Token-based provider authentication (Apple, "Establishing a token-based connection to APNs"): the key
    /// from the developer account, its id and the team's.
    let apnsKey = EnvironmentOption<String?>(
        "apns-key", variable: "VICINITY_APNS_KEY", valueName: "file",
        abstract: "The APNs signing key (.p8, PEM) that pushes to the iOS app are authorized with. Needs --apns-key-id and --apns-team-id.",
        standard: nil, shown: "none: no pushes to iOS; registering a device token answers 409 naming this setting", read: OptionText.verbatim)

    let apnsKeyID = EnvironmentOption<APNsKeyID?>(
        "apns-key-id", variable: "VICINITY_APNS_KEY_ID", valueName: "id",
        abstract: "The 10-character id of the APNs key, as the developer account shows it.",
        standard: nil, shown: nil
    ) { text throws(OptionRefusal) in
        do throws(APNsProblem) { return try APNsKeyID(text) } catch { throw .predicate(error.description) }
    }

    let apnsTeamID = EnvironmentOption<APNsTeamID?>(
        "apns-team-id", variable: "VICINITY_APNS_TEAM_ID", valueName: "id",
        abstract: "The 10-character id of the team the app belongs to.",
        standard: nil, shown: nil
    ) { text throws(OptionRefusal) in
        do throws(APNsProblem) { return try APNsTeamID(text) } catch { throw .predicate(error.description) }
    }

    /// Production: what App Store and TestFlight builds register with.
    let apnsEnvironment = EnvironmentOption(
        "apns-environment", variable: "VICINITY_APNS_ENVIRONMENT", valueName: "production|sandbox",
        abstract: "Which APNs the app's device tokens belong to: production (App Store, TestFlight) or sandbox (development builds).",
        standard: APNsEnvironment.production, shown: "production"
    ) { text throws(OptionRefusal) in
        guard let environment = APNsEnvironment(rawValue: text.lowercased()) else { throw .predicate("must be production or sandbox, not \"\(text)\"") }
        return environment
    }

    /// Per-request lines belong in an access log an operator asks for, not in the service's own log.
    let accessLog = EnvironmentOption<String?>(
        "access-log", variable: "VICINITY_ACCESS_LOG", valueName: "file",
        abstract: "Append a line for each request to this file (- for standard output): Common Log Format with the seconds it took, the path without its query string.",
        standard: nil, shown: "none", read: OptionText.verbatim)

    let logLevel = EnvironmentOption(
        "log-level", variable: "VICINITY_LOG_LEVEL", valueName: "level",
        abstract: "\(Self.levelNames).",
        standard: Logger.Level.info
    ) { text throws(OptionRefusal) in
        guard let level = Logger.Level(rawValue: text.lowercased()) else {
            throw .predicate("must be \(Self.levelNames), not \"\(text)\"")
        }
        return level
    }

    /// "trace, debug, info, notice, warning, error or critical".
    private static var levelNames: String {
        let names = Logger.Level.allCases.map(\.rawValue)
        return names.dropLast().joined(separator: ", ") + " or " + (names.last ?? "")
    }

    /// Every entry's names, in the order declared: read off the stored properties, so that an entry added to
    /// the table is in the help's list without a second list to keep in step.
    var names: [OptionName] {
        Mirror(reflecting: self).children.compactMap { ($0.value as? any NamedOption)?.name }
    }
}
