import Synchronization

/// Accounts, sessions, positions, friendships and events of the in-memory store: the reference the SpatiaLite
/// store is held to by the store contract tests. Each call holds the one lock from start to end, so every call
/// is atomic, as a database transaction is.
struct SocialState {
    var accounts: [UserID: StoredAccount] = [:]
    var usernames: [String: UserID] = [:]
    /// Verified addresses by `Email.key`.
    var emails: [String: UserID] = [:]
    var sessions: [TokenDigest: Session] = [:]
    var codes: [CodeKey: StoredCode] = [:]
    var outbox: [OutboxID: OutboxMessage] = [:]
    var devices: [DeviceID: StoredDevice] = [:]
    var pushDevices: [PushSubscriptionID: PushSubscription] = [:]
    var pushPreferences: [UserID: PushPreferences] = [:]
    var positions: [UserID: SharedPosition] = [:]
    /// One entry per direction: `friendships[a][b]` is a's side of the friendship with b.
    var friendships: [UserID: [UserID: FriendshipSide]] = [:]
    var requests: [FriendRequestID: FriendRequest] = [:]
    /// Each blocker's blocks, by the person blocked.
    var blocks: [UserID: [UserID: Block]] = [:]
    /// Each person's permissions to set place alerts on them, by watcher.
    var watches: [UserID: [UserID: WatchPermission]] = [:]
    var alerts: [AlertID: Alert] = [:]
    var events: [Event] = []
    var lastEventID: Int64 = 0

    struct CodeKey: Hashable {
        var account: UserID
        var purpose: CodePurpose
    }

    /// Keeps a message, replacing one with its id.
    mutating func record(_ message: OutboxMessage) { outbox[message.id] = message }

    /// Numbers the drafts above every number given before and keeps them, with the pushes they make.
    mutating func append(_ drafts: [EventDraft]) -> [Event] {
        let appended = drafts.map { draft in
            lastEventID += 1
            let event = Event(id: EventID(lastEventID), draft: draft)
            events.append(event)
            return event
        }
        let recipients = Set(drafts.map(\.recipient))
        let pushes = PushFanOut.messages(
            for: appended, devices: pushDevices.values.filter { recipients.contains($0.owner) },
            preferences: recipients.compactMap { pushPreferences[$0] })
        for message in pushes { record(message) }
        return appended
    }

    /// Removes the push devices `removed` picks, with the pushes waiting for them: what the SQL stores' foreign
    /// keys do.
    mutating func removePushDevices(where removed: (PushSubscription) -> Bool) {
        let gone = Set(pushDevices.values.filter(removed).map(\.id))
        guard !gone.isEmpty else { return }
        for id in gone { pushDevices[id] = nil }
        outbox = outbox.filter { _, message in
            guard case .push(let delivery)? = message.payload else { return true }
            return !gone.contains(delivery.device)
        }
    }

    /// Push devices go with the session that registered them (a foreign key in the SQL stores). The changes to
    /// note: one for each account that lost a session.
    @discardableResult
    mutating func endSessions(where ended: (TokenDigest, Session) -> Bool) -> [Change] {
        let kept = sessions.filter { !ended($0.key, $0.value) }
        let losers = Set(sessions.values.filter { kept[$0.digest] == nil }.map(\.userID))
        sessions = kept
        removePushDevices { kept[$0.session] == nil }
        return losers.map(Change.sessions)
    }

    func isFriend(_ a: UserID, _ b: UserID) -> Bool { friendships[a]?[b] != nil }

    func pendingRequest(from: UserID, to: UserID) -> FriendRequest? {
        requests.values.first { $0.from == from && $0.to == to }
    }

    func friendship(of user: UserID, with friend: UserID) -> Friendship? {
        guard let mine = friendships[user]?[friend], let theirs = friendships[friend]?[user] else { return nil }
        return FriendPair(user, friend, sides: [mine, theirs], requests: [], blocks: []).friendship(of: user)
    }

