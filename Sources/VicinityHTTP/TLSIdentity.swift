import Crypto
import Foundation
import NIOCore
import NIOSSL

/// The two PEM files a TLS listener is served with: the certificate (the leaf first, then any intermediates)
/// and its private key.
public struct TLSFiles: Sendable, Hashable {
    public var certificate: String
    public var key: String

    public init(certificate: String, key: String) {
        self.certificate = certificate
        self.key = key
    }
}

/// Why the files could not be served: which of the two is at fault and, after the option's name, what is wrong
/// with it ("names a file that cannot be read: …").
public struct TLSFileProblem: Error, Sendable, Hashable, CustomStringConvertible {
    public enum File: Sendable, Hashable {
        case certificate
        case key
    }

    public let file: File
    public let path: String
    /// Said after the option that named the file, so it reads as one line: "--tls-key … does not match …".
    public let description: String
}

/// A certificate chain and its private key read from `TLSFiles`, checked to belong together, and made into the
/// context new TLS connections are served with.
///
/// Everything is read and checked at once, so that a bad file is refused at start or at a reload, never met by
/// the first client's handshake.
public struct TLSIdentity: Sendable {
    /// Built once for every connection while these files are the current ones: a context is immutable and
    /// costly to make (it parses the chain and the key), and safe to share across event loops.
    let context: NIOSSLContext
    /// The SHA-256 fingerprint of the leaf certificate, as `openssl x509 -fingerprint -sha256` writes it, so that an
    /// operator can tell from the log which certificate is being served.
    public let fingerprint: String
    /// When the leaf certificate stops being valid.
    public let notValidAfter: Date

    /// TLS 1.2 and later only. RFC 8996 deprecates 1.0 and 1.1, and NIST SP 800-52 Rev. 2 asks servers for 1.2
    /// at least; every browser and phone in use since 2020 speaks 1.2 or 1.3.
    public static let minimumVersion = TLSVersion.tlsv12

    /// Under TLS 1.2, forward-secret AEAD suites only: Mozilla's "intermediate" list (https://ssl-config.mozilla.org/,
    /// guidelines 5.7) without its finite-field DHE suites, which BoringSSL does not implement. swift-nio-ssl's own
    /// default also allows RSA key exchange and CBC. TLS 1.3's suites are all AEAD and not chosen here.
    public static let cipherSuites = [
        "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384",
        "ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305",
    ].joined(separator: ":")

    /// HTTP/2 first, then HTTP/1.1, offered by ALPN (RFC 7301) in the server's order of preference; a client
    /// that names neither, or sends no ALPN at all, is served HTTP/1.1.
    public static let applicationProtocols = ["h2", "http/1.1"]

    /// Reads and checks both files. Blocking file reads: call it at start, or off the event loops and the
    /// concurrency pool (`TLSCertificates.reload`).
    public static func load(_ files: TLSFiles) throws(TLSFileProblem) -> TLSIdentity {
        let certificateBytes = try read(files.certificate, .certificate)
        let keyBytes = try read(files.key, .key)
        let chain: [NIOSSLCertificate]
        do { chain = try NIOSSLCertificate.fromPEMBytes(certificateBytes) } catch {
            throw TLSFileProblem(file: .certificate, path: files.certificate, description: "holds no PEM certificate that can be read: \(files.certificate)")
        }
        guard let leaf = chain.first else {
            throw TLSFileProblem(file: .certificate, path: files.certificate, description: "holds no PEM certificate: \(files.certificate)")
        }
        let key: NIOSSLPrivateKey
        do { key = try NIOSSLPrivateKey(bytes: keyBytes, format: .pem) } catch {
            throw TLSFileProblem(
                file: .key, path: files.key,
                description: "holds no unencrypted PEM private key: \(files.key) (decrypt one with openssl pkey -in KEY -out PLAIN)")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = minimumVersion
        configuration.cipherSuites = cipherSuites
        configuration.applicationProtocols = applicationProtocols
        // BoringSSL checks that the key is the leaf's (the first certificate's) as the context takes both.
        let context: NIOSSLContext
        do { context = try NIOSSLContext(configuration: configuration) } catch {
            throw TLSFileProblem(
                file: .key, path: files.key,
                description: "does not match the first certificate in \(files.certificate) (the leaf must come first, then its intermediates): \(files.key)")
        }
        let der = (try? leaf.toDERBytes()) ?? []
        return TLSIdentity(
            context: context,
            fingerprint: SHA256.hash(data: der).map { String(format: "%02X", $0) }.joined(separator: ":"),
            notValidAfter: Date(timeIntervalSince1970: TimeInterval(leaf.notValidAfter)))
    }

    private static func read(_ path: String, _ file: TLSFileProblem.File) throws(TLSFileProblem) -> [UInt8] {
        guard FileManager.default.fileExists(atPath: path) else {
            throw TLSFileProblem(file: file, path: path, description: "names no file: \(path)")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TLSFileProblem(file: file, path: path, description: "names a file that cannot be read: \(path)")
        }
        return Array(data)
    }
}
