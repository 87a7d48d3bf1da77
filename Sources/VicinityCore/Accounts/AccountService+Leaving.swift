/// A new password, deleting an account, disabling one, and a copy of what the service holds about a person.
extension AccountService {
    /// Sets a new password, given the current one (which counts as a sign-in attempt: a stolen token must not
    /// become a way to guess it), or within `CodeRules.recentCodeSignIn` of signing in with a mailed code:
    /// that is how a forgotten password is reset. Every other session of the account ends, and its streams.
    public func setPassword(
        _ password: Password, current: String?, for identity: Identity, from address: ClientAddress
    ) async throws -> Account {
        var stored = try await confirmed(identity, password: current, from: address)
        stored.passwordHash = try await hasher.hash(password)
        guard try await stores.accounts.updateAccount(stored, ending: .allBut(identity.session)) else {
            throw ServiceError.unauthenticated
        }
        streams.endStreams(of: identity.userID, sessions: .allBut(identity.session))
        return stored.account
    }

    /// Deletes the caller's account and everything about them (`AccountStore.deleteAccount`), given their
    /// password or within `CodeRules.recentCodeSignIn` of a code sign-in. Every session and stream ends.
    public func deleteAccount(_ identity: Identity, password: String?, from address: ClientAddress) async throws {
        _ = try await confirmed(identity, password: password, from: address)
        guard try await delete(identity.userID) else { throw ServiceError.unauthenticated }
    }

    /// Deletes an account as an operator asks (`vicinity users delete`): no password. False when there is none.
    public func deleteAccount(_ id: UserID) async throws -> Bool {
        try await delete(id)
    }

    /// Disables or enables an account as an operator asks: a disabled account cannot sign in, and its sessions
    /// end at once. Nil when there is no such account.
    public func setDisabled(_ disabled: Bool, account id: UserID) async throws -> Account? {
        guard var stored = try await stores.accounts.storedAccount(id: id) else { return nil }
        stored.account.disabled = disabled
        guard try await stores.accounts.updateAccount(stored, ending: disabled ? .all : .none) else { return nil }
        if disabled { streams.endStreams(of: id, sessions: .all) }
        return stored.account
    }

    /// Everything the service holds about the caller, as one document: the account, their position, their
    /// friends, requests and blocks, the votes they opened, their own ballots with their choices, and the events kept
    /// for them.
    public func export(_ identity: Identity) async throws -> AccountExport {
        let id = identity.userID
        let account = try await me(identity)
        let friendships = try await stores.friends.friendships(of: id)
        let requests = try await stores.friends.friendRequests(of: id)
        let blocks = try await stores.friends.blocks(involving: id).filter { $0.blocker == id }
        let people = try await stores.accounts.summaries(
            of: friendships.map(\.friend) + requests.flatMap { [$0.from, $0.to] } + blocks.map(\.blocked))
        let ballots = try await stores.votes.ballots(by: id)
        var votes: [VoteID: Vote] = [:]
        for vote in try await stores.votes.votes(of: id, role: .initiated, limit: Int.max) { votes[vote.id] = vote }
        for ballot in ballots where votes[ballot.vote] == nil { votes[ballot.vote] = try await stores.votes.vote(id: ballot.vote) }
        return AccountExport(
            account: account, position: try await stores.positions.position(of: id),
            friends: friendships.compactMap { friendship in people[friendship.friend].map { (friendship, $0) } },
            requests: requests.compactMap { request in
                guard let from = people[request.from], let to = people[request.to] else { return nil }
                return FriendRequestView(request: request, from: from, to: to)
            },
            blocks: blocks.sorted { $0.createdAt < $1.createdAt }.compactMap { block in
                people[block.blocked].map { BlockView(person: $0, since: block.createdAt) }
            },
            votesStarted: votes.values.filter { $0.initiator == id }.sorted { $0.createdAt < $1.createdAt },
            ballots: ballots.compactMap { ballot in votes[ballot.vote].map { (ballot, $0) } },
            events: try await stores.events.events(for: id, after: nil, since: Timestamp(millisecondsSince1970: 0), limit: Int.max),
            devices: try await stores.devices.devices(of: id),
            pushDevices: try await stores.push.pushSubscriptions(of: id),
            pushPreferences: try await stores.push.pushPreferences(of: id),
            at: clock.now)
    }

    // MARK: Helpers

    /// The caller's account once they proved it is theirs: with the current password (under the sign-in guard),
    /// or by a session a mailed code opened within `CodeRules.recentCodeSignIn`.
    private func confirmed(_ identity: Identity, password: String?, from address: ClientAddress) async throws -> StoredAccount {
        guard let stored = try await stores.accounts.storedAccount(id: identity.userID) else { throw ServiceError.unauthenticated }
        if let password {
            let matched = try await guardedCheck(key: stored.account.username.key, from: address) { () async throws -> Bool? in
                guard let hash = stored.passwordHash else { return nil }
                return try await hasher.verify(password, against: hash) ? true : nil
            }
            guard matched != nil else { throw ServiceError.forbidden("The current password is wrong.") }
            return stored
        }
        guard let since = identity.codeSignIn, clock.now - since <= rules.codes.recentCodeSignIn else {
            throw ServiceError.forbidden(
                "Give your current password, or sign in with a code mailed to you first: for \(rules.codes.recentCodeSignIn.wholeSecondsRoundedUp / 60) minutes after that no password is needed.")
        }
        return stored
    }

    private func delete(_ id: UserID) async throws -> Bool {
        let now = clock.now
        let deleted = try await stores.accounts.deleteAccount(id, at: now, cancel: { stored in
            guard (try? stored.vote.apply(.cancel, at: now)) != nil else { return false }
            return stored.claimAnnouncement(at: now)
        }, announcements: { vote, ballots in VoteAnnouncements.events(of: vote, ballots: ballots, at: now) })
        if deleted { streams.endStreams(of: id, sessions: .all) }
        return deleted
    }
}

/// Everything the service holds about one person, as they asked for it.
public struct AccountExport: Sendable {
    public var account: Account
    public var position: SharedPosition?
    public var friends: [(friendship: Friendship, person: UserSummary)]
    public var requests: [FriendRequestView]
    /// The people they blocked (never who blocked them: that stays untold).
    public var blocks: [BlockView]
    public var votesStarted: [Vote]
    /// Their own ballots, with their choices, each with its vote.
    public var ballots: [(ballot: Ballot, vote: Vote)]
    public var events: [Event]
    /// Their phones' device passwords: names and times, never a secret, which is not kept.
    public var devices: [Device]
    /// Browsers and phones registered for pushes, as their list shows them, and what they mute.
    public var pushDevices: [PushSubscription]
    public var pushPreferences: PushPreferences
    public var at: Timestamp
}
