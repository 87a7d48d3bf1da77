import Foundation
import Synchronization

/// The VAPID header per push service origin, signed once and used until half its life is gone: RFC 8292 §2
/// lets a token serve every push to its audience until it expires, and signing one per push cost as much as
/// encrypting the push.
final class VAPIDTokenCache: Sendable {
    private struct Entry {
        var header: String
        var expires: Date
    }

    /// Push services are a handful of origins (FCM, Mozilla, Apple, Microsoft); registrations may name others,
    /// so the cache is bounded and starts over when full.
    static let capacity = 64

    private let entries = Mutex<[String: Entry]>([:])

    /// The header for `audience` at `now`, signed anew when there is none with more than half its life left.
    func authorization(audience: String, subject: VAPIDSubject, key: VAPIDKey, now: Date) throws(WebPushProblem) -> String {
        let fresh = VAPIDToken.lifetime / 2
        if let entry = entries.withLock({ $0[audience] }), entry.expires.timeIntervalSince(now) > Double(fresh.components.seconds) {
            return entry.header
        }
        let header = try VAPIDToken.authorization(audience: audience, subject: subject, key: key, now: now)
        let expires = now.addingTimeInterval(Double(VAPIDToken.lifetime.components.seconds))
        entries.withLock { entries in
            if entries.count >= Self.capacity, entries[audience] == nil { entries.removeAll() }
            entries[audience] = Entry(header: header, expires: expires)
        }
        return header
    }
}
