import Foundation

/// The `Authorization` header of RFC 8292 §3: `vapid t=<JWT>, k=<public key>`, the JWT (RFC 7519) signed with
/// ES256 and claiming the push service's origin (`aud`), an expiry (`exp`) and who to contact (`sub`).
enum VAPIDToken {
    /// RFC 8292 §2: the JWT header; ES256 is the only algorithm a push service must accept.
    struct Header: Encodable, Hashable {
        var typ = "JWT"
        var alg = "ES256"
    }

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

    /// The signed token for `claims`.
    static func jwt(_ claims: Claims, key: VAPIDKey) throws(WebPushProblem) -> String {
        do throws(KeyProblem) {
            return try ES256JWT.token(header: Header(), claims: claims, key: key.key)
        } catch {
            throw WebPushProblem("the VAPID token \(error.description)")
        }
    }
}
