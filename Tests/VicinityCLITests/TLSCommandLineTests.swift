import Foundation
import ProcessTestSupport
import TLSTestSupport
import Testing

/// `vicinity serve` over TLS as an operator runs it: refused files, the start-up line, and SIGHUP. The clients are
/// openssl's own (`s_client`), which show the certificate a connection was served and keep a connection open
/// across a reload.
@Suite("The vicinity command line over TLS", .enabled(if: TestAuthority.available, "no openssl: run Scripts/setup.sh"))
struct TLSCommandLineTests {
    @Test("serve refuses TLS files that are missing, unreadable, not PEM or a key for another certificate, either file without the other, and a redirect without TLS (status 64)")
    func badTLSOptions() async throws {
        let scratch = try Scratch()
        let authority = try await TestAuthority.make(name: "refusals")
        let (server, other) = (try await authority.issue(commonName: "server"), try await authority.issue(commonName: "other"))
        let text = try scratch.file("text.pem", "not a certificate\n")
        for (arguments, message) in [
            (["--tls-cert", server.certificateFile], "--tls-cert (or VICINITY_TLS_CERT) needs --tls-key, which is not given"),
            (["--tls-key", server.keyFile], "--tls-key (or VICINITY_TLS_KEY) goes with --tls-cert, which is not given"),
            (["--tls-redirect-port", "0"], "--tls-redirect-port (or VICINITY_TLS_REDIRECT_PORT) goes with --tls-cert, which is not given"),
            (["--tls-cert", "/nonexistent/cert.pem", "--tls-key", server.keyFile], "--tls-cert (or VICINITY_TLS_CERT) names no file: /nonexistent/cert.pem"),
            (["--tls-cert", server.certificateFile, "--tls-key", scratch.folder.path],
             "--tls-key (or VICINITY_TLS_KEY) names a file that cannot be read: \(scratch.folder.path)"),
            (["--tls-cert", text, "--tls-key", server.keyFile], "--tls-cert (or VICINITY_TLS_CERT) holds no PEM certificate"),
            (["--tls-cert", server.certificateFile, "--tls-key", text], "--tls-key (or VICINITY_TLS_KEY) holds no unencrypted PEM private key"),
            (["--tls-cert", server.certificateFile, "--tls-key", other.keyFile],
             "--tls-key (or VICINITY_TLS_KEY) does not match the first certificate in \(server.certificateFile)"),
            (["--tls-cert", server.certificateFile, "--tls-key", server.keyFile, "--tls-redirect-port", "70000"],
             "--tls-redirect-port (or VICINITY_TLS_REDIRECT_PORT) must be in 0...65535, not 70000"),
        ] {
            let outcome = try await CLI.run(["serve", "--port", "0", "--db", scratch.database] + arguments)
            #expect(outcome.status == 64, "\(arguments)")
            #expect(outcome.errors.contains(message), "\(outcome.errors)")
            #expect(outcome.errors.split(separator: "\n").first?.hasPrefix("Error: ") == true, "\(outcome.errors)")
        }
        let same = try await CLI.run([
            "serve", "--port", "8443", "--tls-cert", server.certificateFile, "--tls-key", server.keyFile, "--tls-redirect-port", "8443",
            "--db", scratch.database,
        ])
        #expect(same.status == 64)
        #expect(same.errors.contains("--tls-redirect-port (or VICINITY_TLS_REDIRECT_PORT) must differ from --port, 8443"), "\(same.errors)")
        #expect(scratch.contents == ["text.pem"], "a refused command opens no database")
    }