    /// Everything between two people, as the SQL stores read it under the pair's lock.
    func pair(_ a: UserID, _ b: UserID) -> FriendPair {
        let sides = [(a, b), (b, a)].compactMap { user, friend in friendships[user]?[friend] }
        return FriendPair(
            a, b, sides: sides,
            requests: requests.values.filter { Set([$0.from, $0.to]) == Set([a, b]) },
            blocks: [blocks[a]?[b], blocks[b]?[a]].compactMap { $0 },
            watches: [watches[a]?[b], watches[b]?[a]].compactMap { $0 },
            alerts: alerts.values.filter { Set([$0.watcher, $0.watched]) == Set([a, b]) },
            defaultShares: Dictionary([a, b].compactMap { id in accounts[id].map { (id, $0.account.defaultShare) } }) { first, _ in first })
    }

    /// Moves on the alerts that still read as each change expects, recording the events of those moved; the
    /// changes to note are each alert moved, with the state it was left in, and the events'.
    mutating func advance(_ changes: [AlertChange]) -> (moved: Set<AlertID>, noted: [Change]) {
        var moved: Set<AlertID> = []
        var drafts: [EventDraft] = []
        for change in changes {
            guard !moved.contains(change.alert), let alert = alerts[change.alert].flatMap(change.moving),
                change.sight?.holds(account: accounts[change.watched]?.account, side: friendships[change.watched]?[change.watcher]) ?? true
            else { continue }
            alerts[change.alert] = alert
            moved.insert(change.alert)
            if let telling = change.telling { drafts.append(telling) }
        }
        let notes = moved.sorted().compactMap { id in
            alerts[id].map { Change.alertMoved(AlertMove(watched: $0.watched, alert: id, inside: $0.inside, toldAt: $0.toldAt)) }
        }
        return (moved, notes + append(drafts).map { .event($0.id, recipient: $0.recipient) })
    }

    /// The sight of each of `alerts`, from the accounts and friendship sides held.
    func sights(of alerts: [Alert]) -> [AlertID: AlertSight] {
        AlertSight.of(
            alerts, accounts: alerts.compactMap { accounts[$0.watched]?.account },
            sides: alerts.compactMap { friendships[$0.watched]?[$0.watcher] })
    }

    /// Writes a pair back as `FriendPair`'s rule left it.
    mutating func store(_ pair: FriendPair) {
        let (a, b) = (pair.first, pair.second)
        friendships[a]?[b] = nil
        friendships[b]?[a] = nil
        for side in pair.sides { friendships[side.user, default: [:]][side.friend] = side }
        requests = requests.filter { Set([$0.value.from, $0.value.to]) != Set([a, b]) }
        for request in pair.requests { requests[request.id] = request }
        blocks[a]?[b] = nil
        blocks[b]?[a] = nil
        for block in pair.blocks { blocks[block.blocker, default: [:]][block.blocked] = block }
        watches[a]?[b] = nil
        watches[b]?[a] = nil
        for permission in pair.watches { watches[permission.person, default: [:]][permission.watcher] = permission }
        alerts = alerts.filter { Set([$0.value.watcher, $0.value.watched]) != Set([a, b]) }
        for alert in pair.alerts { alerts[alert.id] = alert }
    }
}

extension InMemoryStore: AccountStore {
    public func createAccount(_ stored: StoredAccount, code: StoredCode?, message: OutboxMessage?) async throws {
        try state.withLock { (state) throws(ServiceError) in
            let account = stored.account
            guard state.social.usernames[account.username.key] == nil else { throw .conflict(.usernameTaken) }
            if let email = account.email, state.social.emails[email.key] != nil { throw .conflict(.emailTaken) }
            state.social.usernames[account.username.key] = account.id
            if let email = account.email { state.social.emails[email.key] = account.id }
            state.social.accounts[account.id] = stored
            if let code { state.social.codes[.init(account: code.account, purpose: code.purpose)] = code }
            if let message { state.social.record(message) }
        }
    }

