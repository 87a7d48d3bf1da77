import GeoCore

/// The vote app's rules: limits on guessing passwords and on opening votes.
public struct VoteRules: Hashable, Sendable {
    /// Wrong passwords per person and vote, and per client address over all votes. With the standard rules a
    /// person gets 5 tries, then waits 15 minutes (the right password refused too), 30 after the next 5, and
    /// so on up to a day; an address gets 100 wrong passwords in 15 minutes. Sign-ups are limited per address
    /// (`AccountRules.signUpsPerAddress`), so new accounts do not buy new tries faster than that: one address
    /// tries at most 400 of the million passwords an hour.
    public var passwords: GuessingRules
    /// Votes one person opens. Thirty an hour is a busy teacher's day of polls; it keeps one account from
    /// filling a campus's list of nearby votes.
    public var openings: RateLimit
    /// How often the server looks for votes whose time ran out, to tell their voters: the longest a
    /// "vote finished" event may come after `closes_at`. Votes that fill up are told at their last ballot.
    public var announcementInterval: Duration
    /// Lookups of vote ids that name no vote, per person and per client address. Ids are six of 30 symbols
    /// (729 million); a person who mistypes one a few times stays far below 20 an hour, while a scanner is held
    /// to 100 an hour per address however many accounts it makes: 2,400 ids a day, one in 300,000 of them.
    public var unknownLookups: RateLimit
    public var unknownLookupsPerAddress: RateLimit
    /// How long an initiator has to settle name conflicts before the result is published as it stands: a day
    /// reaches a teacher who opened a vote in the morning's lecture by the next one. Fixed in each vote when it
    /// opens.
    public var settlingTime: Duration

    public static let standard = VoteRules(
        passwords: .standard, openings: RateLimit(limit: 30, window: .seconds(3600)), announcementInterval: .seconds(1),
        unknownLookups: RateLimit(limit: 20, window: .seconds(3600)),
        unknownLookupsPerAddress: RateLimit(limit: 100, window: .seconds(3600)), settlingTime: .seconds(24 * 3600))

    public init(
        passwords: GuessingRules, openings: RateLimit, announcementInterval: Duration, unknownLookups: RateLimit,
        unknownLookupsPerAddress: RateLimit, settlingTime: Duration
    ) {
        self.passwords = passwords
        self.openings = openings
        self.announcementInterval = announcementInterval
        self.unknownLookups = unknownLookups
        self.unknownLookupsPerAddress = unknownLookupsPerAddress
        self.settlingTime = settlingTime
    }
}

/// A vote's public facts: what anyone given its id may see. No tally, no choice, no password.
public struct VoteView: Hashable, Sendable {
    public var vote: Vote
    public var initiatorName: String
    public var state: VoteState

    /// How a finished vote's result came out of settling; nil when there was nothing to settle or it has not
    /// finished.
    public var settlement: Settlement? {
        guard vote.nameConflict, case .finished(_, let at) = state else { return nil }
        return Settlement(by: vote.publishedAt == nil ? .time : .initiator, at: at)
    }
}

/// A vote found nearby.
public struct VoteListing: Hashable, Sendable {
    public var view: VoteView
    public var distance: Distance
    public var bearing: Bearing
}

/// The voter's own ballot after casting it, and the vote as it then stands.
public struct BallotReceipt: Hashable, Sendable {
    public var ballot: Ballot
    public var view: VoteView
}

/// Someone who voted, as a result names them: never with their choice.
public struct VoterEntry: Hashable, Sendable {
    public var name: String
    public var counted: Bool
}

/// A vote's public facts as one person reads them by its id: with their own ballot, when they cast one.
public struct VoteDetail: Hashable, Sendable {
    public var view: VoteView
    /// The caller's ballot, with their choice; nil when they have not voted. Shown to its voter only.
    public var yourBallot: Ballot?
    /// Whether the caller opened the vote, so that an app offers its controls to them alone.
    public var youInitiated: Bool
}

