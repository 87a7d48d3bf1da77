import AsyncHTTPClient
import NIOCore

/// The start of an answer's body, read for the words of a refusal: push services put their reason there. Read
/// also when the push was taken, so that the connection is left clean for the next one.
enum ResponseText {
    /// At most `limit` octets of `body`; what a body cut short left.
    static func prefix(of body: HTTPClientResponse.Body, limit: Int) async -> [UInt8] {
        var bytes: [UInt8] = []
        do {
            for try await chunk in body {
                bytes.append(contentsOf: chunk.readableBytesView.prefix(limit - bytes.count))
                if bytes.count >= limit { break }
            }
        } catch {
            // The reason is a courtesy: a body cut short leaves the status to speak.
        }
        return bytes
    }

    /// `bytes` as one line of printable characters: safe to log and to keep in the outbox.
    static func printable(_ bytes: [UInt8]) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        let printable = String(String.UnicodeScalarView(text.unicodeScalars.map {
            $0.properties.generalCategory == .control ? " " : $0
        }))
        return printable.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
    }
}