    public func account(id: UserID) async throws -> Account? {
        state.withLock { $0.social.accounts[id]?.account }
    }

    public func accounts(ids: [UserID]) async throws -> [Account] {
        state.withLock { state in Set(ids).compactMap { state.social.accounts[$0]?.account } }
    }

    public func storedAccount(id: UserID) async throws -> StoredAccount? {
        state.withLock { $0.social.accounts[id] }
    }

    public func credentials(usernameKey: String) async throws -> StoredAccount? {
        state.withLock { state in state.social.usernames[usernameKey].flatMap { state.social.accounts[$0] } }
    }

    public func credentials(emailKey: String) async throws -> StoredAccount? {
        state.withLock { state in state.social.emails[emailKey].flatMap { state.social.accounts[$0] } }
    }

    public func passwordless(pendingEmailKey: String, limit: Int) async throws -> [StoredAccount] {
        state.withLock { state in
            Array(state.social.accounts.values
                .filter { $0.passwordHash == nil && $0.account.pendingEmail?.key == pendingEmailKey }
                .sorted { ($0.account.createdAt, $0.account.id) > ($1.account.createdAt, $1.account.id) }
                .prefix(limit))
        }
    }

    public func updateAccount(_ stored: StoredAccount, ending: SessionEnding) async throws -> Bool {
        try changing { state in
            let id = stored.account.id
            guard let before = state.social.accounts[id] else { return (false, []) }
            if let email = stored.account.email, let holder = state.social.emails[email.key], holder != id {
                throw ServiceError.conflict(.emailTaken)
            }
            if let old = before.account.email { state.social.emails[old.key] = nil }
            if let email = stored.account.email { state.social.emails[email.key] = id }
            state.social.accounts[id] = stored
            let ended = [Change.account(id)] + state.social.endSessions { digest, session in
                guard session.userID == id else { return false }
                switch ending {
                case .none: return false
                case .allBut(let kept): return digest != kept
                case .all: return true
                }
            }
            return (true, ended)
        }
    }

    public func accountsMatching(_ needle: String) async throws -> [Account] {
        state.withLock { state in
            state.social.accounts.values.map(\.account).filter {
                $0.username.key.hasPrefix(needle) || PeopleMatch.nameKey($0).contains(needle)
            }
        }
    }

    public func createSession(_ session: Session) async throws {
        state.withLock { $0.social.sessions[session.digest] = session }
    }

    public func session(_ digest: TokenDigest) async throws -> Session? {
        state.withLock { $0.social.sessions[digest] }
    }

    public func deleteSession(_ digest: TokenDigest) async throws {
        changing { ((), $0.social.endSessions { ended, _ in ended == digest }) }
    }

    public func deleteSessions(expiredBefore time: Timestamp) async throws -> Int {
        changing { state in
            let before = state.social.sessions.count
            let ended = state.social.endSessions { _, session in session.expiresAt < time }
            return (before - state.social.sessions.count, ended)
        }
    }

    public func accountCount() async throws -> Int { state.withLock { $0.social.accounts.count } }

    public func issueCode(_ code: StoredCode, message: OutboxMessage) async throws {
        state.withLock { state in
            state.social.codes[.init(account: code.account, purpose: code.purpose)] = code
            state.social.record(message)
        }
    }

    public func spendCodeTry(of account: UserID, purpose: CodePurpose, at now: Timestamp) async throws -> StoredCode? {
        state.withLock { state in
            let key = SocialState.CodeKey(account: account, purpose: purpose)
            guard let code = state.social.codes[key], code.isUsable(at: now) else { return nil }
            state.social.codes[key]?.triesLeft -= 1
            return code
        }
    }