/// A finished vote's result.
public struct VoteResult: Hashable, Sendable {
    public var view: VoteView
    /// Counted ballots per option, by option index.
    public var tally: [Int]
    /// The options with the most counted ballots, by index; several on a tie, none when nothing was counted.
    public var winners: [Int]
    public var ballotsCounted: Int
    /// Ballots the initiator voided while settling name conflicts.
    public var ballotsVoided: Int
    /// Those who voted, by name (ties in the order cast); nil for an anonymous vote.
    public var voters: [VoterEntry]?
    /// The caller's own ballot, with their choice; nil when they did not vote.
    public var yourBallot: Ballot?
}

/// A ballot as the initiator sees it when settling a conflict: who cast it and whether it counts, never what
/// it chose. The type holds no option, so no answer built from it can show one.
public struct BallotSummary: Hashable, Sendable {
    public var id: BallotID
    public var voter: UserSummary
    /// When the voter's account was made: an account made for the occasion, under a voter's name, stands out.
    public var voterSince: Timestamp
    public var voterName: String
    public var castAt: Timestamp
    public var counted: Bool

    /// Everything of the ballot but its choice.
    init(_ ballot: Ballot, voter: Account) {
        id = ballot.id
        self.voter = voter.summary
        voterSince = voter.createdAt
        voterName = ballot.voterName
        castAt = ballot.castAt
        counted = ballot.counted
    }
}

/// Two or more ballots whose voters' names read the same.
public struct NameConflict: Hashable, Sendable {
    public var name: String
    public var ballots: [BallotSummary]
}

