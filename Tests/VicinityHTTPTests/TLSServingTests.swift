import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import Testing
import TLSTestSupport
import VicinityCore
@testable import VicinityHTTP

/// The service over TLS on a real socket, asked by async-http-client clients that trust only the test's own
/// authority: both HTTP versions, what old clients get, certificates reloaded under open connections, and the
/// plain-HTTP listener that redirects to it.
///
/// Every bound on waiting here only keeps a broken server from holding the suite; no assertion measures how fast
/// anything was.
@Suite("Serving over TLS", .enabled(if: TestAuthority.available, "no openssl: run Scripts/setup.sh"))
struct TLSServingTests {
    /// Where a server under test listens.
    struct Ports: Sendable {
        var tls: Int
        var redirect: Int?
    }

    /// A root authority, an intermediate under it and a server certificate from the intermediate: the
    /// certificate file holds the server's certificate and the intermediate, and clients trust the root only.
    struct Issuer: Sendable {
        let root: TestAuthority
        let server: TestAuthority.Issued

        static func make(_ name: String) async throws -> Issuer {
            let root = try await TestAuthority.make(name: "\(name) root")
            let intermediate = try await root.intermediate(name: "\(name) intermediate")
            return Issuer(root: root, server: try await intermediate.issue(commonName: "\(name) server"))
        }

        /// Serving its server certificate, chain included.
        func tlsOptions() throws -> TLSOptions {
            TLSOptions(certificates: try TLSCertificates(files: TLSFiles(certificate: server.certificateFile, key: server.keyFile)))
        }
    }

    /// Runs the application over TLS on free ports for `body`, and stops it after.
    static func withServer(
        _ tls: TLSOptions, options: HTTPOptions = .standard, logs: LogRecorder = LogRecorder(),
        _ body: @Sendable (Ports) async throws -> Void
    ) async throws {
        var options = options
        options.tls = tls
        let (announcements, announce) = AsyncStream<(redirect: Bool, port: Int)>.makeStream()
        let app = buildApplication(
            services: services(try await store(csulbRows)), options: options, port: 0, metrics: sharedRegistry,
            logger: logs.logger,
            onListening: { _, port in announce.yield((false, port)) },
            onRedirectListening: { _, port in announce.yield((true, port)) })
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await app.runService(gracefulShutdownSignals: []) }
            var listening = announcements.makeAsyncIterator()
            var tlsPort: Int?, redirectPort: Int?
            while tlsPort == nil || (tls.redirectPort != nil && redirectPort == nil) {
                let next = try #require(await listening.next())
                if next.redirect { redirectPort = next.port } else { tlsPort = next.port }
            }
            do { try await body(Ports(tls: try #require(tlsPort), redirect: redirectPort)) } catch {
                group.cancelAll()
                throw error
            }
            group.cancelAll()
        }
    }

    /// The standard options with the total connection cap at `total`, and room for every connection of a test's
    /// one client address under the per-client cap.
    static func capped(at total: Int) -> HTTPOptions {
        var options = HTTPOptions.standard
        options.maximumConnections = total
        options.maximumConnectionsPerClient = 10
        return options
    }

