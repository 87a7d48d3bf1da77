import VicinityCore

extension SQLRecordStore {
    /// In one transaction: the votes the person opened are called off where not over (`cancel`), their voters
    /// told (`announcements`), and kept naming nobody; their ballots stay counted and name nobody; their
    /// sessions, position, friendships, requests, codes, waiting messages, the events kept for them and the
    /// events about them (pokes, requests, acceptances they sent) are removed, then the account. Once it
    /// commits, what the store's files still hold of it is scrubbed (`scrubDeleted`).
    public func deleteAccount(
        _ id: UserID, at now: Timestamp, cancel: @escaping @Sendable (inout StoredVote) -> Bool,
        announcements: @escaping @Sendable (Vote, [Ballot]) -> [EventDraft]
    ) async throws -> Bool {
        let person = SQLValue.text(id.rawValue)
        let deleted = try await write(.select(StoredAccount.self, where: .equals("id", person), lock: .forUpdate) { found in
            guard !found.isEmpty else { return .done(false) }
            return .select(StoredVote.self, where: .equals("initiator_id", person), order: [.ascending("id")], lock: .forUpdate) { opened in
                Self.leaving(opened[...], kept: [], drafts: [], cancel: cancel, announcements: announcements) { votes, drafts in
                    let nobody: [(column: String, value: SQLValue)] = [("voter_id", .null), ("voter_name", .null), ("name_key", .null)]
                    let writes: [SQLWrite] = votes.map { StoredVote.update($0) } + [
                        .set(Ballot.table, nobody, where: .equals("voter_id", person)),
                        Event.delete(where: .or([.equals("recipient_id", person), .equals("about_id", person)])),
                        Session.delete(where: .equals("account_id", person)),
                        SharedPosition.delete(where: .equals("account_id", person)),
                        FriendshipSide.delete(where: .or([.equals("account_id", person), .equals("friend_id", person)])),
                        FriendRequest.delete(where: .or([.equals("from_id", person), .equals("to_id", person)])),
                        WatchPermission.delete(where: .or([.equals("person_id", person), .equals("watcher_id", person)])),
                        Alert.delete(where: .or([.equals("watcher_id", person), .equals("watched_id", person)])),
                        StoredCode.delete(where: .equals("account_id", person)),
                        OutboxMessage.delete(where: .or([.equals("account_id", person), .equals("about_id", person)])),
                        StoredDevice.delete(where: .equals("account_id", person)),
                        PushSubscription.delete(where: .equals("account_id", person)),
                        PushPreferences.delete(where: .equals("account_id", person)),
                        StoredAccount.delete(where: .equals("id", person)),
                    ]
                    return .writing(writes) { _ in .appending(drafts) { _ in .done(true) } }
                }
            }
        })
        if deleted { try await scrubDeleted() }
        return deleted
    }

    /// Calls off each vote the person opened that is not over, reading its ballots for what is told of it, and
    /// leaves every one naming nobody; then goes on with the votes to write back and the events to record.
    private static func leaving(
        _ opened: ArraySlice<StoredVote>, kept: [StoredVote], drafts: [EventDraft],
        cancel: @escaping @Sendable (inout StoredVote) -> Bool,
        announcements: @escaping @Sendable (Vote, [Ballot]) -> [EventDraft],
        _ next: @escaping @Sendable ([StoredVote], [EventDraft]) throws -> SQLPlan<Bool>
    ) -> SQLPlan<Bool> {
        guard var vote = opened.first else { return .writing([]) { _ in try next(kept, drafts) } }
        let cancelled = cancel(&vote)
        vote.vote.initiator = nil
        let left = vote
        guard cancelled else {
            return leaving(opened.dropFirst(), kept: kept + [left], drafts: drafts, cancel: cancel, announcements: announcements, next)
        }
        return .ballots(of: left.vote.id) { ballots in
            leaving(
                opened.dropFirst(), kept: kept + [left], drafts: drafts + announcements(left.vote, ballots), cancel: cancel,
                announcements: announcements, next)
        }
    }
}