    @Test("serve over TLS says https, and SIGHUP serves new connections the new certificate while an open connection goes on; bad files are logged and the last good ones kept",
          .timeLimit(.minutes(2)))
    func reloadOnSIGHUP() async throws {
        let scratch = try Scratch()
        #expect(try await CLI.run(["import", "places", CLI.path("Data/bangkok-temples.csv"), "--db", scratch.database]).status == 0)
        let (before, after) = (try await TestAuthority.make(name: "before"), try await TestAuthority.make(name: "after"))
        let (first, second) = (try await before.issue(commonName: "first-server"), try await after.issue(commonName: "second-server"))
        let certificate = scratch.folder.appendingPathComponent("cert.pem"), key = scratch.folder.appendingPathComponent("key.pem")
        /// Puts the files in place as an operator's renewal does: each written whole, then renamed over the old.
        func install(_ issued: TestAuthority.Issued) throws {
            try Data(contentsOf: URL(fileURLWithPath: issued.certificateFile)).write(to: certificate, options: .atomic)
            try Data(contentsOf: URL(fileURLWithPath: issued.keyFile)).write(to: key, options: .atomic)
        }
        try install(first)

        let server = try CLI.makeProcess([
            "serve", "--port", "0", "--db", scratch.database, "--log-level", "notice",
            "--tls-cert", certificate.path, "--tls-key", key.path,
        ])
        let log = ChildProcesses.pipe()
        defer { if server.isRunning { server.terminate() } }
        let line = try await CLI.startUpLine(of: server, errors: log.fileHandleForWriting)
        #expect(line.hasPrefix("Vicinity serving https://127.0.0.1:"), "\(line)")
        let address = try #require(line.split(separator: " ").dropFirst(2).first.map(String.init))
        let port = try #require(URL(string: address)?.port)

        #expect(try await SClient.served(port: port, trusting: before.certificateFile) == "first-server")

        // A connection opened before the reload, kept open by openssl across it.
        let open = try SClient(port: port, trusting: before.certificateFile)
        defer { open.close() }
        #expect(try await open.ask("/health").contains(#"{"places":15,"status":"ok"}"#))

        try install(second)
        kill(server.processIdentifier, SIGHUP)
        let reloaded = try await CLI.offThePool { try CLI.line(from: log.fileHandleForReading, where: { $0.contains("TLS certificate reloaded") }) }
        #expect(reloaded.contains("sha256="), "\(reloaded)")

        #expect(try await SClient.served(port: port, trusting: after.certificateFile) == "second-server")
        #expect(try await SClient.served(port: port, trusting: before.certificateFile) == nil, "a new connection is served the new certificate")
        #expect(try await open.ask("/health").contains(#"{"places":15,"status":"ok"}"#), "the open connection still answers")

        // A key for another certificate: refused, logged, and the second certificate still served.
        try Data(contentsOf: URL(fileURLWithPath: first.keyFile)).write(to: key, options: .atomic)
        kill(server.processIdentifier, SIGHUP)
        let refused = try await CLI.offThePool { try CLI.line(from: log.fileHandleForReading, where: { $0.contains("TLS certificate not reloaded") }) }
        #expect(refused.contains("does not match"), "\(refused)")
        #expect(try await SClient.served(port: port, trusting: after.certificateFile) == "second-server")

        server.terminate()
        server.waitUntilExit()
        #expect(server.terminationStatus == 0)
    }
}

/// openssl's TLS client against the server on loopback.
final class SClient: Sendable {
    private let process: Process
    private let input: FileHandle
    private let output: FileHandle

    /// The common name of the certificate a new connection is served, when it chains to `authority`; nil when the
    /// handshake fails its check.
    static func served(port: Int, trusting authority: String) async throws -> String? {
        let outcome = try await CLI.offThePool { () -> (Int32, String) in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [
                "openssl", "s_client", "-connect", "127.0.0.1:\(port)", "-CAfile", authority, "-verify_return_error",
                "-verify_ip", "127.0.0.1",
            ]
            let output = ChildProcesses.pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            try ChildProcesses.launch(process)
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (process.terminationStatus, text)
        }
        guard outcome.0 == 0 else { return nil }
        // "subject=CN = first-server", as OpenSSL 3 writes it.
        return outcome.1.split(separator: "\n").first { $0.hasPrefix("subject=") }
            .flatMap { $0.split(separator: "=").last }.map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// A connection held open: requests written to openssl, answers read from it.
    init(port: Int, trusting authority: String) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "openssl", "s_client", "-quiet", "-nocommands", "-connect", "127.0.0.1:\(port)", "-CAfile", authority,
            "-verify_return_error", "-verify_ip", "127.0.0.1",
        ]
        let input = ChildProcesses.pipe(), output = ChildProcesses.pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try ChildProcesses.launch(process)
        self.input = input.fileHandleForWriting
        self.output = output.fileHandleForReading
    }

    /// Sends a GET on the open connection and reads its answer, to the end of a JSON body.
    func ask(_ path: String) async throws -> String {
        input.write(Data("GET \(path) HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8))
        let output = output
        return try await CLI.offThePool {
            var answer = Data()
            while !String(decoding: answer, as: UTF8.self).hasSuffix("}") {
                guard let byte = try output.read(upToCount: 1), !byte.isEmpty else { throw CLI.Ended() }
                answer.append(byte)
            }
            return String(decoding: answer, as: UTF8.self)
        }
    }

    func close() {
        if process.isRunning { process.terminate() }
    }
}
