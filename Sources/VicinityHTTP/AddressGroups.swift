import VicinityCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which client addresses count as one client for limits per address: an IPv4 address alone, an IPv6
/// address by its first `ipv6PrefixLength` bits.
///
/// One IPv6 subscriber is handed a whole /64 (RFC 6177, RFC 7421: SLAAC needs 64 bits of interface id), so
/// counting exact IPv6 addresses would give one client 2^64 separate allowances. IPv4-mapped IPv6 addresses
/// (`::ffff:a.b.c.d`, what a dual-stack socket reports for IPv4 peers) are read as the IPv4 address they carry.
public struct AddressGroups: Hashable, Sendable {
    public let ipv6PrefixLength: Int

    /// Shorter prefixes would put unrelated subscribers of one provider together; longer ones than 128 do not exist.
    public static let ipv6PrefixLengths = 32...128
    public static let standard = AddressGroups(uncheckedPrefix: 64)

    public init(ipv6PrefixLength: Int) throws(ValidationError) {
        guard Self.ipv6PrefixLengths.contains(ipv6PrefixLength) else {
            throw ValidationError(
                field: "ipv6-prefix",
                message: "must be a whole number of bits in [\(Self.ipv6PrefixLengths.lowerBound), \(Self.ipv6PrefixLengths.upperBound)]")
        }
        self.ipv6PrefixLength = ipv6PrefixLength
    }

    private init(uncheckedPrefix: Int) { ipv6PrefixLength = uncheckedPrefix }

    /// The address as a peer of any listener writes it: an IPv4-mapped IPv6 address (what a dual-stack
    /// socket reports for an IPv4 peer) as the IPv4 address it carries, anything else unchanged. Trusted
    /// proxies are compared in this form.
    public static func plain(_ address: String) -> String {
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, address, &v6) == 1 else { return address }
        return mappedIPv4(withUnsafeBytes(of: &v6) { Array($0) }) ?? address
    }

    /// The key that every address of the same client shares: `203.0.113.7`, or `2001:db8:1:2::/64`. Text that is
    /// no IP address is its own key.
    public func key(for address: String) -> String {
        var v4 = in_addr()
        if inet_pton(AF_INET, address, &v4) == 1 { return address }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, address, &v6) == 1 else { return address }
        var bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if let ipv4 = Self.mappedIPv4(bytes) { return ipv4 }
        for index in bytes.indices {
            let bitsKept = min(8, max(0, ipv6PrefixLength - index * 8))
            bytes[index] &= bitsKept == 8 ? 0xFF : ~(UInt8(0xFF) >> bitsKept)
        }
        var masked = in6_addr()
        withUnsafeMutableBytes(of: &masked) { $0.copyBytes(from: bytes) }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &masked, &text, socklen_t(text.count)) != nil else { return address }
        let prefix = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return ipv6PrefixLength == 128 ? prefix : "\(prefix)/\(ipv6PrefixLength)"
    }

    /// The IPv4 address inside `::ffff:a.b.c.d` (RFC 4291 §2.5.5.2), given the 16 bytes of an IPv6 address.
    private static func mappedIPv4(_ bytes: [UInt8]) -> String? {
        guard bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF else { return nil }
        return bytes[12..<16].map(String.init).joined(separator: ".")
    }
}

/// Who a client is, for caps and limits per client: the one place that says which peers are trusted proxies
/// and how addresses group. The connection gate and the request context both ask it.
public struct ClientAddressing: Hashable, Sendable {
    /// Reverse proxies (IP addresses) whose `X-Forwarded-For` names the client.
    public var trustedProxies: Set<String>
    public var groups: AddressGroups

    public static let standard = ClientAddressing(trustedProxies: [], groups: .standard)

    public init(trustedProxies: Set<String>, groups: AddressGroups) {
        self.trustedProxies = trustedProxies
        self.groups = groups
    }

    /// Whether the connection's peer is a trusted proxy, in whichever form the listener wrote its address.
    func isTrustedProxy(_ peer: String) -> Bool {
        !trustedProxies.isEmpty && trustedProxies.contains(AddressGroups.plain(peer))
    }

    /// The client of a request: the peer, or behind a trusted proxy the rightmost address of
    /// `X-Forwarded-For` that is not a trusted proxy (anyone can write the left end).
    func client(peer: String?, forwardedFor: String?) -> String? {
        guard let peer, isTrustedProxy(peer), let forwardedFor else { return peer }
        let hops = forwardedFor.split(separator: ",").map { HTTPText.trimmed($0) }.filter { !$0.isEmpty }
        return hops.last { !trustedProxies.contains($0) } ?? hops.first ?? peer
    }

    /// The client a connection counts against for the per-client cap: its peer's group; nil for a trusted
    /// proxy, whose connections carry many clients, and for a peer with no IP address.
    func connectionClient(peer: String?) -> String? {
        guard let peer, !isTrustedProxy(peer) else { return nil }
        return groups.key(for: peer)
    }
}
