import GeoCore

/// Located votes: opening, finding, secret ballots, results, name conflicts and the announcement of finishes.
public struct VoteService<S: Stores>: Sendable {
    let stores: S
    let clock: any WallClock
    let hasher: any PasswordHasher
    let locator: Locator<S.Places, S.Campuses>
    let events: EventService<S>
    public let rules: VoteRules
    /// Which of the initiator's positions is current, when a vote is opened where they are: the friend
    /// finder's rule, so that "where I am" means one thing.
    let positions: PositionRules
    let passwordGuard: GuessingGuard<S.KeyedGuesses>
    let openings: WindowLimit<S.KeyedLimits>
    let unknownLookups: UnknownLookups<S.KeyedLimits>
    let memo = PasswordMemo()

    /// Finishes claimed per store call while announcing.
    static var announcementBatch: Int { 100 }

    public init(
        stores: S, clock: any WallClock, hasher: any PasswordHasher, locator: Locator<S.Places, S.Campuses>,
        events: EventService<S>, positions: PositionRules = .standard, rules: VoteRules = .standard, limitKeys: LimitKeys = .random()
    ) {
        self.positions = positions
        self.stores = stores
        self.clock = clock
        self.hasher = hasher
        self.locator = locator
        self.events = events
        self.rules = rules
        passwordGuard = GuessingGuard(rules: rules.passwords, limits: .votePassword, clock: clock, ledger: KeyedGuessingLedger(stores.guesses, keys: limitKeys))
        openings = WindowLimit(rules.openings, scope: .voteOpenings, clock: clock, ledger: KeyedWindowLedger(stores.limits, keys: limitKeys))
        unknownLookups = UnknownLookups(
            perPerson: rules.unknownLookups, perAddress: rules.unknownLookupsPerAddress, clock: clock, ledger: KeyedWindowLedger(stores.limits, keys: limitKeys))
    }

    // MARK: Opening and finding

    /// Opens a vote at the draft's place, or else at the caller's current position. In privacy mode the
    /// place must be given: a vote is public, and one opened where its initiator is would show where they are.
    public func open(_ draft: VoteDraft, by identity: Identity) async throws -> VoteView {
        guard let me = try await stores.accounts.account(id: identity.userID) else { throw ServiceError.unauthenticated }
        let location: Coordinate
        if let given = draft.location {
            location = given
        } else if me.privacyMode {
            let message = "is required while privacy mode is on: a vote opened where you are would show everyone where you are"
            throw ServiceError.invalid([ValidationError(field: "lat", message: message), ValidationError(field: "lon", message: message)])
        } else if let position = try await stores.positions.position(of: identity.userID),
            positions.isCurrent(position, at: clock.now)
        {
            location = position.coordinate
        } else {
            let message = "is required: you share no current position to hold the vote at"
            throw ServiceError.invalid([ValidationError(field: "lat", message: message), ValidationError(field: "lon", message: message)])
        }
        if let wait = try await openings.acquire(identity.userID.rawValue) { throw ServiceError.rateLimited(retryAfter: wait, .voteCreations) }
        let label = try await locator.whereabouts(of: location).label
        let hash = try await hasher.hash(draft.password.hashable)
        let now = clock.now
        // A taken id is drawn again; with 729 million ids, eight draws in a row all taken is out of reach.
        for _ in 0..<8 {
            let vote = Vote(
                id: .random(), initiator: identity.userID, subject: draft.subject, options: draft.options,
                participants: draft.participants, duration: draft.duration, visibility: draft.visibility,
                anonymous: draft.anonymous, verifiedOnly: draft.verifiedOnly ?? rules.verifiedOnlyByDefault, location: location,
                label: label, createdAt: now,
                settlingTime: rules.settlingTime)
            if try await stores.votes.createVote(vote, passwordHash: hash) {
                return VoteView(vote: vote, initiatorName: me.summary.displayName, state: vote.state(at: now))
            }
        }
        throw VoteIDsExhausted()
    }

    /// Open public votes within `radius` of `centre`, nearest first.
    public func nearby(around centre: Coordinate, radius: SearchRadius, limit: ResultLimit) async throws -> [VoteListing] {
        let now = clock.now
        let votes = try await stores.votes.openPublicVotes(near: centre, within: radius.distance, at: now, limit: limit.value)
        let names = try await initiatorNames(votes)
        return votes.compactMap { vote in
            guard let initiator = vote.initiator, let name = names[initiator] else { return nil }
            return VoteListing(
                view: VoteView(vote: vote, initiatorName: name, state: vote.state(at: now)),
                distance: haversineDistance(from: centre, to: vote.location),
                bearing: initialBearing(from: centre, to: vote.location))
        }
    }

