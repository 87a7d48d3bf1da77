import Foundation
import MailTestSupport
import Testing

/// What the push service tests need on the machine: python3 with http_ece and cryptography (`Scripts/setup.sh`).
enum PushTools {
    static let available: Bool = RelayTools.run(["python3", "-c", "import http_ece, cryptography"])
    static let howToInstall: Comment = "no python3 with http_ece and cryptography: run Scripts/setup.sh (or pip install http-ece)"
}

/// A push service and the browser behind it on loopback: `push_service.py` started for one test on a port the
/// system picks. It makes the subscription (its private key stays in Python), checks each push's VAPID token and
/// decrypts its body with http_ece, and writes down every request it got.
final class TestPushService: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// How it answers every push.
    enum Answer: Sendable {
        /// Checks the push as a push service and a browser would: 201 when all holds, else 400.
        case accept
        /// This status, with these header lines, unchecked.
        case status(Int, headers: [String] = [])
    }

    /// What the service and its browser made of one request.
    struct Received: Decodable {
        var path: String
        var headers: [String: String]
        var length: Int
        var problems: [String]
        var claims: Claims?
        var k: String?
        /// Base64, as decrypted by http_ece; nil when it did not decrypt or was not tried.
        var plaintext: String?

        struct Claims: Decodable, Equatable {
            var aud: String
            var exp: Int
            var sub: String
        }

        var plaintextBytes: [UInt8]? { plaintext.flatMap { Data(base64Encoded: $0) }.map(Array.init) }
    }

    private struct Ready: Decodable {
        var port: Int
        var p256dh: String
        var auth: String
    }

    /// How long the service may take to start: Python starts in well under a second, even on a busy machine.
    static let patience = Duration.seconds(20)

    let port: Int
    /// The subscription's public key and auth secret, as a browser hands them to the page.
    let p256dh: String
    let auth: String
    let folder: URL
    private let process: PeerProcess

    init(answer: Answer = .accept, subject: String = "") async throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("vicinity-push-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("push_service.py")
        var arguments = ["python3", "-u", script.path, "--folder", folder.path, "--subject", subject]
        switch answer {
        case .accept:
            arguments += ["--answer", "accept"]
        case .status(let status, let headers):
            arguments += ["--answer", String(status)] + headers.flatMap { ["--header", $0] }
        }
        let process = try PeerProcess(arguments, log: folder.appendingPathComponent("service.log"))

        // The service writes ready.json whole (a rename) once it listens; looked for every 50 ms, up to the patience.
        let readyFile = folder.appendingPathComponent("ready.json")
        let deadline = ContinuousClock.now + Self.patience
        var ready: Ready?
        while ready == nil, process.isRunning, ContinuousClock.now < deadline {
            if let data = try? Data(contentsOf: readyFile) {
                ready = try JSONDecoder().decode(Ready.self, from: data)
            } else {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        guard let ready else {
            throw Failure(description: "the test push service did not start: \(process.abandon(removing: folder))")
        }
        self.process = process
        port = ready.port
        p256dh = ready.p256dh
        auth = ready.auth
    }

    /// A push resource of this service, as a browser's subscription names it.
    var endpoint: String { "http://127.0.0.1:\(port)/push/\(UUID().uuidString.lowercased())" }

    /// Every request taken, in order.
    func received() throws -> [Received] {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        let numbers = names.compactMap { $0.hasSuffix(".json") ? Int($0.dropLast(5)) : nil }.sorted()
        return try numbers.map { number in
            try JSONDecoder().decode(Received.self, from: Data(contentsOf: folder.appendingPathComponent("\(number).json")))
        }
    }

    /// SIGKILL, as for the mail relay (`PeerProcess.stop`).
    func stop() { process.stop() }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: folder)
    }
}
