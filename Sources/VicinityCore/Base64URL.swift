import Foundation

/// RFC 4648 §5 base64 with the URL-safe alphabet and no padding: how session tokens and page cursors are
/// written, so that they pass through URLs and headers unescaped.
public enum Base64URL {
    public static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The bytes of text `encode` wrote; nil for anything else. Only the canonical spelling is accepted, so one
    /// value has one text.
    public static func decode(_ text: String) -> [UInt8]? {
        guard !text.contains(where: { "+/=".contains($0) }) else { return nil }
        let standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        let padded = standard + String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        guard let data = Data(base64Encoded: padded) else { return nil }
        let bytes = Array(data)
        return encode(bytes) == text ? bytes : nil
    }
}
