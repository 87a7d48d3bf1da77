import Foundation
import VicinityCore

/// The `Authorization` header of RFC 8292 §3: `vapid t=<JWT>, k=<public key>`, the JWT (RFC 7519) signed with
/// ES256 and claiming the push service's origin (`aud`), an expiry (`exp`) and who to contact (`sub`).
enum VAPIDToken {
    /// RFC 8292 §2: the JWT header; ES256 is the only algorithm a push service must accept.
    static let header = #"{"typ":"JWT","alg":"ES256"}"#
    /// RFC 8292 §2: a push service refuses an expiry more than 24 hours ahead; 12 leaves room for a clock that
    /// runs ahead of the push service's.
    static let lifetime = Duration.seconds(12 * 3600)

    /// RFC 8292 §2 and RFC 7519 §4.1: the claims, `exp` in whole seconds since 1970.
    struct Claims: Encodable, Hashable {
        var aud: String
        var exp: Int64
        var sub: String
    }

    /// The header value for a request to `audience` (an origin, `WebPushSubscription.origin`) at `now`.
    static func authorization(audience: String, subject: VAPIDSubject, key: VAPIDKey, now: Date) throws(WebPushProblem) -> String {
        let expiry = Int64(now.timeIntervalSince1970.rounded(.down)) + lifetime.components.seconds
        let token = try jwt(Claims(aud: audience, exp: expiry, sub: subject.rawValue), key: key)
        return "vapid t=\(token), k=\(key.publicKeyBase64URL)"
    }

    /// RFC 7515 §7.1 compact serialization: header, claims and signature, each base64url, joined by dots.
    static func jwt(_ claims: Claims, key: VAPIDKey) throws(WebPushProblem) -> String {
        let encoder = JSONEncoder()
        // Slashes unescaped, so that an https subject reads as written; keys in a fixed order.
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let payload: Data
        do {
            payload = try encoder.encode(claims)
        } catch {
            throw WebPushProblem("the VAPID claims could not be written: \(error)")
        }
        let signingInput = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload))
        return signingInput + "." + Base64URL.encode(try key.sign(Array(signingInput.utf8)))
    }
}
