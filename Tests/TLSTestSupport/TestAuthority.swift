import Foundation
import ProcessTestSupport

/// A throwaway certificate authority made with openssl at test time, and the server certificates it issues:
/// for tests that serve TLS and clients that trust only this authority.
///
/// Keys are P-256 (quick to make); certificates are valid for two days and name `localhost` and 127.0.0.1.
/// Everything lives in a folder of the authority's own, removed when the last copy of it goes.
public final class TestAuthority: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// A server certificate and its key, as `serve --tls-cert` and `--tls-key` take them.
    public struct Issued: Sendable {
        /// The server's certificate followed by every intermediate up to the root, which is left out.
        public let certificateFile: String
        public let keyFile: String
        public let commonName: String
    }

    /// The authority's own certificate: what a client trusts.
    public let certificateFile: String
    let keyFile: String
    /// The intermediates between this authority and the root, itself first: what an issued chain carries.
    let chain: [String]
    let folder: URL
    private let owner: Folder?

    /// Whether openssl is on the machine (`Scripts/setup.sh` installs it).
    public static let available: Bool = (try? run(["openssl", "version"])) != nil

    /// A new root authority named `name`.
    public static func make(name: String) async throws -> TestAuthority {
        let owner = try Folder()
        let folder = owner.url
        let configuration = try writeConfiguration(in: folder)
        let authority = TestAuthority(
            certificateFile: folder.appendingPathComponent("\(name).pem").path,
            keyFile: folder.appendingPathComponent("\(name).key").path, chain: [], folder: folder, owner: owner)
        _ = try await offThePool {
            try run([
                "openssl", "req", "-x509", "-new", "-config", configuration, "-extensions", "authority",
                "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
                "-subj", "/CN=\(name)", "-keyout", authority.keyFile, "-out", authority.certificateFile,
            ])
        }
        return authority
    }

    private init(certificateFile: String, keyFile: String, chain: [String], folder: URL, owner: Folder?) {
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.chain = chain
        self.folder = folder
        self.owner = owner
    }

    /// An intermediate authority under this one; what it issues carries it in the chain.
    public func intermediate(name: String) async throws -> TestAuthority {
        let certificate = try await sign(name: name, extensions: "authority")
        return TestAuthority(
            certificateFile: certificate.certificateFile, keyFile: certificate.keyFile,
            chain: [certificate.certificateFile] + chain, folder: folder, owner: owner)
    }

    /// A server certificate for `localhost` and 127.0.0.1 with the common name given, and its key.
    public func issue(commonName: String) async throws -> Issued {
        let leaf = try await sign(name: commonName, extensions: "server")
        var pem = try String(contentsOfFile: leaf.certificateFile, encoding: .utf8)
        for file in chain { pem += try String(contentsOfFile: file, encoding: .utf8) }
        let chained = folder.appendingPathComponent("\(commonName)-chain.pem").path
        try pem.write(toFile: chained, atomically: true, encoding: .utf8)
        return Issued(certificateFile: chained, keyFile: leaf.keyFile, commonName: commonName)
    }

    private func sign(name: String, extensions: String) async throws -> Issued {
        let base = folder.appendingPathComponent(name).path
        let configuration = folder.appendingPathComponent("openssl.cnf").path
        let issuerCertificate = certificateFile, issuerKey = keyFile
        // A random serial, so that no two certificates of one run share one.
        let serial = "0x" + (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        try await offThePool {
            try Self.run([
                "openssl", "req", "-new", "-config", configuration, "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                "-nodes", "-subj", "/CN=\(name)", "-keyout", base + ".key", "-out", base + ".csr",
            ])
            try Self.run([
                "openssl", "x509", "-req", "-in", base + ".csr", "-CA", issuerCertificate, "-CAkey", issuerKey,
                "-set_serial", serial, "-days", "2", "-extfile", configuration, "-extensions", extensions, "-out", base + ".pem",
            ])
        }
        return Issued(certificateFile: base + ".pem", keyFile: base + ".key", commonName: name)
    }

    /// openssl's settings, written out so that nothing depends on the machine's own openssl.cnf.
    private static func writeConfiguration(in folder: URL) throws -> String {
        let path = folder.appendingPathComponent("openssl.cnf").path
        try """
            [req]
            distinguished_name = name
            prompt = no
            [name]
            CN = unused
            [authority]
            basicConstraints = critical,CA:TRUE
            keyUsage = critical,keyCertSign,cRLSign
            subjectKeyIdentifier = hash
            [server]
            basicConstraints = critical,CA:FALSE
            keyUsage = critical,digitalSignature
            extendedKeyUsage = serverAuth
            subjectAltName = DNS:localhost,IP:127.0.0.1
            subjectKeyIdentifier = hash
            authorityKeyIdentifier = keyid

            """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Runs a command to its end; throws with what it wrote to standard error when it fails. Output goes to files
    /// rather than pipes, so that a chatty command can never block on a full pipe.
    @discardableResult
    static func run(_ arguments: [String]) throws -> String {
        let capture = FileManager.default.temporaryDirectory.appendingPathComponent("vicinity-openssl-\(UUID().uuidString)")
        let outputURL = capture.appendingPathExtension("out"), errorsURL = capture.appendingPathExtension("err")
        defer { for url in [outputURL, errorsURL] { try? FileManager.default.removeItem(at: url) } }
        for url in [outputURL, errorsURL] { _ = FileManager.default.createFile(atPath: url.path, contents: nil) }
        let output = try FileHandle(forWritingTo: outputURL), errors = try FileHandle(forWritingTo: errorsURL)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try ChildProcesses.launch(process)
        process.waitUntilExit()
        try output.close()
        try errors.close()
        guard process.terminationStatus == 0 else {
            let text = (try? String(contentsOf: errorsURL, encoding: .utf8)) ?? ""
            throw Failure(description: "\(arguments.joined(separator: " ")): \(text)")
        }
        return try String(contentsOf: outputURL, encoding: .utf8)
    }
}

/// Runs blocking work (a process to its end) on a thread of its own, never on one of the concurrency pool's few
/// threads, which every test shares.
func offThePool<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}

/// A temporary folder, removed when it goes.
final class Folder: Sendable {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("vicinity-tls-\(UUID().uuidString)")
    init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
    deinit { try? FileManager.default.removeItem(at: url) }
}