    /// One vote's public facts, open or finished, for a signed-in caller who has its id, with the caller's own
    /// ballot: a voter sees what they chose while the vote is open, not only in the answer to their ballot.
    public func vote(_ id: VoteID, for identity: Identity, from address: ClientAddress) async throws -> VoteDetail {
        let vote = try await lookUp(id, by: identity, from: address) { try await stores.votes.vote(id: id) }
        return VoteDetail(
            view: try await view(vote), yourBallot: try await stores.votes.ballot(of: id, by: identity.userID),
            youInitiated: vote.initiator == identity.userID)
    }

    // MARK: History

    /// The caller's votes in the role (both when nil), newest first, at most `limit`.
    public func history(of identity: Identity, role: VoteRole?, limit: ResultLimit) async throws -> [VoteHistoryEntry] {
        var roles: [VoteID: [VoteRole]] = [:]
        var votes: [VoteID: Vote] = [:]
        for role in role.map({ [$0] }) ?? VoteRole.allCases {
            for vote in try await stores.votes.votes(of: identity.userID, role: role, limit: limit.value) {
                votes[vote.id] = vote
                roles[vote.id, default: []].append(role)
            }
        }
        let newestFirst = votes.values
            .sorted { a, b in a.createdAt != b.createdAt ? a.createdAt > b.createdAt : a.id > b.id }
            .prefix(limit.value)
        let names = try await initiatorNames(Array(newestFirst))
        let now = clock.now
        return newestFirst.map { vote in
            VoteHistoryEntry(
                view: VoteView(vote: vote, initiatorName: vote.initiator.flatMap { names[$0] }, state: vote.state(at: now)),
                roles: roles[vote.id] ?? [])
        }
    }

    // MARK: Helpers

    /// bcrypt decides the first correct password of a vote; the memo answers after that.
    func passwordMatches(_ password: VotePassword, vote: VoteID, hash: PasswordHash) async throws -> Bool {
        let hasher = hasher
        return try await memo.verify(password, vote: vote) { try await hasher.verify(password.digits, against: hash) }
    }

    /// What `read` finds for a vote id the caller gives. An id that names no vote counts against the caller's
    /// and the address's lookups of unknown ids, and a caller past either limit is refused whether or not the
    /// id names a vote (`UnknownLookups`): ids cannot be scanned faster than the limits allow.
    func lookUp<Found>(
        _ id: VoteID, by identity: Identity, from address: ClientAddress, _ read: () async throws -> Found?
    ) async throws -> Found {
        let found = try await read()
        try await unknownLookups.check(identity.userID, address, missed: found == nil)
        guard let found else { throw ServiceError.notFound(.vote) }
        return found
    }

    /// The accounts of these users, by id, for what the initiator sees of a name conflict.
    func accounts(of users: [UserID]) async throws -> [UserID: Account] {
        var found: [UserID: Account] = [:]
        for user in Set(users) { found[user] = try await stores.accounts.account(id: user) }
        return found
    }

    /// The vote, when the caller opened it; others may not settle or change it.
    func initiated(_ id: VoteID, by identity: Identity, from address: ClientAddress) async throws -> Vote {
        let vote = try await lookUp(id, by: identity, from: address) { try await stores.votes.vote(id: id) }
        guard vote.initiator == identity.userID else {
            throw ServiceError.forbidden("Only the initiator of this vote settles, changes or ends it.")
        }
        return vote
    }

    func view(_ vote: Vote) async throws -> VoteView {
        VoteView(vote: vote, initiatorName: try await initiatorName(vote), state: vote.state(at: clock.now))
    }

    /// The initiator's name; nil once they deleted their account.
    func initiatorName(_ vote: Vote) async throws -> String? {
        guard let initiator = vote.initiator else { return nil }
        return try await initiatorNames([vote])[initiator]
    }

    func initiatorNames(_ votes: [Vote]) async throws -> [UserID: String] {
        try await stores.accounts.summaries(of: votes.compactMap(\.initiator)).mapValues(\.displayName)
    }
}

/// Eight random vote ids in a row were taken: the id space is nearly full, which no real use reaches.
public struct VoteIDsExhausted: Error, Hashable, Sendable {}
