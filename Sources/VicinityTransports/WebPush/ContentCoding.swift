import Crypto
import Foundation

/// The `aes128gcm` content coding (RFC 8188) as Web Push uses it: a header naming the salt, the record size and
/// the sender's key, then one record, sealed with AES-128-GCM under a key and nonce derived from the input keying
/// material and the salt.
enum ContentCoding {
    /// RFC 8188 §2.1: the salt is 16 octets.
    static let saltLength = 16
    /// RFC 8188 §2.1: the record size is a 32-bit unsigned integer.
    static let recordSizeLength = 4
    /// RFC 8188 §2: AEAD_AES_128_GCM expands each record by a 16-octet tag.
    static let tagLength = 16
    /// RFC 8188 §2: the delimiter that ends the last record's plaintext, before any padding.
    static let lastRecordDelimiter: UInt8 = 0x02
    /// RFC 8291 §4, as in its Appendix A: 4096 octets, the body a push service must accept (RFC 8030 §7.2), so
    /// that any message that fits the body fits one record.
    static let recordSize: UInt32 = 4096
    /// RFC 8188 §2.2 and §2.3: what the content-encryption key and the nonce are derived for.
    static let keyInfo = Array("Content-Encoding: aes128gcm".utf8) + [0]
    static let nonceInfo = Array("Content-Encoding: nonce".utf8) + [0]
    /// RFC 8188 §2.2: AES-128 takes a 16-octet key; RFC 5116 §5.1: AES-GCM a 12-octet nonce.
    static let keyLength = 16
    static let nonceLength = 12

    /// The header's length for a key id of `keyIDLength` octets: salt, record size, the id's length and the id.
    static func headerLength(keyIDLength: Int) -> Int { saltLength + recordSizeLength + 1 + keyIDLength }

    /// Seals `plaintext` as the single, last record of a body whose header carries `salt` and `keyID`. The record's
    /// sequence number is 0, so its nonce is the derived one as it is (RFC 8188 §2.3).
    static func encode(_ plaintext: [UInt8], inputKey: SymmetricKey, salt: [UInt8], keyID: [UInt8]) throws -> [UInt8] {
        precondition(salt.count == saltLength && keyID.count <= Int(UInt8.max), "a salt of 16 octets and a key id of at most 255")
        let key = HKDF<SHA256>.deriveKey(inputKeyMaterial: inputKey, salt: salt, info: keyInfo, outputByteCount: keyLength)
        let nonce = HKDF<SHA256>.deriveKey(inputKeyMaterial: inputKey, salt: salt, info: nonceInfo, outputByteCount: nonceLength)
        let sealed = try AES.GCM.seal(
            plaintext + [lastRecordDelimiter], using: key, nonce: AES.GCM.Nonce(data: nonce.withUnsafeBytes { Array($0) }))
        var body = salt
        body.reserveCapacity(headerLength(keyIDLength: keyID.count) + plaintext.count + 1 + tagLength)
        withUnsafeBytes(of: recordSize.bigEndian) { body.append(contentsOf: $0) }
        body.append(UInt8(keyID.count))
        body.append(contentsOf: keyID)
        body.append(contentsOf: sealed.ciphertext)
        body.append(contentsOf: sealed.tag)
        return body
    }
}
