import Foundation
import Synchronization

/// The bearer token every request to APNs carries (Apple, "Establishing a token-based connection to APNs"): a JWT
/// signed with ES256 by the service's key, naming the key (`kid`), the team (`iss`) and when it was made (`iat`).
/// One token serves every request until it is due for renewal, or until APNs refuses it; every client copy and
/// every concurrent send share it.
final class APNsProviderToken: Sendable {
    /// Apple, "Establishing a token-based connection to APNs": "Refresh your token no more than once every 20
    /// minutes and no less than once every 60 minutes. APNs rejects any request whose token contains a timestamp
    /// that is more than one hour old", and a token made anew sooner than 20 minutes meets 429
    /// TooManyProviderTokenUpdates. 50 minutes is far past 20 and leaves 10 within the hour for a clock that runs
    /// behind Apple's and a request still under way.
    static let lifetime = Duration.seconds(50 * 60)

    /// The JOSE header: ES256 is the only algorithm APNs takes, and `kid` names the key to check with.
    struct Header: Encodable, Hashable {
        var alg = "ES256"
        var kid: String
    }

    /// `iss`, the team; `iat`, when the token was made, in whole seconds since 1970.
    struct Claims: Encodable, Hashable {
        var iss: String
        var iat: Int64
    }

    private struct Signed {
        var token: String
        var issuedAt: Date
    }

    private let key: APNsSigningKey
    private let keyID: APNsKeyID
    private let teamID: APNsTeamID
    private let current = Mutex<Signed?>(nil)

    init(key: APNsSigningKey, keyID: APNsKeyID, teamID: APNsTeamID) {
        self.key = key
        self.keyID = keyID
        self.teamID = teamID
    }

    /// The token to send at `now`: the one in hand while younger than `lifetime`, else a new one. Signed under
    /// the lock, so that sends racing at renewal make one token between them, not one each.
    func token(now: Date) throws(APNsProblem) -> String {
        try current.withLock { (held: inout Signed?) throws(APNsProblem) -> String in
            // A clock set back makes the token look younger than it is, or from the future: signed anew.
            if let signed = held, now >= signed.issuedAt,
               now.timeIntervalSince(signed.issuedAt) < Double(Self.lifetime.components.seconds) {
                return signed.token
            }
            let issuedAt = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
            let token = try sign(issuedAt: issuedAt)
            held = Signed(token: token, issuedAt: issuedAt)
            return token
        }
    }

    /// Forgets `token` after APNs refused it, so that the next send signs another; a newer token that a
    /// concurrent send already made is kept.
    func discard(_ token: String) {
        current.withLock { held in
            if held?.token == token { held = nil }
        }
    }

    private func sign(issuedAt: Date) throws(APNsProblem) -> String {
        do throws(KeyProblem) {
            return try ES256JWT.token(
                header: Header(kid: keyID.rawValue), claims: Claims(iss: teamID.rawValue, iat: Int64(issuedAt.timeIntervalSince1970)),
                key: key.key)
        } catch {
            throw APNsProblem("the APNs provider token \(error.description)")
        }
    }
}