/// A vote in someone's history.
public struct VoteHistoryEntry: Hashable, Sendable {
    public var view: VoteView
    public var roles: [VoteRole]
}

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
    private let passwordGuard: GuessingGuard<S.Guesses>
    private let openings: WindowLimit<S.Limits>
    private let unknownLookups: UnknownLookups<S.Limits>
    private let memo = PasswordMemo()

    /// Finishes claimed per store call while announcing.
    static var announcementBatch: Int { 100 }

    public init(
        stores: S, clock: any WallClock, hasher: any PasswordHasher, locator: Locator<S.Places, S.Campuses>,
        events: EventService<S>, positions: PositionRules = .standard, rules: VoteRules = .standard
    ) {
        self.positions = positions
        self.stores = stores
        self.clock = clock
        self.hasher = hasher
        self.locator = locator
        self.events = events
        self.rules = rules
        passwordGuard = GuessingGuard(rules: rules.passwords, limits: .votePassword, clock: clock, ledger: stores.guesses)
        openings = WindowLimit(rules.openings, scope: .voteOpenings, clock: clock, ledger: stores.limits)
        unknownLookups = UnknownLookups(
            perPerson: rules.unknownLookups, perAddress: rules.unknownLookupsPerAddress, clock: clock, ledger: stores.limits)
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
                anonymous: draft.anonymous, location: location, label: label, createdAt: now,
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
            guard let name = names[vote.initiator] else { return nil }
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

    // MARK: Ballots

    /// Casts the caller's one ballot. The password is checked under the guessing guard, after everything that
    /// needs no password (so that a finished vote or a second ballot never costs a try) and before anything
    /// is written.
    public func castBallot(
        on id: VoteID, password text: String, option index: Int, by identity: Identity, from address: ClientAddress
    ) async throws -> BallotReceipt {
        let (vote, hash) = try await lookUp(id, by: identity, from: address) { try await stores.votes.voteForBallot(id: id) }
        switch vote.state(at: clock.now) {
        case .open: break
        case .cancelled: throw ServiceError.conflict(.voteCancelled)
        case .settling, .finished: throw ServiceError.conflict(.voteFinished)
        }
        var problems: [ValidationError] = []
        var option = 0
        var password: VotePassword?
        do throws(ValidationError) { option = try vote.options.option(index) } catch { problems.append(error) }
        do throws(ValidationError) { password = try VotePassword(text) } catch { problems.append(error) }
        guard problems.isEmpty, let password else { throw ServiceError.invalid(problems) }
        if try await stores.votes.ballot(of: id, by: identity.userID) != nil { throw ServiceError.conflict(.alreadyVoted) }
        // The voter's name goes on the ballot, the initiator's on the receipt: one read for both.
        let people = try await stores.accounts.summaries(of: [identity.userID, vote.initiator])
        guard let me = people[identity.userID] else { throw ServiceError.unauthenticated }
        guard let initiator = people[vote.initiator] else { throw ServiceError.notFound(.vote) }

        let key = id.rawValue + " " + identity.userID.rawValue
        await memo.settled(vote: id)
        let attempt = try await passwordGuard.begin(account: key, address: address.rawValue)
        let matches: Bool
        do { matches = try await passwordMatches(password, vote: id, hash: hash) } catch {
            try? await passwordGuard.abandoned(attempt)
            throw error
        }
        guard matches else {
            let delay = try await passwordGuard.failed(attempt)
            if delay > .zero { try await clock.sleep(for: delay) }
            throw ServiceError.forbidden("The password of this vote is wrong.")
        }
        try await passwordGuard.succeeded(attempt)

        let ballot = Ballot(
            id: .random(), vote: id, voter: identity.userID, voterName: me.displayName, option: option,
            castAt: clock.now)
        switch try await stores.votes.castBallot(ballot, answering: vote.question) {
        case .noSuchVote: throw ServiceError.notFound(.vote)
        case .finished: throw ServiceError.conflict(.voteFinished)
        case .questionChanged: throw ServiceError.conflict(.questionChanged)
        case .alreadyVoted: throw ServiceError.conflict(.alreadyVoted)
        case .cast(let after):
            if after.completedAt != nil { try await announceFinishes() }
            return BallotReceipt(ballot: ballot, view: VoteView(vote: after, initiatorName: initiator.displayName, state: after.state(at: clock.now)))
        }
    }

    /// The result of a finished vote, with the caller's own ballot; before the finish, `voteNotFinished` with
    /// how far it has got, or `voteSettling` with when it comes at the latest. Only the initiator and those who
    /// voted see it, for public and private votes alike.
    public func result(of id: VoteID, for identity: Identity, from address: ClientAddress) async throws -> VoteResult {
        let vote = try await lookUp(id, by: identity, from: address) { try await stores.votes.vote(id: id) }
        let voted = vote.initiator == identity.userID ? true : try await stores.votes.ballot(of: id, by: identity.userID) != nil
        guard voted else { throw ServiceError.forbidden("Only the initiator of this vote and those who voted in it see its result.") }
        switch vote.state(at: clock.now) {
        case .open:
            throw ServiceError.conflict(.voteNotFinished(ballotsCast: vote.ballotsCast, participants: vote.participants.value))
        case .settling(_, _, let until): throw ServiceError.conflict(.voteSettling(until: until))
        case .cancelled: throw ServiceError.conflict(.voteCancelled)
        case .finished: break
        }
        return VoteResult(vote: try await view(vote), ballots: try await stores.votes.ballots(of: id), for: identity.userID)
    }

    // MARK: Name conflicts

    /// Ballots of the vote whose voters' names read the same, for its initiator to settle; by name.
    public func conflicts(in id: VoteID, by identity: Identity, from address: ClientAddress) async throws -> [NameConflict] {
        let vote = try await initiated(id, by: identity, from: address)
        guard !vote.anonymous else { throw ServiceError.conflict(.anonymousVote) }
        let groups = Ballot.nameConflicts(among: try await stores.votes.ballots(of: id))
        let people = try await accounts(of: groups.flatMap { $0.map(\.voter) })
        return groups.map { group in
            NameConflict(name: group[0].voterName, ballots: group.compactMap { ballot in
                people[ballot.voter].map { BallotSummary(ballot, voter: $0) }
            })
        }
    }

    /// Voids (`counted` false) or restores a ballot of a name conflict, only while the vote settles
    /// (`Vote.checkCountChange`): never while it is open, since voiding at will would let an initiator isolate
    /// one person's choice (`Ballot.checkSettling`); never once its result is out, since comparing two
    /// published tallies would tell what the changed ballot chose.
    public func setCounted(
        _ counted: Bool, ballot ballotID: BallotID, in id: VoteID, by identity: Identity, from address: ClientAddress
    ) async throws -> BallotSummary {
        let vote = try await initiated(id, by: identity, from: address)
        guard !vote.anonymous else { throw ServiceError.conflict(.anonymousVote) }
        // The clock is read under the vote's lock, so that no announcement claimed meanwhile is overtaken.
        let clock = clock
        guard let ballot = try await stores.votes.setCounted(counted, ballot: ballotID, of: id, rule: { vote, ballots in
            try vote.checkCountChange(ballotID, counted: counted, among: ballots, at: clock.now)
        }) else { throw ServiceError.notFound(.ballot) }
        guard let voter = try await accounts(of: [ballot.voter])[ballot.voter] else { throw ServiceError.notFound(.ballot) }
        return BallotSummary(ballot, voter: voter)
    }

    // MARK: The initiator's controls

    /// Closes, cancels, extends, edits or publishes the caller's vote (`Vote.apply` holds the rules), and tells
    /// those in it at once when the change ended voting, settling or the vote.
    public func change(_ id: VoteID, _ change: VoteChange, by identity: Identity, from address: ClientAddress) async throws -> VoteView {
        let vote = try await initiated(id, by: identity, from: address)
        // The clock is read under the vote's lock: a change checked against a moment before an announcement
        // was claimed could reopen, reword or re-date what was announced.
        let clock = clock
        guard let changed = try await stores.votes.updateVote(vote.id, { vote in try vote.apply(change, at: clock.now) }) else {
            throw ServiceError.notFound(.vote)
        }
        if changed.state(at: clock.now) != .open { try await announceFinishes() }
        return try await view(changed)
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
        return newestFirst.compactMap { vote in
            guard let name = names[vote.initiator] else { return nil }
            return VoteHistoryEntry(view: VoteView(vote: vote, initiatorName: name, state: vote.state(at: now)), roles: roles[vote.id] ?? [])
        }
    }

    // MARK: Finishes

    /// Makes every announcement due since the last call, each once however many servers or calls race: to the
    /// initiator when a vote begins settling name conflicts, and to the voters and the initiator when it
    /// finishes or is cancelled. What a ballot, close, cancel or publish causes is announced at once; what the
    /// clock causes waits for the next call, which the server makes every second. Returns how many votes.
    @discardableResult
    public func announceFinishes() async throws -> Int {
        var announced = 0
        while true {
            let now = clock.now
            let due = try await stores.votes.claimAnnouncements(at: now, limit: Self.announcementBatch)
            var drafts: [EventDraft] = []
            for vote in due {
                let ballots = try await stores.votes.ballots(of: vote.id)
                // Everyone in the vote: its initiator and its voters.
                let everyone = Set(ballots.map(\.voter) + [vote.initiator]).sorted()
                let state = vote.state(at: now)
                switch state {
                case .open: continue
                case .settling(_, let endedAt, let until):
                    let names = Ballot.nameConflicts(among: ballots).map { (name: $0[0].voterName, ballots: $0.count) }
                    drafts.append(.voteConflict(to: vote.initiator, vote: vote, names: names, until: until, at: endedAt))
                case .cancelled(let at):
                    for recipient in everyone { drafts.append(.voteCancelled(to: recipient, vote: vote, at: at)) }
                case .finished(let reason, let at):
                    // Those who may see the result get it, each with their own ballot: the initiator and the
                    // voters. Counted once; each event differs only in its recipient's ballot.
                    let view = VoteView(vote: vote, initiatorName: try await initiatorName(vote), state: state)
                    var result = VoteResult(vote: view, ballots: ballots, for: vote.initiator)
                    let byVoter = Dictionary(ballots.map { ($0.voter, $0) }) { first, _ in first }
                    for recipient in everyone {
                        result.yourBallot = byVoter[recipient]
                        drafts.append(.voteFinished(to: recipient, vote: vote, reason: reason, at: at, result: result))
                    }
                }
            }
            try await events.record(drafts)
            announced += due.count
            if due.count < Self.announcementBatch { return announced }
        }
    }

    // MARK: Helpers

    /// bcrypt decides the first correct password of a vote; the memo answers after that.
    private func passwordMatches(_ password: VotePassword, vote: VoteID, hash: PasswordHash) async throws -> Bool {
        let hasher = hasher
        return try await memo.verify(password, vote: vote) { try await hasher.verify(password.digits, against: hash) }
    }

    /// What `read` finds for a vote id the caller gives. An id that names no vote counts against the caller's
    /// and the address's lookups of unknown ids, and a caller past either limit is refused whether or not the
    /// id names a vote (`UnknownLookups`): ids cannot be scanned faster than the limits allow.
    private func lookUp<Found>(
        _ id: VoteID, by identity: Identity, from address: ClientAddress, _ read: () async throws -> Found?
    ) async throws -> Found {
        let found = try await read()
        try await unknownLookups.check(identity.userID, address, missed: found == nil)
        guard let found else { throw ServiceError.notFound(.vote) }
        return found
    }

    /// The accounts of these users, by id, for what the initiator sees of a name conflict.
    private func accounts(of users: [UserID]) async throws -> [UserID: Account] {
        var found: [UserID: Account] = [:]
        for user in Set(users) { found[user] = try await stores.accounts.account(id: user) }
        return found
    }

    /// The vote, when the caller opened it; others may not settle or change it.
    private func initiated(_ id: VoteID, by identity: Identity, from address: ClientAddress) async throws -> Vote {
        let vote = try await lookUp(id, by: identity, from: address) { try await stores.votes.vote(id: id) }
        guard vote.initiator == identity.userID else {
            throw ServiceError.forbidden("Only the initiator of this vote settles, changes or ends it.")
        }
        return vote
    }

    private func view(_ vote: Vote) async throws -> VoteView {
        VoteView(vote: vote, initiatorName: try await initiatorName(vote), state: vote.state(at: clock.now))
    }

    private func initiatorName(_ vote: Vote) async throws -> String {
        guard let name = try await initiatorNames([vote])[vote.initiator] else { throw ServiceError.notFound(.vote) }
        return name
    }

    private func initiatorNames(_ votes: [Vote]) async throws -> [UserID: String] {
        try await stores.accounts.summaries(of: votes.map(\.initiator)).mapValues(\.displayName)
    }
}

