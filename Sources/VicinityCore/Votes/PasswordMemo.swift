import Crypto
import Foundation
import Synchronization

/// Remembers, in process memory only, each vote's password once a ballot has proved it, as an HMAC under a key
/// made at start-up and never written anywhere.
///
/// A vote's password is the same for every voter, so checking it with bcrypt for each of a lecture hall's
/// ballots would spend ~48 ms of a core per ballot (cost 10) to learn the same thing again: 1,000 ballots at
/// once would queue for 24 s on two cores. After the first correct ballot, a check is one HMAC. The store
/// still holds only the bcrypt hash, so a copied database gives nothing faster than bcrypt; the memo dies with
/// the process. Wrong guesses are still limited by the guessing guard, whatever they cost to check.
final class PasswordMemo: Sendable {
    /// The key lives behind the lock with the codes, as `SymmetricKey` is not `Sendable`.
    private let state = Mutex<(key: SymmetricKey, codes: [VoteID: Data])>((SymmetricKey(size: .bits256), [:]))
    /// Votes remembered at most; past it the memo starts afresh (32 bytes a vote, so about 3 MB).
    static var capacity: Int { 100_000 }

    /// True or false when the vote's password is known here; nil when bcrypt must decide.
    func matches(_ password: VotePassword, vote: VoteID) -> Bool? {
        let message = Self.message(password, vote)
        return state.withLock { state in
            guard let known = state.codes[vote] else { return nil }
            return HMAC<SHA256>.isValidAuthenticationCode(known, authenticating: message, using: state.key)
        }
    }

    /// Records a password that bcrypt has just accepted for the vote.
    func remember(_ password: VotePassword, vote: VoteID) {
        let message = Self.message(password, vote)
        state.withLock { state in
            if state.codes.count >= Self.capacity { state.codes.removeAll(keepingCapacity: true) }
            state.codes[vote] = Data(HMAC<SHA256>.authenticationCode(for: message, using: state.key))
        }
    }

    private static func message(_ password: VotePassword, _ vote: VoteID) -> Data {
        Data((vote.rawValue + ":" + password.digits).utf8)
    }
}
