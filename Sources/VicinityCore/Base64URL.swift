/// RFC 4648 §5 base64 with the URL-safe alphabet and no padding: how session tokens and page cursors are
/// written, so that they pass through URLs and headers unescaped. Worked on bytes: every push signs and
/// encrypts with it, and string replacement on Foundation's base64 cost more than the signing.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    /// Each octet's value in the alphabet; 0xFF for octets outside it.
    private static let values: [UInt8] = {
        var values = [UInt8](repeating: 0xFF, count: 256)
        for (value, octet) in alphabet.enumerated() { values[Int(octet)] = UInt8(value) }
        return values
    }()

    public static func encode(_ bytes: [UInt8]) -> String {
        var text: [UInt8] = []
        text.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= bytes.count {
            let group = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            for shift in [18, 12, 6, 0] { text.append(alphabet[Int(group >> UInt32(shift) & 0x3F)]) }
            index += 3
        }
        switch bytes.count - index {
        case 1:
            let group = UInt32(bytes[index]) << 16
            for shift in [18, 12] { text.append(alphabet[Int(group >> UInt32(shift) & 0x3F)]) }
        case 2:
            let group = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
            for shift in [18, 12, 6] { text.append(alphabet[Int(group >> UInt32(shift) & 0x3F)]) }
        default:
            break
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The bytes of text `encode` wrote; nil for anything else. Only the canonical spelling is accepted (no
    /// padding, no other alphabet, no bits set beyond the last octet), so one value has one text.
    public static func decode(_ text: String) -> [UInt8]? {
        let octets = Array(text.utf8)
        guard octets.count % 4 != 1 else { return nil }
        var digits: [UInt32] = []
        digits.reserveCapacity(octets.count)
        for octet in octets {
            let value = values[Int(octet)]
            guard value != 0xFF else { return nil }
            digits.append(UInt32(value))
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(octets.count * 3 / 4)
        var index = 0
        while index + 4 <= digits.count {
            let group = digits[index] << 18 | digits[index + 1] << 12 | digits[index + 2] << 6 | digits[index + 3]
            bytes += [UInt8(group >> 16), UInt8(group >> 8 & 0xFF), UInt8(group & 0xFF)]
            index += 4
        }
        switch digits.count - index {
        case 2:
            guard digits[index + 1] & 0x0F == 0 else { return nil }
            bytes.append(UInt8((digits[index] << 2 | digits[index + 1] >> 4) & 0xFF))
        case 3:
            guard digits[index + 2] & 0x03 == 0 else { return nil }
            let group = digits[index] << 18 | digits[index + 1] << 12 | digits[index + 2] << 6
            bytes += [UInt8(group >> 16), UInt8(group >> 8 & 0xFF)]
        default:
            break
        }
        return bytes
    }
}