    public func consumeCode(_ code: StoredCode) async throws -> Bool {
        try changing { state in
            let key = SocialState.CodeKey(account: code.account, purpose: code.purpose)
            guard state.social.codes[key]?.hash == code.hash else { return (false, []) }
            var changes: [Change] = []
            if code.purpose == .verifyEmail, var stored = state.social.accounts[code.account] {
                if let holder = state.social.emails[code.email.key], holder != code.account { throw ServiceError.conflict(.emailTaken) }
                if let old = stored.account.email { state.social.emails[old.key] = nil }
                stored.account.email = code.email
                if stored.account.pendingEmail?.key == code.email.key { stored.account.pendingEmail = nil }
                state.social.emails[code.email.key] = code.account
                state.social.accounts[code.account] = stored
                changes.append(.account(code.account))
            }
            state.social.codes[key] = nil
            return (true, changes)
        }
    }

    public func deleteAccount(
        _ id: UserID, at now: Timestamp, cancel: @escaping @Sendable (inout StoredVote) -> Bool,
        announcements: @escaping @Sendable (Vote, [Ballot]) -> [EventDraft]
    ) async throws -> Bool {
        changing { state in
            guard let stored = state.social.accounts[id] else { return (false, []) }
            var changes: [Change] = [.account(id)]
            // Votes they opened: those not over are called off and their voters told; all stay, naming nobody.
            var drafts: [EventDraft] = []
            for (voteID, var entry) in state.votes.votes where entry.vote.initiator == id {
                if cancel(&entry) { drafts += announcements(entry.vote, state.votes.ballots[voteID] ?? []) }
                entry.vote.initiator = nil
                state.votes.votes[voteID] = entry
                changes.append(.vote(voteID))
            }
            // Their ballots stay counted and name nobody.
            for (voteID, ballots) in state.votes.ballots {
                state.votes.ballots[voteID] = ballots.map { $0.voter == id ? $0.withoutVoter : $0 }
            }
            state.social.accounts[id] = nil
            state.social.usernames[stored.account.username.key] = nil
            if let email = stored.account.email { state.social.emails[email.key] = nil }
            changes += state.social.endSessions { _, session in session.userID == id }
            state.social.codes = state.social.codes.filter { $0.key.account != id }
            state.social.outbox = state.social.outbox.filter { _, message in
                guard message.account != id else { return false }
                if case .push(let delivery)? = message.payload, delivery.notice.about == id { return false }
                return true
            }
            state.social.devices = state.social.devices.filter { $0.value.device.owner != id }
            state.social.removePushDevices { $0.owner == id }
            state.social.pushPreferences[id] = nil
            if state.social.positions.removeValue(forKey: id) != nil { changes.append(.position(id)) }
            let friends = Array((state.social.friendships[id] ?? [:]).keys)
            if !friends.isEmpty { changes += ([id] + friends).map(Change.friendships) }
            state.social.friendships[id] = nil
            for friend in state.social.friendships.keys { state.social.friendships[friend]?[id] = nil }
            state.social.requests = state.social.requests.filter { $0.value.from != id && $0.value.to != id }
            state.social.blocks[id] = nil
            for blocker in state.social.blocks.keys { state.social.blocks[blocker]?[id] = nil }
            state.social.watches[id] = nil
            for person in state.social.watches.keys { state.social.watches[person]?[id] = nil }
            let endedAlerts = state.social.alerts.values.filter { $0.watcher == id || $0.watched == id }
            for alert in endedAlerts { state.social.alerts[alert.id] = nil }
            changes += Set(endedAlerts.map(\.watched)).map(Change.alerts)
            state.social.events.removeAll { $0.recipient == id || $0.payload.about == id }
            let events = state.social.append(drafts)
            return (true, changes + events.map { .event($0.id, recipient: $0.recipient) })
        }
    }
}

extension InMemoryStore: OutboxStore {
    public func enqueue(_ messages: [OutboxMessage]) async throws {
        state.withLock { state in for message in messages { state.social.record(message) } }
    }

