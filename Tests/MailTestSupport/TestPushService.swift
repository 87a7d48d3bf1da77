import Foundation
import Glibc
import Testing

/// What the push service tests need on the machine: python3 with http_ece and cryptography (`Scripts/setup.sh`).
public enum PushTools {
    public static let available: Bool = RelayTools.run(["python3", "-c", "import http_ece, cryptography"])
    public static let howToInstall: Comment = "no python3 with http_ece and cryptography: run Scripts/setup.sh (or pip install http-ece)"
}

/// A push service and the browser behind it on loopback: `push_service.py` started for one test on a port the
/// system picks. It makes the subscription (its private key stays in Python), checks each push's VAPID token and
/// decrypts its body with http_ece, and writes down every request it got. Stopped and started again, it is the
/// same browser at the same address, as a push service that was down.
public final class TestPushService: @unchecked Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// How it answers every push.
    public enum Answer: Sendable {
        /// Checks the push as a push service and a browser would: 201 when all holds, else 400.
        case accept
        /// This status, with these header lines, unchecked.
        case status(Int, headers: [String] = [])
    }

    /// What the service and its browser made of one request.
    public struct Received: Decodable, Sendable {
        public var path: String
        public var headers: [String: String]
        public var length: Int
        public var problems: [String]
        public var claims: Claims?
        public var k: String?
        /// The decrypted body, base64; nil when it was not decrypted.
        public var plaintext: String?

        public struct Claims: Decodable, Equatable, Sendable {
            public var aud: String
            public var exp: Int
            public var sub: String

            public init(aud: String, exp: Int, sub: String) {
                self.aud = aud
                self.exp = exp
                self.sub = sub
            }
        }

        public var plaintextBytes: [UInt8]? { plaintext.flatMap { Data(base64Encoded: $0) }.map(Array.init) }
    }

    private struct Ready: Decodable {
        var port: Int
        var p256dh: String
        var auth: String
    }

    /// How long the service may take to start: python3 importing cryptography and http_ece took over 20 s while
    /// the whole suite started at once on two cores.
    static let patience = Duration.seconds(90)

    public private(set) var port: Int
    /// The browser's subscription keys, as a page would send them.
    public let p256dh: String
    public let auth: String
    public let folder: URL
    private let arguments: [String]
    private var process: PeerProcess?

    public init(answer: Answer = .accept, subject: String = "") async throws {
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
        self.arguments = arguments
        let (process, ready) = try await Self.launch(arguments, port: 0, folder: folder)
        self.process = process
        port = ready.port
        p256dh = ready.p256dh
        auth = ready.auth
    }

    /// Starts it and waits for `ready.json`, which the service writes whole (a rename) once it listens: looked
    /// for every 50 ms, up to the patience.
    private static func launch(_ arguments: [String], port: Int, folder: URL) async throws -> (PeerProcess, Ready) {
        let readyFile = folder.appendingPathComponent("ready.json")
        try? FileManager.default.removeItem(at: readyFile)
        let process = try PeerProcess(arguments + ["--port", String(port)], log: folder.appendingPathComponent("service.log"))
        let deadline = ContinuousClock.now + patience
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
        return (process, ready)
    }

    /// A push resource of this service, as a browser's subscription names it.
    public var endpoint: String { "http://127.0.0.1:\(port)/push/\(UUID().uuidString.lowercased())" }

    /// Every request taken, in order, across restarts.
    public func received() throws -> [Received] {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        let numbers = names.compactMap { $0.hasSuffix(".json") ? Int($0.dropLast(5)) : nil }.sorted()
        return try numbers.map { number in
            try JSONDecoder().decode(Received.self, from: Data(contentsOf: folder.appendingPathComponent("\(number).json")))
        }
    }

    /// SIGKILL, as for the mail relay (`PeerProcess.stop`): its port refuses connections until `start()`, and is
    /// held meanwhile (`PortHold`), so that no other test's server, given a port by the system, answers in its place.
    public func stop() {
        process?.stop()
        process = nil
        if hold == nil { hold = PortHold(port: port) }
    }

    /// Starts it again at the same port with the same keys, after `stop()`.
    public func start() async throws {
        hold?.release()
        hold = nil
        let (process, _) = try await Self.launch(arguments, port: port, folder: folder)
        self.process = process
    }

    private var hold: PortHold?

    deinit {
        process?.stop()
        hold?.release()
        try? FileManager.default.removeItem(at: folder)
    }
}

/// A loopback port kept from the system's choice while its service is down: a socket bound to it that does not
/// listen, so that connections to it are refused, as to a stopped service, and a server asking the system for any
/// free port is not given this one.
private struct PortHold {
    private let descriptor: Int32

    init?(port: Int) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        // The service's last connections may linger in TIME_WAIT on the port, which only this lets a bind pass.
        var on: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            close(descriptor)
            return nil
        }
        self.descriptor = descriptor
    }

    func release() { close(descriptor) }
}
