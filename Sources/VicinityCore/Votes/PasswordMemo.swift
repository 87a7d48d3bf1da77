import Crypto
import Foundation
import Synchronization

/// Remembers, in process memory only, each vote's password once a ballot has proved it, as an HMAC under a key
/// made at start-up and never written anywhere.
///
/// A vote's password is the same for every voter, so checking it with bcrypt for each of a lecture hall's
/// ballots would spend ~48 ms of a core per ballot (cost 10) to learn the same thing again: 1,000 ballots at
/// once would queue for 24 s on two cores. After the first correct ballot, a check is one HMAC; ballots that
/// arrive while the first check runs wait for it rather than each starting bcrypt. The store still holds only
/// the bcrypt hash, so a copied database gives nothing faster than bcrypt; the memo dies with the process.
/// Wrong guesses are still limited by the guessing guard, whatever they cost to check.
final class PasswordMemo: Sendable {
    private struct State {
        /// Not `Sendable`, so it lives behind the lock.
        let key = SymmetricKey(size: .bits256)
        var codes: [VoteID: Data] = [:]
        /// The bcrypt check under way for each vote, and whether it has said yes.
        var pending: [VoteID: Task<Bool, any Error>] = [:]
    }

    private let state = Mutex(State())
    /// Votes remembered at most; past it the memo starts afresh (32 bytes a vote, so about 3 MB).
    static var capacity: Int { 100_000 }

    /// Whether `password` is the vote's: from memory when a ballot has proved the password, else by `bcrypt`,
    /// run once at a time per vote so that a burst of ballots for a new vote waits for one check.
    func verify(
        _ password: VotePassword, vote: VoteID, bcrypt: @escaping @Sendable () async throws -> Bool
    ) async throws -> Bool {
        if let known = known(password, vote: vote) { return known }
        let message = Self.message(password, vote)
        let (check, leads): (Task<Bool, any Error>, Bool) = state.withLock { state in
            if let pending = state.pending[vote] { return (pending, false) }
            // The check records its answer before it ends, so that whoever awaits it finds the code.
            let check = Task {
                let matches: Bool
                do { matches = try await bcrypt() } catch {
                    self.state.withLock { _ = $0.pending.removeValue(forKey: vote) }
                    throw error
                }
                self.state.withLock { state in
                    state.pending[vote] = nil
                    guard matches else { return }
                    if state.codes.count >= Self.capacity { state.codes.removeAll(keepingCapacity: true) }
                    state.codes[vote] = Data(HMAC<SHA256>.authenticationCode(for: message, using: state.key))
                }
                return matches
            }
            state.pending[vote] = check
            return (check, true)
        }
        let matches = try await check.value
        if leads { return matches }
        // The check under way was of someone else's password; if it was wrong, this one needs a check of its own.
        return try await verify(password, vote: vote, bcrypt: bcrypt)
    }

    /// Returns when no bcrypt check of the vote is under way: a ballot that arrives during the vote's first
    /// check waits here, before the guessing guard counts it as an attempt under way, and then usually finds
    /// the password known. Without this, a lecture hall voting at the same instant would fill its address's
    /// allowance of checks under way with right passwords.
    func settled(vote: VoteID) async {
        while let pending = state.withLock({ $0.pending[vote] }) { _ = try? await pending.value }
    }

    /// True or false when the vote's password is known here; nil when bcrypt must decide.
    func known(_ password: VotePassword, vote: VoteID) -> Bool? {
        let message = Self.message(password, vote)
        return state.withLock { state in
            guard let code = state.codes[vote] else { return nil }
            return HMAC<SHA256>.isValidAuthenticationCode(code, authenticating: message, using: state.key)
        }
    }

    private static func message(_ password: VotePassword, _ vote: VoteID) -> Data {
        Data((vote.rawValue + ":" + password.digits).utf8)
    }
}