    public func claimOutbox(at now: Timestamp, limit: Int, rules: OutboxRules) async throws -> [OutboxMessage] {
        state.withLock { state in
            let available = state.social.outbox.values
                .filter { $0.isAvailable(at: now) }
                .sorted { a, b in (a.availableAt ?? now, a.id) < (b.availableAt ?? now, b.id) }
                .prefix(limit)
            var claimed: [OutboxMessage] = []
            for var message in available {
                let attempt = message.claim(at: now, rules: rules)
                state.social.record(message)
                if attempt { claimed.append(message) }
            }
            return claimed
        }
    }

    public func settleOutbox(_ settlements: [OutboxSettlement]) async throws -> [Bool] {
        state.withLock { state in
            let counted = settlements.map { settlement in
                let message = settlement.message
                guard let held = state.social.outbox[message.id], held.attempts == settlement.attempt, held.state == .pending else {
                    return false
                }
                state.social.record(message)
                return true
            }
            // After every message is written back, as the SQL stores remove them.
            let gone = Set(zip(settlements, counted).compactMap { $0.1 ? $0.0.gone : nil })
            if !gone.isEmpty { state.social.removePushDevices { gone.contains($0.id) } }
            return counted
        }
    }

    public func hurryOutbox(_ channel: OutboxChannel, at now: Timestamp) async throws -> Int {
        state.withLock { state in
            var hurried = 0
            for var message in state.social.outbox.values where message.hurry(channel, at: now) {
                state.social.record(message)
                hurried += 1
            }
            return hurried
        }
    }

    public func pendingOutboxCount() async throws -> Int {
        state.withLock { state in state.social.outbox.values.count { $0.state == .pending } }
    }

    public func pruneOutbox(settledBefore time: Timestamp) async throws -> Int {
        state.withLock { state in
            let before = state.social.outbox.count
            state.social.outbox = state.social.outbox.filter { _, message in
                switch message.state {
                case .pending: true
                case .sent(let at), .dropped(let at, _): at >= time
                }
            }
            return before - state.social.outbox.count
        }
    }
}

extension InMemoryStore: PositionStore {
    public func setPosition(_ position: SharedPosition, alerts: [AlertChange]) async throws -> Set<AlertID> {
        changing { state in
            state.social.positions[position.userID] = position
            let (moved, noted) = state.social.advance(alerts)
            return (moved, [.position(position.userID)] + noted)
        }
    }

    public func position(of user: UserID) async throws -> SharedPosition? {
        state.withLock { $0.social.positions[user] }
    }

    public func positions(of users: [UserID]) async throws -> [SharedPosition] {
        state.withLock { state in Set(users).compactMap { state.social.positions[$0] } }
    }

    public func deletePosition(of user: UserID) async throws -> Bool {
        changing { state in
            let deleted = state.social.positions.removeValue(forKey: user) != nil
            return (deleted, deleted ? [.position(user)] : [])
        }
    }

    public func forEachPosition(_ body: @Sendable ([SharedPosition]) throws -> Void) async throws {
        try body(Array(state.withLock { $0.social.positions }.values))
    }
}

extension InMemoryStore: FriendStore {
    /// Lets `rule` change the pair between `a` and `b` and keeps what it left, with the events `announcing`
    /// makes of the result, all in one hold of the lock. The result and its events are worked out on a copy
    /// first, so that a failure changes nothing.
    private func changingPair<Result>(
        _ a: UserID, _ b: UserID, announcing: (Result) throws -> [EventDraft] = { _ in [] },
        _ rule: (inout FriendPair) throws -> Result
    ) throws -> Result {
        try changing { state in
            var pair = state.social.pair(a, b)
            let (alertsBefore, sidesBefore) = (Set(pair.alerts), Set(pair.sides))
            let result = try rule(&pair)
            let drafts = try announcing(result)
            state.social.store(pair)
            let events = state.social.append(drafts)
            let alertChanges = Set(Set(pair.alerts).symmetricDifference(alertsBefore).map(\.watched)).map(Change.alerts)
            let friendshipChanges = Set(pair.sides) == sidesBefore ? [] : [Change.friendships(a), .friendships(b)]
            return (result, alertChanges + friendshipChanges + events.map { .event($0.id, recipient: $0.recipient) })
        }
    }