/// Eight random vote ids in a row were taken: the id space is nearly full, which no real use reaches.
public struct VoteIDsExhausted: Error, Hashable, Sendable {}

/// The limits on lookups of vote ids that name no vote, per person and per client address.
///
/// A lookup is checked after the store was read, in one step of the ledger that refuses a person past a limit
/// (a found vote too) or counts a miss against both limits at once: however many lookups run at once, each
/// step sees the misses counted before it, so no more misses are answered than the limits allow, and a vote
/// found by a person past them is not told. A found vote by a person without a miss in the window locks only
/// that person's key, which no one else's lookups wait for; misses, and lookups by people who have missed,
/// lock the address's key too.
///
/// An address that has used up its allowance stops only the people who have missed themselves: a person's
/// first lookup goes through (and counts, if it misses), so one person behind a campus NAT cannot lock
/// everyone else there out of voting, while every further probe costs a new account, of which an address
/// makes at most 100 an hour.
struct UnknownLookups<Ledger: WindowLedger>: Sendable {
    let perPerson: RateLimit
    let perAddress: RateLimit
    let clock: any WallClock
    let ledger: Ledger

    /// Refuses the lookup (`ServiceError.rateLimited`) or lets it be answered, counting it when it `missed`.
    func check(_ person: UserID, _ address: ClientAddress, missed: Bool) async throws {
        let (perPerson, perAddress) = (perPerson, perAddress)
        let now = clock.now
        let personKey = WindowKey(.voteLookups, person.rawValue, window: perPerson.window)
        let addressKey = WindowKey(.voteLookupsFromAddress, address.rawValue, window: perAddress.window)
        if !missed {
            // A found vote: a person who has not missed within the window passes whatever the address's count,
            // and nothing is counted, so only their own key is locked.
            let passed = try await ledger.withWindows([personKey], at: now) { states -> Result<Bool, ServiceError> in
                if let wait = states[0].wait(under: perPerson, at: now) { return .failure(.rateLimited(retryAfter: wait, .voteLookups)) }
                return .success(states[0].isClear)
            }
            if try passed.get() { return }
        }
        let refusal = try await ledger.withWindows([personKey, addressKey], at: now) { states -> ServiceError? in
            if let wait = states[0].wait(under: perPerson, at: now) { return .rateLimited(retryAfter: wait, .voteLookups) }
            if !states[0].isClear, let wait = states[1].wait(under: perAddress, at: now) {
                return .rateLimited(retryAfter: wait, .voteLookupsFromAddress)
            }
            if missed {
                states[0].add(at: now)
                states[1].add(at: now)
            }
            return nil
        }
        if let refusal { throw refusal }
    }
}
