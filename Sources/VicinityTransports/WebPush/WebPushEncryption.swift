import Crypto
import Foundation

/// RFC 8291 message encryption: a key agreed between a key pair made for this one message and the browser's
/// key, mixed with the browser's auth secret, seals the message in the `aes128gcm` content coding (RFC 8188),
/// whose header carries the message key's public half for the browser to agree the same key with.
public enum WebPushEncryption {
    /// RFC 8291 §3.3: what the shared secret and the auth secret are mixed under, followed by both public keys.
    static let keyInfoLabel = Array("WebPush: info".utf8) + [0]
    /// RFC 8291 §3.3: the input keying material of the content coding is 32 octets (SHA-256's length).
    static let inputKeyLength = 32

    /// RFC 8291 §4: the most a message can hold so that the body stays within the 4096 octets every push
    /// service takes (RFC 8030 §7.2): 4096 less the 86-octet header, the delimiter and the tag, 3993.
    public static let maximumPlaintextLength =
        Int(ContentCoding.recordSize) - ContentCoding.headerLength(keyIDLength: WebPushSubscription.uncompressedPointLength)
        - 1 - ContentCoding.tagLength

    /// The body to post for `plaintext` to the browser of `subscription`.
    ///
    /// - Parameters:
    ///   - senderKey: the message's own key pair; a new one unless a test reproduces a known body.
    ///   - salt: 16 octets; new random ones unless a test reproduces a known body.
    public static func encrypt(
        _ plaintext: [UInt8], for subscription: WebPushSubscription,
        senderKey: P256.KeyAgreement.PrivateKey = P256.KeyAgreement.PrivateKey(), salt: [UInt8]? = nil
    ) throws(WebPushProblem) -> [UInt8] {
        guard plaintext.count <= maximumPlaintextLength else {
            throw WebPushProblem(
                "the message is \(plaintext.count) octets; a push carries at most \(maximumPlaintextLength) (RFC 8291 §4)")
        }
        let salt = salt ?? randomSalt()
        guard salt.count == ContentCoding.saltLength else {
            throw WebPushProblem("the salt must be \(ContentCoding.saltLength) octets")
        }
        let senderPublicKey = Array(senderKey.publicKey.x963Representation)
        do {
            let userAgentKey = try P256.KeyAgreement.PublicKey(x963Representation: subscription.userAgentPublicKey)
            let shared = try senderKey.sharedSecretFromKeyAgreement(with: userAgentKey)
            let inputKey = shared.hkdfDerivedSymmetricKey(
                using: SHA256.self, salt: subscription.authSecret,
                sharedInfo: keyInfoLabel + subscription.userAgentPublicKey + senderPublicKey, outputByteCount: inputKeyLength)
            return try ContentCoding.encode(plaintext, inputKey: inputKey, salt: salt, keyID: senderPublicKey)
        } catch {
            throw WebPushProblem("the message could not be encrypted: \(error)")
        }
    }

    /// Fresh salt from the system's cryptographic generator (`SystemRandomNumberGenerator` reads getrandom on
    /// Linux): RFC 8188 §2.1 asks for a new salt for every message.
    static func randomSalt() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<ContentCoding.saltLength).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }
}
