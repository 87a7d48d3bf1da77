import Testing
import VicinityCore
import VicinityHTTP

@Suite("Address groups")
struct AddressGroupTests {
    @Test("an IPv4 address is its own client; an IPv6 address is its /64; an IPv4-mapped one is the IPv4 address")
    func groups() throws {
        let groups = AddressGroups.standard
        #expect(groups.key(for: "203.0.113.7") == "203.0.113.7")
        #expect(groups.key(for: "2001:db8:1:2::1") == "2001:db8:1:2::/64")
        #expect(groups.key(for: "2001:0db8:0001:0002:abcd:ef01:2345:6789") == "2001:db8:1:2::/64")
        #expect(groups.key(for: "2001:db8:1:3::1") == "2001:db8:1:3::/64")
        #expect(groups.key(for: "::ffff:198.51.100.4") == "198.51.100.4")
        #expect(groups.key(for: "::1") == "::/64")
        #expect(groups.key(for: "not an address") == "not an address")
        #expect(AddressGroups.plain("::ffff:10.0.0.1") == "10.0.0.1")
        #expect(AddressGroups.plain("10.0.0.1") == "10.0.0.1")
        #expect(AddressGroups.plain("2001:db8::1") == "2001:db8::1")

        let wide = try AddressGroups(ipv6PrefixLength: 48)
        #expect(wide.key(for: "2001:db8:1:2::1") == "2001:db8:1::/48")
        #expect(try AddressGroups(ipv6PrefixLength: 56).key(for: "2001:db8:1:2ff::1") == "2001:db8:1:200::/56")
        #expect(try AddressGroups(ipv6PrefixLength: 128).key(for: "2001:db8::1") == "2001:db8::1")
        for bad in [31, 129, 0] {
            #expect(throws: ValidationError.self) { try AddressGroups(ipv6PrefixLength: bad) }
        }
    }
}
