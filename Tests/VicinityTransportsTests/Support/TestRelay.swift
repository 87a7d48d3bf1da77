import Foundation
import Testing

/// What the relay tests need on the machine: python3 with aiosmtpd, and openssl for the certificate.
/// `Scripts/setup.sh` installs both.
enum RelayTools {
    static let available: Bool = run(["python3", "-c", "import aiosmtpd"]) && run(["openssl", "version"])

    static let howToInstall: Comment = "no python3 with aiosmtpd, or no openssl: run Scripts/setup.sh (or pip install aiosmtpd)"

    /// Runs a command to its end, bounded by `limit` seconds; whether it succeeded.
    @discardableResult
    static func run(_ arguments: [String], limit: TimeInterval = 60) -> Bool {
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
struct TestCertificate: Sendable {
    let certificateFile: String
    let keyFile: String

    static let shared: Result<TestCertificate, TestRelay.Failure> = {
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
final class TestRelay {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    enum Mode: String {
        case accept, silent
        case temporaryFailureAtRecipient = "tempfail-rcpt", rejectionAtRecipient = "reject-rcpt"
        case temporaryFailureAfterData = "tempfail-data", rejectionAfterData = "reject-data"
        case echoingAuthentication = "echo-auth"
    }

    enum Security {
        case plain, startTLS, implicitTLS
    }

    static let user = "tester"
    static let password = "pa55-w0rd:with@odd/chars"

    let port: Int
    let folder: URL
    private let process: Process

    /// Waits at most 20 s for the relay to listen: Python starts in well under a second, even on a busy machine.
    init(_ mode: Mode = .accept, security: Security = .plain, authentication mechanisms: [String]? = nil) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("vicinity-smtp-\(UUID().uuidString)")
        let mail = folder.appendingPathComponent("mail")
        try FileManager.default.createDirectory(at: mail, withIntermediateDirectories: true)
        let ready = folder.appendingPathComponent("port")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("smtp_server.py")
        var arguments = ["python3", "-u", script.path, "--ready", ready.path, "--mail-dir", mail.path, "--mode", mode.rawValue]
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
    func received() throws -> [ReceivedMail] {
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
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: folder)
    }
}

/// One message as the relay took it, read by Python's email package (see `smtp_server.py`).
struct ReceivedMail: Decodable {
    var mailFrom: String
    var rcptTos: [String]
    var tls: Bool
    var authenticatedAs: String?
    var mechanism: String?
    var subject: String?
    var fromName: String?
    var fromAddress: String?
    var body: String
    /// The data as it arrived, after the relay undid the dot-stuffing.
    var raw = ""

    enum CodingKeys: String, CodingKey {
        case mailFrom = "mail_from", rcptTos = "rcpt_tos", tls, authenticatedAs = "authenticated_as", mechanism
        case subject, fromName = "from_name", fromAddress = "from_address", body
    }

    /// The header lines, unfolded (RFC 5322 §2.2.3), keyed by field name.
    var headers: [(name: String, value: String)] {
        let head = raw.components(separatedBy: "\r\n\r\n").first ?? ""
        return head.replacingOccurrences(of: "\r\n ", with: " ").components(separatedBy: "\r\n").compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
        }
    }
}
