import Foundation
import Testing

/// What the relay tests need on the machine: python3 with aiosmtpd, and openssl for the certificate.
/// `Scripts/setup.sh` installs both.
public enum RelayTools {
    public static let available: Bool = run(["python3", "-c", "import aiosmtpd"]) && run(["openssl", "version"])

    public static let howToInstall: Comment = "no python3 with aiosmtpd, or no openssl: run Scripts/setup.sh (or pip install aiosmtpd)"

    /// Runs a command to its end, bounded by `limit` seconds; whether it succeeded.
    @discardableResult
    public static func run(_ arguments: [String], limit: TimeInterval = 60) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        let deadline = Date().addingTimeInterval(limit)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return false
        }
        return process.terminationStatus == 0
    }
}

/// A self-signed certificate for `localhost` and 127.0.0.1, made once for the whole test run with openssl; the
/// certificate is also the CA file the client is told to trust.
public struct TestCertificate: Sendable {
    public let certificateFile: String
    public let keyFile: String

    public static let shared: Result<TestCertificate, TestRelay.Failure> = {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vicinity-smtp-cert-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            return .failure(TestRelay.Failure(description: "cannot make \(folder.path): \(error)"))
        }
        let certificate = TestCertificate(
            certificateFile: folder.appendingPathComponent("cert.pem").path, keyFile: folder.appendingPathComponent("key.pem").path)
        let made = RelayTools.run([
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
            "-keyout", certificate.keyFile, "-out", certificate.certificateFile,
        ])
        return made ? .success(certificate) : .failure(TestRelay.Failure(description: "openssl could not make a certificate"))
    }()
}

/// A real mail relay on loopback: `Support/smtp_server.py` (aiosmtpd) started for one test on a port the
/// system picks, writing each message it takes into a folder of its own.
public final class TestRelay: @unchecked Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public enum Mode: String, Sendable {
        case accept, silent
        case temporaryFailureAtRecipient = "tempfail-rcpt", rejectionAtRecipient = "reject-rcpt"
        case temporaryFailureAfterData = "tempfail-data", rejectionAfterData = "reject-data"
        case echoingAuthentication = "echo-auth"
    }

    public enum Security: Sendable {
        case plain, startTLS, implicitTLS
    }

    public static let user = "tester"
    public static let password = "pa55-w0rd:with@odd/chars"

    public let port: Int
    public let folder: URL
    private let process: Process

    /// Waits at most 20 s for the relay to listen: Python starts in well under a second, even on a busy machine.
    /// `port` listens where a relay that was stopped listened (a relay coming back); nil picks a free one.
    public init(
        _ mode: Mode = .accept, security: Security = .plain, authentication mechanisms: [String]? = nil, port wanted: Int? = nil,
        folder given: URL? = nil
    ) throws {
        folder = given ?? FileManager.default.temporaryDirectory.appendingPathComponent("vicinity-smtp-\(UUID().uuidString)")
        let mail = folder.appendingPathComponent("mail")
        try FileManager.default.createDirectory(at: mail, withIntermediateDirectories: true)
        let ready = folder.appendingPathComponent("port")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("smtp_server.py")
        try? FileManager.default.removeItem(at: ready)
        var arguments = ["python3", "-u", script.path, "--ready", ready.path, "--mail-dir", mail.path, "--mode", mode.rawValue]
        if let wanted { arguments += ["--port", String(wanted)] }
        if security != .plain {
            let certificate = try TestCertificate.shared.get()
            arguments += ["--cert", certificate.certificateFile, "--key", certificate.keyFile]
            if security == .implicitTLS { arguments.append("--implicit-tls") }
        }
        if let mechanisms {
            arguments += ["--user", Self.user, "--password", Self.password, "--mechanisms", mechanisms.joined(separator: ",")]
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let log = folder.appendingPathComponent("relay.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let logHandle = try FileHandle(forWritingTo: log)
        process.standardOutput = logHandle
        process.standardError = logHandle
        try process.run()

        let deadline = Date().addingTimeInterval(20)
        var port: Int?
        while port == nil, Date() < deadline, process.isRunning {
            port = (try? String(contentsOf: ready, encoding: .utf8)).flatMap { Int($0) }
            if port == nil { Thread.sleep(forTimeInterval: 0.05) }
        }
        guard let port else {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            try? FileManager.default.removeItem(at: folder)
            throw Failure(description: "the test relay did not start: \(output)")
        }
        self.port = port
        self.process = process
    }

    /// What the relay wrote of each message it took, in the order taken.
    public func received() throws -> [ReceivedMail] {
        let mail = folder.appendingPathComponent("mail")
        let names = try FileManager.default.contentsOfDirectory(atPath: mail.path)
        let numbers = names.compactMap { $0.hasSuffix(".json") ? Int($0.dropLast(5)) : nil }.sorted()
        return try numbers.map { number in
            let record = try Data(contentsOf: mail.appendingPathComponent("\(number).json"))
            let raw = try Data(contentsOf: mail.appendingPathComponent("\(number).eml"))
            var mail = try JSONDecoder().decode(ReceivedMail.self, from: record)
            mail.raw = String(decoding: raw, as: UTF8.self)
            return mail
        }
    }

    /// SIGKILL: a child of the test runner may inherit a mask that blocks SIGTERM, and would outlive the test.
    public func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Whether the folder goes with the relay: not when a relay started in its stead (`port`, `folder`) reads it on.
    public var removesFolder = true

    deinit {
        stop()
        if removesFolder { try? FileManager.default.removeItem(at: folder) }
    }
}

/// One message as the relay took it, read by Python's email package (see `smtp_server.py`).
public struct ReceivedMail: Decodable, Sendable {
    public var mailFrom: String
    public var rcptTos: [String]
    public var tls: Bool
    public var authenticatedAs: String?
    public var mechanism: String?
    public var subject: String?
    public var fromName: String?
    public var fromAddress: String?
    public var body: String
    /// The data as it arrived, after the relay undid the dot-stuffing.
    public var raw = ""

    enum CodingKeys: String, CodingKey {
        case mailFrom = "mail_from", rcptTos = "rcpt_tos", tls, authenticatedAs = "authenticated_as", mechanism
        case subject, fromName = "from_name", fromAddress = "from_address", body
    }

    /// The header lines, unfolded (RFC 5322 §2.2.3), keyed by field name.
    public var headers: [(name: String, value: String)] {
        let head = raw.components(separatedBy: "\r\n\r\n").first ?? ""
        return head.replacingOccurrences(of: "\r\n ", with: " ").components(separatedBy: "\r\n").compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
        }
    }
}
