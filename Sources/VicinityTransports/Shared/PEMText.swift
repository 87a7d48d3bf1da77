import Foundation

/// The PEM blocks of a text (RFC 7468 §2): each `-----BEGIN LABEL-----` … `-----END LABEL-----` with what lies
/// between, anything around them ignored, as OpenSSL reads a key file (`openssl ecparam -genkey` writes an
/// `EC PARAMETERS` block before the key; other tools add comments).
enum PEMText {
    struct Block: Hashable {
        var label: String
        /// The block alone, one line a line, as a single-block PEM parser takes it.
        var text: String
        /// Whether RFC 1421 header lines (`Proc-Type: 4,ENCRYPTED`) come before the base64: a key encrypted
        /// the old OpenSSL way.
        var hasHeaders: Bool
    }

    static func blocks(in text: String) -> [Block] {
        var blocks: [Block] = []
        var open: (label: String, lines: [String])?
        for line in text.split(whereSeparator: \.isNewline).map({ $0.trimmingCharacters(in: .whitespaces) }) {
            if let current = open {
                if line == "-----END \(current.label)-----" {
                    let body = current.lines.filter { !$0.isEmpty }
                    let base64 = body.filter { !$0.contains(":") }
                    blocks.append(Block(
                        label: current.label,
                        text: (["-----BEGIN \(current.label)-----"] + base64 + [line]).joined(separator: "\n"),
                        hasHeaders: base64.count < body.count))
                    open = nil
                } else {
                    open?.lines.append(line)
                }
            } else if line.hasPrefix("-----BEGIN "), line.hasSuffix("-----") {
                open = (String(line.dropFirst("-----BEGIN ".count).dropLast("-----".count)), [])
            }
        }
        return blocks
    }
}
