import Foundation

/// Who runs the application server, for a push service's operators to reach when its pushes misbehave
/// (RFC 8292 §2.1): a `mailto:` address or an `https:` URL (`serve --vapid-subject`).
public struct VAPIDSubject: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(_ text: String) throws(WebPushProblem) {
        guard !text.isEmpty, !text.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.properties.generalCategory == .control })
        else {
            throw WebPushProblem("the VAPID subject is a mailto: address or an https: URL, without spaces")
        }
        if text.lowercased().hasPrefix("mailto:") {
            let address = text.dropFirst("mailto:".count)
            guard let at = address.firstIndex(of: "@"), at != address.startIndex, address.index(after: at) != address.endIndex else {
                throw WebPushProblem("the VAPID subject \(text) is not a mailto: address (mailto:someone@example.org)")
            }
        } else {
            guard let components = URLComponents(string: text), components.scheme?.lowercased() == "https",
                  let host = components.host, !host.isEmpty
            else {
                throw WebPushProblem("the VAPID subject \(text) is neither a mailto: address nor an https: URL")
            }
        }
        rawValue = text
    }

    public var description: String { rawValue }
}
