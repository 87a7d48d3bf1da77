import Testing
import VicinityCore

@Suite("Limits counted under keyed digests")
struct LimitKeysTests {
    @Test("a digest is 43 characters whatever the text, the same for the same secret and text, different under another secret")
    func digests() throws {
        let secret = Array(repeating: UInt8(7), count: 32)
        let keys = try LimitKeys(secret: secret), same = try LimitKeys(secret: secret), other = LimitKeys.random()
        let long = String(repeating: "x", count: 10_000)
        #expect(keys.digest("alice").count == 43 && keys.digest(long).count == 43 && keys.digest("").count == 43)
        #expect(keys.digest("alice") == same.digest("alice"))
        #expect(keys.digest("alice") != keys.digest("Alice"), "the limits fold case before, not the digest")
        #expect(keys.digest("alice") != other.digest("alice"))
        #expect(!keys.digest("203.0.113.7").contains("203"))
    }

    @Test("a key described in a log, alone or inside what holds it, never shows its secret")
    func secretNotDescribed() throws {
        let keys = try LimitKeys(secret: Array(repeating: UInt8(201), count: 32))
        let ledger = KeyedWindowLedger(MemoryWindowLedger(), keys: keys)
        for text in [String(describing: keys), String(reflecting: keys), String(describing: ledger), "\(ledger)"] {
            #expect(!text.contains("201"), "\(text)")
            #expect(text.contains("not shown"), "\(text)")
        }
    }

    @Test("a secret shorter than 32 bytes is refused")
    func shortSecret() {
        #expect(throws: ValidationError.self) { try LimitKeys(secret: Array(repeating: 1, count: 31)) }
    }

    @Test("the limits count alike through the keyed ledger: the sixth sign-up from an address within the hour is refused")
    func countsAlike() async throws {
        let ledger = KeyedWindowLedger(MemoryWindowLedger(), keys: .random())
        let limit = WindowLimit(RateLimit(limit: 5, window: .seconds(3600)), scope: .signUps, clock: ManualClock(), ledger: ledger)
        for _ in 0..<5 { #expect(try await limit.acquire("198.51.100.4") == nil) }
        #expect(try await limit.acquire("198.51.100.4") != nil)
        #expect(try await limit.acquire("198.51.100.5") == nil)
    }
}
