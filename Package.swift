// swift-tools-version:6.1
import PackageDescription

/// Language features every target opts into, as the server packages we build on do.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "vicinity",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "vicinity", targets: ["vicinity"]),
        .library(name: "GeoCore", targets: ["GeoCore"]),
        .library(name: "VicinityCore", targets: ["VicinityCore"]),
        .library(name: "VicinitySQL", targets: ["VicinitySQL"]),
        .library(name: "VicinitySpatiaLite", targets: ["VicinitySpatiaLite"]),
        .library(name: "VicinityPostGIS", targets: ["VicinityPostGIS"]),
        .library(name: "VicinityHTTP", targets: ["VicinityHTTP"]),
        .library(name: "VicinityTransports", targets: ["VicinityTransports"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-async-algorithms.git", from: "1.1.4"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/yaslab/CSV.swift.git", from: "2.5.2"),
    ],
    targets: [
        // MARK: System libraries (Debian: libproj-dev, libspatialite-dev, zlib1g-dev; see Scripts/setup.sh)
        .systemLibrary(
            name: "CProj",
            pkgConfig: "proj",
            providers: [.apt(["libproj-dev"])]
        ),
        .systemLibrary(name: "CMalloc"),
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .systemLibrary(
            name: "CSpatiaLite",
            pkgConfig: "spatialite",
            providers: [.apt(["libspatialite-dev"])]
        ),

        // MARK: Layers, top to bottom of the design's dependency order
        .target(
            name: "GeoCore",
            dependencies: ["CProj"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "VicinityCore",
            dependencies: [
                "GeoCore",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        /// bcrypt behind VicinityCore's `PasswordHasher`: the domain names no hashing library.
        .target(
            name: "VicinityBcrypt",
            dependencies: [
                "VicinityCore",
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "VicinityImport",
            dependencies: [
                "CZlib",
                "GeoCore",
                "VicinityCore",
                .product(name: "CSV", package: "CSV.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        /// What both SQL stores share: each record's columns mapped once, by name; the statements in both
        /// dialects; the plans (reads, Swift decisions, writes) that every store operation is; the copy.
        .target(
            name: "VicinitySQL",
            dependencies: [
                "GeoCore",
                "VicinityCore",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "VicinitySpatiaLite",
            dependencies: [
                "GeoCore",
                "VicinityCore",
                "VicinitySQL",
                "CSpatiaLite",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "VicinityPostGIS",
            dependencies: [
                "GeoCore",
                "VicinityCore",
                "VicinitySQL",
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                // The pool's own errors (`ConnectionPoolError`), which `PostGISStore` maps to the store's.
                .product(name: "_ConnectionPoolModule", package: "postgres-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        /// What leaves the service: one folder a transport (Mail: SMTP submission; WebPush: RFC 8030 delivery of
        /// RFC 8291 encrypted messages with RFC 8292 VAPID; APNs: Apple's HTTP/2 provider API with ES256 provider
        /// tokens; Shared: PEM keys, ES256 tokens and answers' words both push transports read), beside the stores and, like them, met by the rest only in
        /// `vicinity`. Each is an adapter behind VicinityCore's protocol (`MailTransport`) over clients with value
        /// types of their own.
        .target(
            name: "VicinityTransports",
            dependencies: [
                "VicinityCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        /// Turns `--db` text into a store: the one place that knows both stores.
        .target(
            name: "VicinityRecord",
            dependencies: [
                "VicinityCore", "VicinityPostGIS", "VicinitySpatiaLite", "VicinitySQL",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "VicinityHTTP",
            dependencies: [
                "GeoCore",
                "CMalloc",
                "CZlib",
                "VicinityCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                // NIO's thread pool, where the access log's blocking writes run.
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.copy("Resources/openapi.yaml"), .copy("Resources/web")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "vicinity",
            dependencies: [
                "GeoCore",
                "VicinityBcrypt",
                "VicinityCore",
                "VicinitySQL",
                "VicinityImport",
                "VicinityRecord",
                "VicinitySpatiaLite",
                "VicinityPostGIS",
                "VicinityHTTP",
                "VicinityTransports",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: swiftSettings
        ),
        /// Fills a database (a file or a server) with synthetic people for the load benchmarks, never for real use.
        .executableTarget(
            name: "vicinity-seed",
            dependencies: [
                "GeoCore", "GeoTestSupport", "VicinityBcrypt", "VicinityCore", "VicinityImport", "VicinityRecord", "VicinitySQL",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        /// Prints import and query figures; run in release by Scripts/bench/places.sh, never by the tests.
        .executableTarget(
            name: "vicinity-bench",
            dependencies: ["GeoCore", "GeoTestSupport", "VicinityCore", "VicinityImport", "VicinitySQL", "VicinitySpatiaLite"],
            swiftSettings: swiftSettings
        ),
        /// The layers under the HTTP front alone (bare SwiftNIO, bare Hummingbird), answering a constant body; run in
        /// release by Scripts/bench/floor.sh beside nginx and `vicinity serve`, never by the tests.
        .executableTarget(
            name: "vicinity-floor",
            dependencies: [
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: Tests
        /// Seeded randomness and geometry helpers shared by the test targets, the load-test seeder and the benchmarks.
        .target(
            name: "GeoTestSupport",
            dependencies: ["GeoCore"],
            path: "Tests/GeoTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GeoCoreTests",
            dependencies: ["GeoCore", "GeoTestSupport"],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "VicinityCoreTests",
            dependencies: ["GeoCore", "GeoTestSupport", "VicinityBcrypt", "VicinityCore"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "StoreContractTests",
            dependencies: [
                "GeoCore", "GeoTestSupport", "VicinityBcrypt", "VicinityCore", "VicinityImport", "VicinitySQL",
                "VicinitySpatiaLite", "VicinityPostGIS",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "VicinityImportTests",
            dependencies: ["GeoCore", "VicinityCore", "VicinityImport", "VicinitySpatiaLite"],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),
        /// Runs the built `vicinity` executable; needs no module of the package, only the binary beside it (and
        /// openssl's certificates for serving TLS).
        .testTarget(
            name: "VicinityCLITests",
            dependencies: ["ProcessTestSupport", "TLSTestSupport"],
            swiftSettings: swiftSettings
        ),
        /// A throwaway certificate authority made with openssl at test time, for the tests that serve TLS.
        .target(
            name: "TLSTestSupport",
            dependencies: ["ProcessTestSupport"],
            path: "Tests/TLSTestSupport",
            swiftSettings: swiftSettings
        ),
        /// How the tests start child processes: one at a time, with pipes no other child inherits.
        .target(
            name: "ProcessTestSupport",
            path: "Tests/ProcessTestSupport",
            swiftSettings: swiftSettings
        ),
        /// Runs the transports against real peers on loopback (an aiosmtpd relay, a push service in Python that
        /// decrypts with http_ece, and an APNs that speaks HTTP/2 over TLS with a certificate of the test's own
        /// authority, all started by the tests).
        .testTarget(
            name: "VicinityTransportsTests",
            dependencies: [
                "MailTestSupport",
                "TLSTestSupport",
                "VicinityCore",
                "VicinityTransports",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        /// Real peers on loopback, started per test: a mail relay (aiosmtpd) for the tests of what mails, and a
        /// push service with the browser behind it (Python, decrypting with http_ece) for the tests of what pushes.
        .target(
            name: "MailTestSupport",
            dependencies: ["ProcessTestSupport"],
            path: "Tests/MailTestSupport",
            exclude: ["smtp_server.py", "push_service.py"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "VicinityHTTPTests",
            dependencies: [
                "GeoCore",
                "GeoTestSupport",
                "MailTestSupport",
                "TLSTestSupport",
                "VicinityTransports",
                "VicinityBcrypt",
                "VicinityCore",
                "VicinityHTTP",
                "VicinityImport",
                "VicinityPostGIS",
                "VicinitySQL",
                "VicinitySpatiaLite",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
