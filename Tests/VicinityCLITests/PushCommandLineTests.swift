import Foundation
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("Push keys on the command line", .enabled(if: CLI.executable != nil, "the vicinity binary is not built"))
struct PushCommandLineTests {
    @Test("push keygen writes a private key only its owner reads, never over another, and serve gives its public half to browsers")
    func keygenAndServe() async throws {
        let scratch = try Scratch()
        let key = scratch.folder.appendingPathComponent("vapid.pem").path
        let made = try await CLI.run(["push", "keygen", key])
        #expect(made.status == 0, "\(made.errors)")
        let publicKey = try #require(made.output.split(separator: "\n").first { $0.hasPrefix("public key") }?.split(separator: " ").last.map(String.init))
        let mode = try FileManager.default.attributesOfItem(atPath: key)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try String(contentsOfFile: key, encoding: .utf8).hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let again = try await CLI.run(["push", "keygen", key])
        #expect(again.status != 0 && again.errors.contains("File exists"), "a key is never overwritten: \(again.errors)")

        let server = try CLI.makeProcess([
            "serve", "--port", "0", "--db", scratch.database, "--log-level", "warning",
            "--vapid-key", key, "--vapid-subject", "mailto:operators@campus.example.edu",
        ])
        defer { if server.isRunning { server.terminate() } }
        let line = try await CLI.startUpLine(of: server)
        let address = try #require(line.split(separator: " ").dropFirst(2).first.map(String.init))
        let (body, response) = try await URLSession.shared.data(from: try #require(URL(string: "\(address)/v1/push/vapid-public-key")))
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(decoding: body, as: UTF8.self) == #"{"key":"\#(publicKey)"}"#)
        server.terminate()
        server.waitUntilExit()
        #expect(server.terminationStatus == 0)
    }

    @Test("serve refuses push settings that cannot work, naming the flag (status 64)")
    func refusals() async throws {
        let scratch = try Scratch()
        let garbage = try scratch.file("garbage.pem", "not a key")
        let key = scratch.folder.appendingPathComponent("vapid.pem").path
        #expect(try await CLI.run(["push", "keygen", key]).status == 0)
        for (arguments, message) in [
            (["--vapid-key", key], "--vapid-key (or VICINITY_VAPID_KEY) needs --vapid-subject, which is not given"),
            (["--vapid-subject", "mailto:ops@example.edu"], "--vapid-subject (or VICINITY_VAPID_SUBJECT) goes with --vapid-key, which is not given"),
            (["--vapid-key", garbage, "--vapid-subject", "mailto:ops@example.edu"], "--vapid-key (or VICINITY_VAPID_KEY)"),
            (["--vapid-key", key, "--vapid-subject", "ops@example.edu"], "--vapid-subject (or VICINITY_VAPID_SUBJECT)"),
            (["--apns-key", key], "--apns-key (or VICINITY_APNS_KEY) needs --apns-key-id, which is not given"),
            (["--apns-key", key, "--apns-key-id", "ABC123DEFG"], "--apns-key (or VICINITY_APNS_KEY) needs --apns-team-id, which is not given"),
            (["--apns-key-id", "ABC123DEFG"], "--apns-key-id (or VICINITY_APNS_KEY_ID) goes with --apns-key, which is not given"),
            (["--apns-key", key, "--apns-key-id", "short", "--apns-team-id", "TEAM456XYZ"], "--apns-key-id (or VICINITY_APNS_KEY_ID)"),
            (["--apns-key", key, "--apns-key-id", "ABC123DEFG", "--apns-team-id", "TEAM456XYZ", "--apns-environment", "staging"],
             "--apns-environment (or VICINITY_APNS_ENVIRONMENT) must be production or sandbox, not \"staging\""),
        ] {
            let outcome = try await CLI.run(["serve", "--port", "0", "--db", scratch.database] + arguments)
            #expect(outcome.status == 64, "\(arguments): \(outcome.errors)")
            #expect(outcome.errors.contains(message), "\(arguments): \(outcome.errors)")
        }
    }
}