    public func sendFriendRequest(
        _ request: FriendRequest, announcing: @escaping @Sendable (FriendRequestOutcome) throws -> [EventDraft]
    ) async throws -> FriendRequestOutcome {
        try changingPair(request.from, request.to, announcing: announcing) { $0.send(request) }
    }

    public func acceptFriendRequest(
        _ id: FriendRequestID, recipient: UserID, at time: Timestamp,
        announcing: @escaping @Sendable (FriendRequest) throws -> [EventDraft]
    ) async throws -> FriendRequest? {
        guard let request = state.withLock({ $0.social.requests[id] }), request.to == recipient else { return nil }
        return try changingPair(request.from, request.to, announcing: { try $0.map(announcing) ?? [] }) {
            $0.accept(id, recipient: recipient, at: time)
        }
    }

    public func deleteFriendRequest(_ id: FriendRequestID, participant: UserID) async throws -> FriendRequest? {
        guard let request = state.withLock({ $0.social.requests[id] }) else { return nil }
        return try changingPair(request.from, request.to) { $0.withdraw(id, participant: participant) }
    }

    public func friendRequests(of user: UserID) async throws -> [FriendRequest] {
        state.withLock { state in
            state.social.requests.values.filter { $0.from == user || $0.to == user }
                .sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
        }
    }

    public func friendships(of user: UserID) async throws -> [Friendship] {
        state.withLock { state in
            (state.social.friendships[user] ?? [:]).keys.compactMap { state.social.friendship(of: user, with: $0) }
        }
    }

    public func friendship(of user: UserID, with friend: UserID) async throws -> Friendship? {
        state.withLock { $0.social.friendship(of: user, with: friend) }
    }

    public func setSharing(_ share: ShareLevel, until: Timestamp?, from user: UserID, to friend: UserID) async throws -> Friendship? {
        try changingPair(user, friend) { $0.setSharing(share, until: until, from: user) }
    }

    public func endSharing(
        at now: Timestamp, limit: Int, announcing: @escaping @Sendable (EndedSharing) -> [EventDraft]
    ) async throws -> [EndedSharing] {
        changing { state in
            let due = state.social.friendships.values.flatMap(\.values)
                .filter { side in side.until.map { $0 <= now } ?? false }
                .sorted { ($0.until ?? now, $0.user.rawValue, $0.friend.rawValue) < ($1.until ?? now, $1.user.rawValue, $1.friend.rawValue) }
                .prefix(limit)
            let ended = due.map {
                EndedSharing(
                    side: $0, fallback: state.social.accounts[$0.user]?.account.defaultShare ?? .standard,
                    friend: state.social.accounts[$0.friend]?.account.summary)
            }
            for ended in ended {
                state.social.friendships[ended.side.user]?[ended.side.friend]?.share = ended.fallback
                state.social.friendships[ended.side.user]?[ended.side.friend]?.until = nil
            }
            let events = state.social.append(ended.flatMap(announcing))
            let people = Set(ended.flatMap { [$0.side.user, $0.side.friend] })
            return (ended, people.map(Change.friendships) + events.map { .event($0.id, recipient: $0.recipient) })
        }
    }

    public func endFriendship(of user: UserID, with friend: UserID) async throws -> Bool {
        try changingPair(user, friend) { $0.end() }
    }

    public func block(_ blocked: UserID, by blocker: UserID, at time: Timestamp) async throws -> BlockOutcome {
        try changingPair(blocker, blocked) { $0.block(by: blocker, at: time) }
    }

    public func unblock(_ blocked: UserID, by blocker: UserID) async throws -> Bool {
        try changingPair(blocker, blocked) { $0.unblock(by: blocker) }
    }

