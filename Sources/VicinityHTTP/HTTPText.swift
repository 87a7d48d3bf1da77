/// Text of requests (query strings, header values) read without Foundation's string functions, which on Linux
/// go through NSString and cost more than the rest of a trivial request.
enum HTTPText {
    /// Form encoding: `+` is a space, then percent-escapes, which must spell valid UTF-8; nil otherwise, as
    /// Foundation's `removingPercentEncoding` documents. It replaces that and `replacingOccurrences`, which on
    /// Linux took a fifth of the CPU of a `/v1/distance` request; unlike Foundation on Linux, it also refuses
    /// the lone bytes (such as `%A9`) that Foundation turns into U+FFFD.
    static func formDecoded(_ text: Substring) -> String? {
        let utf8 = text.utf8
        guard utf8.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "%") }) else { return String(text) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var index = utf8.startIndex
        while index != utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%") {
                let high = utf8.index(after: index)
                guard high != utf8.endIndex, let highValue = hexValue(utf8[high]) else { return nil }
                let low = utf8.index(after: high)
                guard low != utf8.endIndex, let lowValue = hexValue(utf8[low]) else { return nil }
                bytes.append(highValue << 4 | lowValue)
                index = utf8.index(after: low)
            } else {
                bytes.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index = utf8.index(after: index)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The elements of a list field weighted by quality (`Accept`, `Accept-Encoding`; RFC 9110 §12.4.2),
    /// lower-cased, each with its `q=` (1 when absent or unreadable).
    static func weighted(_ field: String?) -> [(value: String, quality: Double)] {
        (field ?? "").split(separator: ",").compactMap { element in
            let parts = element.split(separator: ";").map { trimmed($0).lowercased() }
            guard let value = parts.first, !value.isEmpty else { return nil }
            let quality = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            return (value, quality)
        }
    }

    /// The text without leading and trailing spaces and tabs: what `trimmingCharacters(in: .whitespaces)`
    /// removes (tab, Unicode's space separators, and U+200B ZERO WIDTH SPACE, which Foundation's set still
    /// holds from before Unicode 4.0.1 moved it out of them), without going through Foundation.
    static func trimmed(_ text: String) -> String { trimmed(text[...]) }

    static func trimmed(_ text: Substring) -> String {
        func isSpace(_ scalar: Unicode.Scalar) -> Bool {
            scalar == "\t" || scalar == "\u{200B}" || scalar.properties.generalCategory == .spaceSeparator
        }
        // Most values have nothing to trim: a printable ASCII byte at each end.
        if let head = text.utf8.first, let tail = text.utf8.last,
            (0x21..<0x7F).contains(head), (0x21..<0x7F).contains(tail)
        {
            return String(text)
        }
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !isSpace($0) }),
            let last = scalars.lastIndex(where: { !isSpace($0) })
        else { return "" }
        var kept = String.UnicodeScalarView()
        kept.append(contentsOf: scalars[first...last])
        return String(kept)
    }
}