    /// A client that trusts `authority` alone (none: a plain-HTTP client) and follows no redirect unless asked.
    static func client(
        trusting authority: TestAuthority?, version: HTTPClient.Configuration.HTTPVersion = .automatic,
        newestTLS: TLSVersion? = nil, followRedirects: Bool = false
    ) -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let authority { tls.trustRoots = .file(authority.certificateFile) }
        if let newestTLS {
            tls.minimumTLSVersion = .tlsv1
            tls.maximumTLSVersion = newestTLS
        }
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls,
            redirectConfiguration: followRedirects ? .follow(max: 2, allowCycles: false) : .disallow)
        configuration.httpVersion = version
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Runs `body` with the client, then shuts it down whatever happened.
    static func using<Value: Sendable>(_ client: HTTPClient, _ body: (HTTPClient) async throws -> Value) async throws -> Value {
        do {
            let value = try await body(client)
            try await client.shutdown()
            return value
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    struct Answer: Sendable {
        var status: HTTPResponseStatus
        var version: HTTPVersion
        var headers: HTTPHeaders
        var body: String
    }

    static func get(_ url: String, with client: HTTPClient, method: HTTPMethod = .GET, headers: HTTPHeaders = [:], body: ByteBuffer? = nil) async throws -> Answer {
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.headers = headers
        if let body { request.body = .bytes(body) }
        let response = try await client.execute(request, timeout: .seconds(60))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return Answer(status: response.status, version: response.version, headers: response.headers, body: String(buffer: bytes))
    }

    /// The certificate files copied into a folder of their own, where a test replaces them as an operator would.
    final class LiveFiles: Sendable {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vicinity-live-tls-\(UUID().uuidString)")
        var files: TLSFiles {
            TLSFiles(certificate: folder.appendingPathComponent("cert.pem").path, key: folder.appendingPathComponent("key.pem").path)
        }

        init(_ issued: TestAuthority.Issued) throws {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try install(issued)
        }

        deinit { try? FileManager.default.removeItem(at: folder) }

        func install(_ issued: TestAuthority.Issued) throws {
            try install(certificate: try Data(contentsOf: URL(fileURLWithPath: issued.certificateFile)),
                        key: try Data(contentsOf: URL(fileURLWithPath: issued.keyFile)))
        }

        func install(certificate: Data, key: Data) throws {
            try certificate.write(to: URL(fileURLWithPath: files.certificate), options: .atomic)
            try key.write(to: URL(fileURLWithPath: files.key), options: .atomic)
        }
    }

    @Test("HTTP/1.1 and HTTP/2 clients are both answered over TLS, each answer with Strict-Transport-Security for two years")
    func bothVersions() async throws {
        let issuer = try await Issuer.make("versions")
        let tls = try issuer.tlsOptions()
        try await Self.withServer(tls) { ports in
            for (version, expected) in [(HTTPClient.Configuration.HTTPVersion.http1Only, HTTPVersion.http1_1), (.automatic, .http2)] {
                try await Self.using(Self.client(trusting: issuer.root, version: version)) { client in
                    let health = try await Self.get("https://127.0.0.1:\(ports.tls)/health", with: client)
                    #expect(health.status == .ok)
                    #expect(health.version == expected)
                    #expect(health.body == #"{"places":6,"status":"ok"}"#)
                    #expect(health.headers["Strict-Transport-Security"] == ["max-age=63072000"])

                    let distance = try await Self.get(
                        "https://127.0.0.1:\(ports.tls)/v1/distance?from=33.779842,-118.112526&to=13.746549,100.492766", with: client)
                    #expect(distance.status == .ok)
                    #expect(distance.body.contains(#""method":"haversine""#))

                    // Problems too: every answer of a TLS listener carries the field.
                    let missing = try await Self.get("https://127.0.0.1:\(ports.tls)/v1/places/no-such-place", with: client)
                    #expect(missing.status == .notFound)
                    #expect(missing.headers["Strict-Transport-Security"] == ["max-age=63072000"])

                    // A body too large is answered with Connection: close over HTTP/1.1; HTTP/2 forbids that field,
                    // and the answer must still arrive rather than the stream being reset.
                    let large = try await Self.get(
                        "https://127.0.0.1:\(ports.tls)/v1/users", with: client, method: .POST,
                        headers: ["Content-Type": "application/json"], body: ByteBuffer(repeating: 0x78, count: 64 * 1024 + 1))
                    #expect(large.status == .payloadTooLarge, "\(expected)")
                    #expect(large.headers["Connection"] == (expected == .http2 ? [] : ["close"]))
                }
            }
        }
    }

    @Test("at the connection cap an idle HTTP/2 connection makes room for a new one, as an idle HTTP/1.1 connection does")
    func idleHTTP2MakesRoom() async throws {
        let issuer = try await Issuer.make("room")
        let tls = try issuer.tlsOptions()
        let options = Self.capped(at: 2)
        try await Self.withServer(tls, options: options) { ports in
            let url = "https://127.0.0.1:\(ports.tls)/health"
            try await Self.using(Self.client(trusting: issuer.root, version: .automatic)) { first in
                try await Self.using(Self.client(trusting: issuer.root, version: .automatic)) { second in
                    // Two HTTP/2 connections, each answered and then kept idle by its client's pool: the server is full.
                    #expect(try await Self.get(url, with: first).version == .http2)
                    #expect(try await Self.get(url, with: second).version == .http2)
                    let before = EvictionTests.metric(EvictionTests.evictedWaiting)
                    let third = try await Self.using(Self.client(trusting: issuer.root, version: .http1Only)) { third in
                        try await Self.get(url, with: third).status
                    }
                    #expect(third == .ok)
                    #expect(EvictionTests.metric(EvictionTests.evictedWaiting) >= before + 1, "an idle HTTP/2 connection was closed")
                    // The client whose connection was closed connects again and is answered.
                    #expect(try await Self.get(url, with: first).status == .ok)
                    #expect(try await Self.get(url, with: second).status == .ok)
                }
            }
        }
    }

    @Test("at the connection cap an HTTP/2 connection holding an event stream stays, and the idle one makes room")
    func busyHTTP2Stays() async throws {
        let issuer = try await Issuer.make("busy")
        let tls = try issuer.tlsOptions()
        let options = Self.capped(at: 2)
        try await Self.withServer(tls, options: options) { ports in
            let base = "https://127.0.0.1:\(ports.tls)"
            try await Self.using(Self.client(trusting: issuer.root, version: .automatic)) { listener in
                try await Self.using(Self.client(trusting: issuer.root, version: .automatic)) { idler in
                    let listening = try await Self.signUp("listener", at: base, with: listener)
                    let poking = try await Self.signUp("idler", at: base, with: idler)
                    // The older connection holds an event stream; the newer one is answered, then idle: the server is full.
                    var events = HTTPClientRequest(url: "\(base)/v1/events")
                    events.headers.add(name: "Authorization", value: "Bearer \(listening.token)")
                    let stream = try await listener.execute(events, timeout: .seconds(60))
                    #expect(stream.version == .http2)
                    var received = stream.body.makeAsyncIterator()
                    var text = ""
                    while !text.contains(": connected"), let chunk = try await received.next() { text += String(buffer: chunk) }
                    #expect(try await Self.get("\(base)/health", with: idler).version == .http2)

                    let before = EvictionTests.metric(EvictionTests.evictedWaiting)
                    let newcomer = try await Self.using(Self.client(trusting: issuer.root, version: .http1Only)) { newcomer in
                        try await Self.get("\(base)/health", with: newcomer).status
                    }
                    #expect(newcomer == .ok)
                    #expect(EvictionTests.metric(EvictionTests.evictedWaiting) >= before + 1, "the idle HTTP/2 connection was closed")

                    // The stream is still open: a friend request sent now arrives on it.
                    var ask = HTTPHeaders()
                    ask.add(name: "Authorization", value: "Bearer \(poking.token)")
                    ask.add(name: "Content-Type", value: "application/json")
                    let asked = try await Self.get(
                        "\(base)/v1/friend-requests", with: idler, method: .POST, headers: ask,
                        body: ByteBuffer(string: #"{"to":"\#(listening.id)"}"#))
                    #expect(asked.status == .created, "\(asked.body)")
                    while !text.contains("event: friend_request"), let chunk = try await received.next() { text += String(buffer: chunk) }
                    #expect(text.contains("event: friend_request"), "the stream ended instead: \(text)")
                }
            }
        }
    }

    /// A new account signed in over `client`: its id and bearer token.
    static func signUp(_ username: String, at base: String, with client: HTTPClient) async throws -> (id: String, token: String) {
        var json = HTTPHeaders()
        json.add(name: "Content-Type", value: "application/json")
        let created = try await get(
            "\(base)/v1/users", with: client, method: .POST, headers: json,
            body: ByteBuffer(string: #"{"username":"\#(username)","password":"correct horse battery","first_name":"Ada","last_name":"Byron"}"#))
        #expect(created.status == .created, "\(created.body)")
        let session = try await get(
            "\(base)/v1/sessions", with: client, method: .POST, headers: json,
            body: ByteBuffer(string: #"{"username":"\#(username)","password":"correct horse battery"}"#))
        let id = try #require(created.body.firstMatch(of: /"id":"([a-z0-9]{20})"/)?.1)
        let token = try #require(session.body.firstMatch(of: /"token":"([A-Za-z0-9_-]{43})"/)?.1)
        return (String(id), String(token))
    }

    @Test("at the connection cap a TLS connection still in its handshake makes room for a newcomer")
    func silentHandshakeMakesRoom() async throws {
        let issuer = try await Issuer.make("silent")
        let tls = try issuer.tlsOptions()
        var options = Self.capped(at: 1)
        // Far longer than the client waits: only making room can let the newcomer in.
        options.requestTimeout = .seconds(120)
        try await Self.withServer(tls, options: options) { ports in
            // A connection that sends nothing holds the only place.
            let silent = try await RawConnection.open(port: ports.tls)
            let served: HTTPResponseStatus
            do {
                served = try await Self.using(Self.client(trusting: issuer.root, version: .http1Only)) { client in
                    try await Self.get("https://127.0.0.1:\(ports.tls)/health", with: client).status
                }
            } catch {
                // The server's stop waits for its connections: a silent one left open would hold the test.
                await silent.close()
                throw error
            }
            #expect(served == .ok)
            #expect(try await silent.readUntilClosed(within: .seconds(60)).isEmpty, "the silent connection was closed, with nothing said")
        }
    }

    @Test("a TLS connection that never finishes its handshake is closed at the request deadline")
    func silentHandshakeEnds() async throws {
        let issuer = try await Issuer.make("deadline")
        let tls = try issuer.tlsOptions()
        var options = HTTPOptions.standard
        options.requestTimeout = .seconds(2)
        try await Self.withServer(tls, options: options) { ports in
            let silent = try await RawConnection.open(port: ports.tls)
            #expect(try await silent.readUntilClosed(within: .seconds(60)).isEmpty)
        }
    }

    @Test("plain HTTP answers carry no Strict-Transport-Security")
    func plainHasNoHSTS() async throws {
        try await withApp(try await store(csulbRows)) { client in
            let health = try await client.execute(uri: "/health", method: .get)
            #expect(health.status == .ok)
            #expect(health.headers[.strictTransportSecurity] == nil)
        }
    }

    @Test("a client that speaks no TLS newer than 1.1 is refused in the handshake; the same client allowing 1.2 is answered")
    func oldTLSRefused() async throws {
        let issuer = try await Issuer.make("old-tls")
        let tls = try issuer.tlsOptions()
        try await Self.withServer(tls) { ports in
            let refusal = try await Self.using(Self.client(trusting: issuer.root, version: .http1Only, newestTLS: .tlsv11)) { client in
                let error = await #expect(throws: (any Error).self) {
                    _ = try await Self.get("https://127.0.0.1:\(ports.tls)/health", with: client)
                }
                return error.map { String(describing: $0) } ?? ""
            }
            // The server's alert names the version: "unsupported protocol" from BoringSSL's side.
            #expect(refusal.uppercased().contains("PROTOCOL"), "\(refusal)")
            let served = try await Self.using(Self.client(trusting: issuer.root, version: .http1Only, newestTLS: .tlsv12)) { client in
                try await Self.get("https://127.0.0.1:\(ports.tls)/health", with: client)
            }
            #expect(served.status == .ok)
        }
    }

    @Test("a reload serves the new certificate to new connections while connections opened before go on with the old one")
    func reloadUnderOpenConnections() async throws {
        let (before, after) = (try await Issuer.make("before"), try await Issuer.make("after"))
        let live = try LiveFiles(before.server)
        let certificates = try TLSCertificates(files: live.files)
        let logs = LogRecorder()
        try await Self.withServer(TLSOptions(certificates: certificates), logs: logs) { ports in
            let url = "https://127.0.0.1:\(ports.tls)/health"
            // One connection of each version, open before the reload, each held by its client's pool.
            let http1 = Self.client(trusting: before.root, version: .http1Only)
            let http2 = Self.client(trusting: before.root, version: .automatic)
            try await Self.using(http1) { http1 in
                try await Self.using(http2) { http2 in
                    #expect(try await Self.get(url, with: http1).version == .http1_1)
                    #expect(try await Self.get(url, with: http2).version == .http2)
                    let old = certificates.current.fingerprint

                    try live.install(after.server)
                    let reloaded = try await certificates.reload(logger: logs.logger).get()
                    #expect(reloaded.fingerprint != old)
                    #expect(certificates.current.fingerprint == reloaded.fingerprint)
                    #expect(logs.records.contains { $0.level == .notice && $0.message.hasPrefix("TLS certificate reloaded") })

                    // A new connection is served the new certificate: only a client trusting its authority gets in.
                    let fresh = try await Self.using(Self.client(trusting: after.root)) { client in try await Self.get(url, with: client) }
                    #expect(fresh.status == .ok)
                    await #expect(throws: (any Error).self) {
                        try await Self.using(Self.client(trusting: before.root)) { client in _ = try await Self.get(url, with: client) }
                    }
                    // The connections opened before still answer: a new one would meet the new certificate, which
                    // these clients do not trust.
                    #expect(try await Self.get(url, with: http1).status == .ok)
                    #expect(try await Self.get(url, with: http2).status == .ok)
                }
            }
        }
    }

    @Test("files that cannot be served leave the current certificate in place, and the log says why")
    func badReloadKeepsCurrent() async throws {
        let (first, other) = (try await Issuer.make("kept"), try await Issuer.make("other"))
        let live = try LiveFiles(first.server)
        let certificates = try TLSCertificates(files: live.files)
        let served = certificates.current.fingerprint
        let logs = LogRecorder()
        let otherKey = try Data(contentsOf: URL(fileURLWithPath: other.server.keyFile))
        let firstCertificate = try Data(contentsOf: URL(fileURLWithPath: first.server.certificateFile))
        try await Self.withServer(TLSOptions(certificates: certificates), logs: logs) { ports in
            for (certificate, key, file, words) in [
                (firstCertificate, otherKey, TLSFileProblem.File.key, "does not match the first certificate in"),
                (Data("not a certificate\n".utf8), otherKey, .certificate, "holds no PEM certificate"),
                (firstCertificate, Data("not a key\n".utf8), .key, "holds no unencrypted PEM private key"),
            ] {
                try live.install(certificate: certificate, key: key)
                let outcome = await certificates.reload(logger: logs.logger)
                guard case .failure(let problem) = outcome else {
                    Issue.record("files refused as \(words) were served")
                    continue
                }
                #expect(problem.file == file)
                #expect(problem.description.contains(words), "\(problem)")
                #expect(certificates.current.fingerprint == served)
                #expect(logs.records.contains { $0.level == .error && $0.metadata["problem"]?.contains(words) == true })
            }
            try FileManager.default.removeItem(atPath: live.files.certificate)
            guard case .failure(let missing) = await certificates.reload(logger: logs.logger) else {
                Issue.record("a missing certificate file was served")
                return
            }
            #expect(missing.description.hasPrefix("names no file: "))
            let health = try await Self.using(Self.client(trusting: first.root)) { client in
                try await Self.get("https://127.0.0.1:\(ports.tls)/health", with: client)
            }
            #expect(health.status == .ok)
        }
    }

    @Test("a request whose body does not arrive in full is answered 408 at the deadline, over HTTP/1.1 and HTTP/2 alike")
    func requestDeadlineOverTLS() async throws {
        let issuer = try await Issuer.make("deadline")
        let tls = try issuer.tlsOptions()
        // Short, so that the test waits a fraction of a second for it; nothing here must happen within it.
        let options = HTTPOptions(requestTimeout: .milliseconds(400))
        try await Self.withServer(tls, options: options) { ports in
            for version in [HTTPClient.Configuration.HTTPVersion.http1Only, .automatic] {
                try await Self.using(Self.client(trusting: issuer.root, version: version)) { client in
                    var request = HTTPClientRequest(url: "https://127.0.0.1:\(ports.tls)/v1/users")
                    request.method = .POST
                    request.headers = ["Content-Type": "application/json"]
                    // A body announced as 200 bytes of which one comes, and the rest never.
                    let (chunks, writer) = AsyncStream<ByteBuffer>.makeStream()
                    writer.yield(ByteBuffer(string: "{"))
                    request.body = .stream(chunks, length: .known(Int64(200)))
                    let response = try await client.execute(request, timeout: .seconds(60))
                    #expect(response.status == .requestTimeout, "\(version)")
                    writer.finish()
                }
            }
        }
    }

    @Test("the redirect listener answers any request 308 to the same path and query over HTTPS, on the host asked for and the TLS port")
    func redirects() async throws {
        let issuer = try await Issuer.make("redirect")
        let tls = TLSOptions(
            certificates: try TLSCertificates(files: TLSFiles(certificate: issuer.server.certificateFile, key: issuer.server.keyFile)),
            redirectPort: 0)
        try await Self.withServer(tls) { ports in
            let plain = try #require(ports.redirect)
            let target = "/v1/distance?from=33.779842,-118.112526&to=13.746549,100.492766"
            try await Self.using(Self.client(trusting: nil)) { client in
                let answer = try await Self.get("http://127.0.0.1:\(plain)\(target)", with: client)
                #expect(answer.status == .permanentRedirect)
                #expect(answer.headers["Location"] == ["https://127.0.0.1:\(ports.tls)\(target)"])
                // Browsers ignore the field over plain HTTP; it is not sent there.
                #expect(answer.headers["Strict-Transport-Security"].isEmpty)

                // The host the client asked for, its port replaced by the TLS listener's; any method.
                let named = try await Self.get(
                    "http://127.0.0.1:\(plain)/v1/users", with: client, method: .POST, headers: ["Host": "Campus.Example.EDU:80"],
                    body: ByteBuffer(string: "{}"))
                #expect(named.status == .permanentRedirect)
                #expect(named.headers["Location"] == ["https://campus.example.edu:\(ports.tls)/v1/users"])
                let literal = try await Self.get("http://127.0.0.1:\(plain)/", with: client, headers: ["Host": "[::1]:8080"])
                #expect(literal.headers["Location"] == ["https://[::1]:\(ports.tls)/"])
            }
            // A browser's way: follow the redirect, and be answered over TLS.
            let followed = try await Self.using(Self.client(trusting: issuer.root, followRedirects: true)) { client in
                try await Self.get("http://127.0.0.1:\(plain)/health", with: client)
            }
            #expect(followed.status == .ok)
            #expect(followed.body == #"{"places":6,"status":"ok"}"#)

            // Nothing but a host and port in Host: no redirect elsewhere.
            for host in ["evil.example/x", "user@evil.example", "evil.example:80@other", "a b", "evil.example:http", "[evil]", ""] {
                let connection = try await RawConnection.open(port: plain)
                try await connection.send("GET / HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n")
                let answer = try await connection.readUntilClosed(within: .seconds(60))
                #expect(!answer.contains("Location:"), "Host \(host): \(answer)")
                #expect(answer.isEmpty || answer.hasPrefix("HTTP/1.1 400"), "Host \(host): \(answer)")
            }
            // A target in absolute form names a host of its own: the redirect still goes to the one in Host.
            let connection = try await RawConnection.open(port: plain)
            try await connection.send("GET http://evil.example/x HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            let absolute = try await connection.readUntilClosed(within: .seconds(60))
            #expect(!absolute.contains("evil.example"), "\(absolute)")
        }
    }

    @Test("a Host field is read as a host name, an IPv4 address or an IPv6 literal, without its port")
    func hostField() {
        for (field, host) in [
            ("campus.example.edu", "campus.example.edu"), ("Campus.Example.EDU:8080", "campus.example.edu"),
            ("campus.example.edu.", "campus.example.edu."), ("127.0.0.1:80", "127.0.0.1"), ("[2001:db8::1]:443", "[2001:db8::1]"),
            ("localhost:", "localhost"),
        ] {
            #expect(HTTPSRedirectResponder.host(of: field) == host, "\(field)")
        }
        for field in ["", ":80", "a..b", "evil/x", "user@host", "host:80:80", "host:123456", "[::1", "[g::1]", "[::1]x",
                      String(repeating: "a", count: 64) + ".example", "ex ample", "ex%61mple"] {
            #expect(HTTPSRedirectResponder.host(of: field) == nil, "\(field)")
        }
    }
}
