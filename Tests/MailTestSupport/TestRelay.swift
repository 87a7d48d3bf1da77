import Foundation
import ProcessTestSupport
import Synchronization
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
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        guard (try? ChildProcesses.launch(process)) != nil else { return false }
        if exited.wait(timeout: .now() + limit) == .timedOut {
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

/// What the relay prints on its standard output, line by line (`listening PORT`, `connection`), kept as it comes,
/// and waits for a given line: the relay's way of saying it is ready, or has accepted a connection.
final class RelayOutput: Sendable {
    private struct Waiter {
        var condition: @Sendable ([String]) -> Bool
        var continuation: CheckedContinuation<[String]?, Never>
    }

    private struct State {
        var lines: [String] = []
        var partial = ""
        var ended = false
        var waiters: [Int: Waiter] = [:]
        var nextID = 0
    }

    private let state = Mutex(State())

    /// Reads `handle` as the relay writes to it, until it ends.
    func read(from handle: FileHandle) {
        handle.readabilityHandler = { [self] handle in
            let data = handle.availableData
            if data.isEmpty { handle.readabilityHandler = nil }
            take(data)
        }
    }

    /// Keeps the whole lines of `data`; no data is the end of the output.
    private func take(_ data: Data) {
        let woken: [(CheckedContinuation<[String]?, Never>, [String]?)] = state.withLock { state in
            if data.isEmpty { state.ended = true }
            state.partial += String(decoding: data, as: UTF8.self)
            while let newline = state.partial.firstIndex(of: "\n") {
                state.lines.append(String(state.partial[..<newline]))
                state.partial = String(state.partial[state.partial.index(after: newline)...])
            }
            let lines = state.lines, ended = state.ended
            let done = state.waiters.filter { ended || $0.value.condition(lines) }
            for id in done.keys { state.waiters[id] = nil }
            return done.values.map { ($0.continuation, $0.condition(lines) ? lines : nil) }
        }
        for (continuation, lines) in woken { continuation.resume(returning: lines) }
    }

    /// The lines once `condition` holds of them; nil if the output ends first, or once `limit` has passed.
    func lines(within limit: Duration, until condition: @escaping @Sendable ([String]) -> Bool) async -> [String]? {
        await withTaskGroup(of: [String]?.self) { group in
            group.addTask { await self.lines(until: condition) }
            group.addTask {
                // The deadline's timer, not a wait for the line itself.
                try? await Task.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            return await group.next() ?? nil
        }
    }

    private func lines(until condition: @escaping @Sendable ([String]) -> Bool) async -> [String]? {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now: [String]?? = state.withLock { state in
                    if condition(state.lines) { return .some(state.lines) }
                    if state.ended || Task.isCancelled { return .some(nil) }
                    state.waiters[id] = Waiter(condition: condition, continuation: continuation)
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: nil)
        }
    }
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

    /// How long the relay may take to start or to tell of a connection: Python starts in well under a second,
    /// even on a busy machine.
    public static let patience = Duration.seconds(20)

    public let port: Int
    public let folder: URL
    private let process: PeerProcess
    private let output: RelayOutput

    /// Returns once the relay listens. `port` listens where a relay that was stopped listened (a relay coming
    /// back); nil picks a free one.
    public init(
        _ mode: Mode = .accept, security: Security = .plain, authentication mechanisms: [String]? = nil, port wanted: Int? = nil,
        folder given: URL? = nil
    ) async throws {
        folder = given ?? FileManager.default.temporaryDirectory.appendingPathComponent("vicinity-smtp-\(UUID().uuidString)")
        let mail = folder.appendingPathComponent("mail")
        try FileManager.default.createDirectory(at: mail, withIntermediateDirectories: true)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("smtp_server.py")
        var arguments = ["python3", "-u", script.path, "--mail-dir", mail.path, "--mode", mode.rawValue]
        if let wanted { arguments += ["--port", String(wanted)] }
        if security != .plain {
            let certificate = try TestCertificate.shared.get()
            arguments += ["--cert", certificate.certificateFile, "--key", certificate.keyFile]
            if security == .implicitTLS { arguments.append("--implicit-tls") }
        }
        if let mechanisms {
            arguments += ["--user", Self.user, "--password", Self.password, "--mechanisms", mechanisms.joined(separator: ",")]
        }
        let said = ChildProcesses.pipe()
        let output = RelayOutput()
        output.read(from: said.fileHandleForReading)
        let process = try PeerProcess(arguments, log: folder.appendingPathComponent("relay.log"), output: said)

        let listening = await output.lines(within: Self.patience) { $0.contains { $0.hasPrefix("listening ") } }
        let port = listening?.first { $0.hasPrefix("listening ") }.flatMap { Int($0.dropFirst("listening ".count)) }
        guard let port else {
            throw Failure(description: "the test relay did not start: \(process.abandon(removing: folder))")
        }
        self.port = port
        self.process = process
        self.output = output
    }

    /// Returns once the relay has accepted a connection; throws if none comes. Only a silent relay tells.
    public func acceptedConnection() async throws {
        guard await output.lines(within: Self.patience, until: { $0.contains("connection") }) != nil else {
            throw Failure(description: "the test relay accepted no connection")
        }
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

    /// SIGKILL (`PeerProcess.stop`).
    public func stop() {
        process.stop()
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
