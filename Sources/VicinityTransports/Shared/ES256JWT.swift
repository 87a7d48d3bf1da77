import Foundation
import VicinityCore

/// A JWT (RFC 7519) in the compact serialization of RFC 7515 §7.1, signed with ES256 (RFC 7518 §3.4): header,
/// claims and signature, each base64url without padding, joined by dots. VAPID (RFC 8292 §2) and APNs provider
/// tokens are both one.
enum ES256JWT {
    /// The token for `header` and `claims`, each written as JSON with its keys in a fixed order and slashes as
    /// they are, so that an https subject reads as written.
    static func token(header: some Encodable, claims: some Encodable, key: ES256Key) throws(KeyProblem) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let headerJSON: Data, claimsJSON: Data
        do {
            headerJSON = try encoder.encode(header)
            claimsJSON = try encoder.encode(claims)
        } catch {
            throw KeyProblem("could not be written: \(error)")
        }
        let signingInput = Base64URL.encode(Array(headerJSON)) + "." + Base64URL.encode(Array(claimsJSON))
        return signingInput + "." + Base64URL.encode(try key.sign(Array(signingInput.utf8)))
    }
}