    public func blocks(involving user: UserID) async throws -> [Block] {
        state.withLock { state in
            Array((state.social.blocks[user] ?? [:]).values) + state.social.blocks.values.compactMap { $0[user] }
        }
    }

    public func allowWatching(by person: UserID, watcher: UserID, at time: Timestamp) async throws -> WatchOutcome? {
        try changingPair(person, watcher) { $0.allowWatching(by: person, at: time) }
    }

    public func revokeWatching(by person: UserID, watcher: UserID) async throws -> Bool {
        try changingPair(person, watcher) { $0.revokeWatching(by: person) }
    }

    public func addAlert(_ alert: Alert, limit: Int) async throws -> AlertOutcome {
        try changingPair(alert.watcher, alert.watched) { $0.add(alert, limit: limit) }
    }

    public func removeAlert(_ id: AlertID, watcher: UserID) async throws -> Bool {
        guard let alert = state.withLock({ $0.social.alerts[id] }), alert.watcher == watcher else { return false }
        return try changingPair(alert.watcher, alert.watched) { $0.removeAlert(id, watcher: watcher) }
    }

    public func alerts(involvingAny users: [UserID]) async throws -> [Alert] {
        let users = Set(users)
        return state.withLock { state in
            state.social.alerts.values.filter { users.contains($0.watcher) || users.contains($0.watched) }
        }
    }

    public func allAlerts() async throws -> [Alert] {
        state.withLock { Array($0.social.alerts.values) }
    }

    public func watchPermissions(involving user: UserID) async throws -> [WatchPermission] {
        state.withLock { state in
            Array((state.social.watches[user] ?? [:]).values) + state.social.watches.values.compactMap { $0[user] }
        }
    }

    public func alertContext(of user: UserID) async throws -> AlertContext {
        state.withLock { state in
            let alerts = state.social.alerts.values.filter { $0.watcher == user || $0.watched == user }
            return AlertContext(alerts: Array(alerts), sights: state.social.sights(of: Array(alerts)))
        }
    }

    public func alertSights(of alerts: [Alert]) async throws -> [AlertID: AlertSight] {
        state.withLock { state in state.social.sights(of: alerts) }
    }

    public func advance(_ changes: [AlertChange]) async throws -> Set<AlertID> {
        changing { state in
            state.social.advance(changes)
        }
    }

    public func relationships(of user: UserID, with others: [UserID]) async throws -> [UserID: Relationship] {
        state.withLock { state in
            var result: [UserID: Relationship] = [:]
            for other in others {
                if state.social.isFriend(user, other) {
                    result[other] = .friend
                } else if let sent = state.social.pendingRequest(from: user, to: other) {
                    result[other] = .requestSent(sent.id)
                } else if let received = state.social.pendingRequest(from: other, to: user) {
                    result[other] = .requestReceived(received.id)
                }
            }
            return result
        }
    }
}

extension InMemoryStore: EventStore {
    public func appendEvents(_ drafts: [EventDraft]) async throws -> [Event] {
        changing { state in
            let events = state.social.append(drafts)
            return (events, events.map { .event($0.id, recipient: $0.recipient) })
        }
    }

    public func events(for recipient: UserID, after: EventID?, since: Timestamp, limit: Int) async throws -> [Event] {
        state.withLock { state in
            Array(state.social.events.lazy
                .filter { event in event.recipient == recipient && event.createdAt >= since && (after.map { event.id > $0 } ?? true) }
                .prefix(limit))
        }
    }

    public func events(ids: [EventID]) async throws -> [Event] {
        let wanted = Set(ids)
        return state.withLock { state in state.social.events.filter { wanted.contains($0.id) } }
    }

    public func deleteEvents(before time: Timestamp) async throws -> Int {
        state.withLock { state in
            let before = state.social.events.count
            state.social.events.removeAll { $0.createdAt < time }
            return before - state.social.events.count
        }
    }
}
