import HTTPTypes
import Hummingbird
import Synchronization
import VicinityCore

/// The plain-HTTP listener beside a TLS one (`serve --tls-redirect-port`): every request, whatever its method or
/// path, is answered `308 Permanent Redirect` to the same path and query over HTTPS, on the host the client asked
/// for and the TLS listener's port. 308 rather than 301: a client repeats the request as it was, method and body
/// included (RFC 9110 §15.4.9), where after a 301 many turn a POST into a GET.
///
/// No open redirect: the target is always `https://` on the host the request itself named in `Host` and the port
/// of this server's TLS listener, with the request's own path. The only host it can send a client to is one that
/// client asked for, and a browser always names the host it connected to, so a link cannot use this listener to
/// send someone elsewhere. `Host` must be a DNS name, an IPv4 address or an IPv6 literal (with an optional port,
/// which is replaced): anything else (a user part, a path, spaces) is answered 400, as is a request without
/// `Host` or whose target is not a path (`*`). A target in absolute form (`http://other.example/x`) is taken by
/// its path alone (HTTPTypes keeps only that): the host is still the one in `Host`.
struct HTTPSRedirectResponder: HTTPResponder {
    typealias Context = VicinityRequestContext

    /// The TLS listener's port, known once it is bound (port 0 picks one).
    let tlsPort: ListeningPort

    func respond(to request: Request, context: Context) async throws -> Response {
        do {
            guard let port = tlsPort.value else { throw APIError.startingUp }
            guard let host = request.head.authority.flatMap(Self.host(of:)) else {
                throw APIError.invalidInput([ValidationError(field: "Host", message: "must name this server: a host name or IP address, with an optional port")])
            }
            let path = request.head.path ?? ""
            guard path.hasPrefix("/") else {
                throw APIError.invalidInput([ValidationError(field: "target", message: "must be a path beginning with /")])
            }
            // 443 is HTTPS's own port (RFC 9110 §4.2.2), which a URL leaves out.
            let location = "https://\(host)\(port == 443 ? "" : ":\(port)")\(path)"
            return Response(status: .permanentRedirect, headers: [.location: location])
        } catch let error as APIError {
            return try Problem(error).response(from: request, context: context)
        }
    }

    /// The host of a `Host` field (RFC 9110 §7.2), lower-cased and without its port: a DNS name or an IPv4 address
    /// (letters, digits, hyphens and dots, at most 253 bytes as RFC 1035 allows, labels of at most 63), or an IPv6
    /// literal in brackets; nil for anything else.
    static func host(of authority: String) -> String? {
        let text = Array(authority.lowercased().utf8)
        let host: ArraySlice<UInt8>
        let rest: ArraySlice<UInt8>
        if text.first == UInt8(ascii: "[") {
            guard let close = text.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            host = text[...close]
            rest = text[(close + 1)...]
            let inside = host.dropFirst().dropLast()
            guard inside.contains(UInt8(ascii: ":")),
                inside.allSatisfy({ isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") })
            else { return nil }
        } else {
            let colon = text.firstIndex(of: UInt8(ascii: ":")) ?? text.endIndex
            host = text[..<colon]
            rest = text[colon...]
            let labels = host.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
            // A trailing dot (a fully qualified name) leaves one empty label at the end.
            let named = host.last == UInt8(ascii: ".") ? labels.dropLast() : labels[...]
            guard !host.isEmpty, host.count <= 253, !named.isEmpty,
                named.allSatisfy({ label in
                    (1...63).contains(label.count)
                        && label.allSatisfy { isLetterOrDigit($0) || $0 == UInt8(ascii: "-") }
                })
            else { return nil }
        }
        // An empty port is allowed (RFC 3986 §3.2.3); a port is at most five digits.
        if let colon = rest.first {
            guard colon == UInt8(ascii: ":"), rest.count <= 6, rest.dropFirst().allSatisfy(isDigit) else { return nil }
        }
        return String(decoding: host, as: UTF8.self)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    private static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }
}

/// A listener's port, set once it is bound, for what must name it before then.
final class ListeningPort: Sendable {
    private let port = Mutex<Int?>(nil)

    var value: Int? { port.withLock { $0 } }

    func bound(_ value: Int) { port.withLock { $0 = value } }
}
