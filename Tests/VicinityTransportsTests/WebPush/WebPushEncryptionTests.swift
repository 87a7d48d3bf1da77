import Crypto
import Testing
import VicinityCore
@testable import VicinityTransports

/// RFC 8291's worked example (§5 and Appendix A): with the sender's key and salt fixed, the body is known to the
/// octet, so a derivation step done wrong anywhere shows here, however well our own encryption and decryption
/// would agree with each other.
@Suite("Web Push message encryption (RFC 8291, aes128gcm)")
struct WebPushEncryptionTests {
    /// RFC 8291 Appendix A, base64url as the RFC writes them.
    enum Example {
        static let plaintext = "When I grow up, I want to be a watermelon"
        static let senderPrivateKey = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
        static let senderPublicKey = "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"
        static let userAgentPublicKey = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
        static let authSecret = "BTBZMqHH6r4Tts7J_aSIgg"
        static let salt = "DGv6ra1nlYgDCS1FRnbzlw"
        static let body = "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"
        /// RFC 8291 §5's request line names this push resource.
        static let endpoint = "https://push.example.net/push/JzLQ3raZJfFBR0aqvOMsLrt54w4rJUsV"
    }

    static func decoded(_ text: String) throws -> [UInt8] {
        try #require(Base64URL.decode(text), "\(text) is base64url")
    }

    static func exampleSubscription() throws -> WebPushSubscription {
        try WebPushSubscription(endpoint: Example.endpoint, p256dh: Example.userAgentPublicKey, auth: Example.authSecret)
    }

    @Test("the RFC 8291 Appendix A message encrypts to the RFC's body, octet for octet")
    func appendixA() throws {
        let senderKey = try P256.KeyAgreement.PrivateKey(rawRepresentation: Self.decoded(Example.senderPrivateKey))
        #expect(Base64URL.encode(Array(senderKey.publicKey.x963Representation)) == Example.senderPublicKey)
        let body = try WebPushEncryption.encrypt(
            Array(Example.plaintext.utf8), for: Self.exampleSubscription(), senderKey: senderKey, salt: Self.decoded(Example.salt))
        let expected = try Self.decoded(Example.body)
        #expect(body.count == expected.count)
        #expect(body == expected)
    }

    @Test("a body starts with its salt, a record size of 4096 and the 65-octet key of a sender new to each message")
    func header() throws {
        let subscription = try Self.exampleSubscription()
        let first = try WebPushEncryption.encrypt(Array("ping".utf8), for: subscription)
        let second = try WebPushEncryption.encrypt(Array("ping".utf8), for: subscription)
        #expect(Array(first[16..<20]) == [0x00, 0x00, 0x10, 0x00])
        #expect(first[20] == 65)
        #expect(first[21] == 0x04)
        #expect(first.count == 86 + 4 + 1 + 16)
        #expect(first[0..<16] != second[0..<16], "a new salt each time")
        #expect(first[21..<86] != second[21..<86], "a new sender key each time")
    }

    @Test("a message of 3993 octets fits one 4096-octet body and one of 3994 is refused with the reason")
    func largestMessage() throws {
        let subscription = try Self.exampleSubscription()
        #expect(WebPushEncryption.maximumPlaintextLength == 3993)
        let largest = try WebPushEncryption.encrypt([UInt8](repeating: 0x41, count: 3993), for: subscription)
        #expect(largest.count == 4096)
        let refusal = #expect(throws: WebPushProblem.self) {
            try WebPushEncryption.encrypt([UInt8](repeating: 0x41, count: 3994), for: subscription)
        }
        #expect(refusal?.description.contains("at most 3993") == true)
    }
}
