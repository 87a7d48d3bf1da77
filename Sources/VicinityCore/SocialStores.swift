import GeoCore

/// Where accounts, their sessions and their mailed codes live. Stores keep what they are given; the rules (who
/// may sign in, token lifetime, codes, limits) are `AccountService`'s.
public protocol AccountStore: Sendable {
    /// Adds an account, with the code mailed to its address and the message that mails it when it gave one,
    /// all or nothing. Throws `ServiceError.conflict(.usernameTaken)` when an account has the same username
    /// ignoring case, whatever the order of concurrent calls.
    func createAccount(_ account: StoredAccount, code: StoredCode?, message: OutboxMessage?) async throws

    func account(id: UserID) async throws -> Account?

    /// The accounts among `ids` that exist, in no particular order.
    func accounts(ids: [UserID]) async throws -> [Account]

    /// The account with its password hash.
    func storedAccount(id: UserID) async throws -> StoredAccount?

    /// The account whose username is `usernameKey` ignoring case, with its password hash.
    func credentials(usernameKey: String) async throws -> StoredAccount?

    /// The account whose verified address is `emailKey` ignoring case (`Email.key`), with its password hash.
    func credentials(emailKey: String) async throws -> StoredAccount?

    /// The accounts without a password whose address waiting for its code is `emailKey` ignoring case, newest
    /// first, at most `limit`: an account made by code has no way in but that code.
    func passwordless(pendingEmailKey: String, limit: Int) async throws -> [StoredAccount]

    /// Replaces what an account holds (names, addresses, privacy mode, password hash, disabled), ending the
    /// sessions `ending` names, all of it or nothing. False when there is no such account. Throws
    /// `ServiceError.conflict(.emailTaken)` when another account has verified the same address ignoring case.
    func updateAccount(_ account: StoredAccount, ending: SessionEnding) async throws -> Bool

    /// Every account whose username starts with `needle` or whose first and last name, folded by
    /// `PeopleMatch.nameKey`, contain it (`needle` is folded by `PeopleMatch.folded`), in any order:
    /// `PeopleMatch` ranks them.
    func accountsMatching(_ needle: String) async throws -> [Account]

    func createSession(_ session: Session) async throws
    func session(_ digest: TokenDigest) async throws -> Session?
    func deleteSession(_ digest: TokenDigest) async throws
    /// Removes sessions that expired before `time`; returns how many.
    func deleteSessions(expiredBefore time: Timestamp) async throws -> Int

    func accountCount() async throws -> Int

    /// Keeps `code` as the account's one code for its purpose, replacing any before it, and records `message`
    /// (or, when a message with its id is waiting, replaces it: a sign-in code request becomes its mail), in
    /// one step.
    func issueCode(_ code: StoredCode, message: OutboxMessage) async throws

    /// Takes one try of the account's code for `purpose` when it is usable at `now`, and returns the code as
    /// it was; nil, changing nothing, when there is none or it is spent or expired. Concurrent checks each take
    /// their own try, so a code is checked at most `triesLeft` times however many guesses race.
    func spendCodeTry(of account: UserID, purpose: CodePurpose, at now: Timestamp) async throws -> StoredCode?

    /// Removes `code` when it is still the account's code for its purpose (the same hash): true when it was.
    /// A verify-email code also makes its address the account's verified one (and no longer pending), in the
    /// same step; `ServiceError.conflict(.emailTaken)` when another account verified it first.
    func consumeCode(_ code: StoredCode) async throws -> Bool

    /// Removes the account and everything about it, in one transaction (`AccountDeletion` says what):
    /// `cancel` is the rule that ends a vote it opened, `announcements` what is told of it. False when there
    /// is no such account.
    func deleteAccount(
        _ id: UserID, at now: Timestamp, cancel: @escaping @Sendable (inout StoredVote) -> Bool,
        announcements: @escaping @Sendable (Vote, [Ballot]) -> [EventDraft]
    ) async throws -> Bool
}

/// Which sessions of an account an update ends.
public enum SessionEnding: Hashable, Sendable {
    case none
    /// Every session but this one: a password change.
    case allBut(TokenDigest)
    /// Every session: an account disabled.
    case all
}

extension AccountStore {
    /// What others see of each of these users who has an account, by id.
    public func summaries(of ids: [UserID]) async throws -> [UserID: UserSummary] {
        let accounts = try await accounts(ids: Array(Set(ids)))
        return Dictionary(accounts.map { ($0.id, $0.summary) }) { first, _ in first }
    }
}

/// Where shared positions live, one per user.
public protocol PositionStore: Sendable {
    /// Stores the user's position, replacing the one before, and moves on the alerts the move changed as
    /// `FriendStore.advance` does, in the same transaction: a move and what it told commit together. Of positions
    /// of one user sent at once, the last to commit is kept. The ids of the alerts moved.
    func setPosition(_ position: SharedPosition, alerts: [AlertChange]) async throws -> Set<AlertID>
    func position(of user: UserID) async throws -> SharedPosition?
    /// The positions of those among `users` who have one, in no particular order.
    func positions(of users: [UserID]) async throws -> [SharedPosition]
    /// False when the user had none.
    func deletePosition(of user: UserID) async throws -> Bool
    /// Hands every stored position to `body`, a batch at a time, as of one moment: how a hot index loads.
    func forEachPosition(_ body: @Sendable ([SharedPosition]) throws -> Void) async throws
}

/// Where friendships and friend requests live.
public protocol FriendStore: Sendable {
    /// Records a request from `request.from` to `request.to`, in one step that concurrent calls cannot
    /// interleave: if the two are friends, nothing changes (`alreadyFriends`); if the recipient had already
    /// asked the sender, their request becomes the friendship (`becameFriends`); if the sender already asked,
    /// nothing changes (`alreadyRequested`). However requests race, a pair ends with one friendship at most.
    /// The events `announcing` makes of the outcome are recorded in the same transaction (as
    /// `EventStore.appendEvents` records them): the change never stands without them, nor they without it.
    func sendFriendRequest(
        _ request: FriendRequest, announcing: @escaping @Sendable (FriendRequestOutcome) throws -> [EventDraft]
    ) async throws -> FriendRequestOutcome

    /// Accepts a pending request addressed to `recipient`, making the two friends (each sharing their
    /// position with the other), and returns it; nil when no such request is addressed to them, also when a
    /// concurrent call took or removed it first. One step with `sendFriendRequest` for the same pair. The
    /// events `announcing` makes of the accepted request are recorded in the same transaction.
    func acceptFriendRequest(
        _ id: FriendRequestID, recipient: UserID, at time: Timestamp,
        announcing: @escaping @Sendable (FriendRequest) throws -> [EventDraft]
    ) async throws -> FriendRequest?

    /// Removes a pending request that `participant` sent (cancel) or received (decline); nil when they have
    /// no such request.
    func deleteFriendRequest(_ id: FriendRequestID, participant: UserID) async throws -> FriendRequest?

    /// Pending requests sent or received by `user`, oldest first.
    func friendRequests(of user: UserID) async throws -> [FriendRequest]

    /// The user's friendships, in no particular order.
    func friendships(of user: UserID) async throws -> [Friendship]

    /// The same as the record has them now, past any copy a front holds (`HeldFriendships`): for what is pushed
    /// about a move. Stores that hold no copy answer `friendships(of:)`.
    func recordedFriendships(of user: UserID) async throws -> [Friendship]

    func friendship(of user: UserID, with friend: UserID) async throws -> Friendship?

    /// How exactly `user` shares their position with `friend`, until `until` or until changed; nil when they
    /// are not friends.
    func setSharing(_ share: ShareLevel, until: Timestamp?, from user: UserID, to friend: UserID) async throws -> Friendship?

    /// Claims up to `limit` sides whose level has ended by `now`, each once however many servers race: each
    /// takes its sharer's default and loses its end, and the events `announcing` makes of it are recorded, all
    /// in one transaction, so that an end is announced once and never lost.
    func endSharing(
        at now: Timestamp, limit: Int, announcing: @escaping @Sendable (EndedSharing) -> [EventDraft]
    ) async throws -> [EndedSharing]

    /// Ends the friendship for both; false when there was none.
    func endFriendship(of user: UserID, with friend: UserID) async throws -> Bool

    /// How `user` stands to each of `others` (friend, request either way); absent means none.
    func relationships(of user: UserID, with others: [UserID]) async throws -> [UserID: Relationship]

    /// `blocker` blocks `blocked` (`FriendPair.block`: a friendship ends, the blocker's requests go), in one
    /// step with every other change to the pair.
    func block(_ blocked: UserID, by blocker: UserID, at time: Timestamp) async throws -> BlockOutcome

    /// Lifts `blocker`'s block on `blocked`; false when there was none.
    func unblock(_ blocked: UserID, by blocker: UserID) async throws -> Bool

    /// The blocks `user` placed and those placed on them, in no particular order.
    func blocks(involving user: UserID) async throws -> [Block]

    /// `person` lets `watcher` set place alerts on them (`FriendPair.allowWatching`), in one step with every
    /// other change to the pair; nil when they are not friends.
    func allowWatching(by person: UserID, watcher: UserID, at time: Timestamp) async throws -> WatchOutcome?

    /// `person` takes back `watcher`'s permission and the alerts that needed it, in one step; false when none.
    func revokeWatching(by person: UserID, watcher: UserID) async throws -> Bool

    /// Sets an alert (`FriendPair.add`), in one step with every other change to the pair.
    func addAlert(_ alert: Alert, limit: Int) async throws -> AlertOutcome

    /// Removes the alert `id` that `watcher` set; false when they have none such.
    func removeAlert(_ id: AlertID, watcher: UserID) async throws -> Bool

    /// Alerts any of `users` set, and alerts set on them, in one read, in no particular order: what a copy in
    /// memory reads again for the feed's `alerts` changes (`HeldAlerts`).
    func alerts(involvingAny users: [UserID]) async throws -> [Alert]

    /// Every alert, in no particular order: what a copy in memory loads.
    func allAlerts() async throws -> [Alert]

    /// Permissions `user` gave and was given, in no particular order.
    func watchPermissions(involving user: UserID) async throws -> [WatchPermission]

    /// The alerts on `user` and the nearby alerts they set, each with its sight, in one read: what a move of
    /// `user` reads when memory holds none of theirs it can vouch for.
    func alertContext(of user: UserID) async throws -> AlertContext

    /// The sight of each of `alerts` (`AlertSight.of`): what memory holds with the alerts (`HeldAlerts`).
    func alertSights(of alerts: [Alert]) async throws -> [AlertID: AlertSight]

    /// Moves each alert from `from` to `to` only if it still reads `from` and last told at `fromToldAt` (another
    /// front may have worked out the same move, or a later one, first) and the record still holds the change's
    /// `sight` of the person watched (`AlertSight.holds`), setting `toldAt`, and records the
    /// `telling` of those it moved, all in one transaction: a watcher is told of a change once, and never without
    /// it. The ids of the alerts moved; not those gone or changed by another writer first.
    func advance(_ changes: [AlertChange]) async throws -> Set<AlertID>
}

extension PositionStore {
    /// A position that changes no alert.
    public func setPosition(_ position: SharedPosition) async throws {
        _ = try await setPosition(position, alerts: [])
    }
}

extension FriendStore {
    public func recordedFriendships(of user: UserID) async throws -> [Friendship] { try await friendships(of: user) }

    /// Alerts `user` set, and alerts set on them, in no particular order.
    public func alerts(involving user: UserID) async throws -> [Alert] {
        try await alerts(involvingAny: [user])
    }

    /// One alert moved on, as `advance(_:)` moves several; false when it was not.
    public func advance(_ alert: Alert, from before: Bool?, to inside: Bool, toldAt: Timestamp?, telling: EventDraft?) async throws -> Bool {
        try await advance([AlertChange(alert: alert, from: before, to: inside, toldAt: toldAt, telling: telling)]).contains(alert.id)
    }

    /// A level with no end.
    public func setSharing(_ share: ShareLevel, from user: UserID, to friend: UserID) async throws -> Friendship? {
        try await setSharing(share, until: nil, from: user, to: friend)
    }

    /// A request that announces nothing (seeding, tests of the store alone).
    public func sendFriendRequest(_ request: FriendRequest) async throws -> FriendRequestOutcome {
        try await sendFriendRequest(request) { _ in [] }
    }

    /// An accept that announces nothing (seeding, tests of the store alone).
    public func acceptFriendRequest(_ id: FriendRequestID, recipient: UserID, at time: Timestamp) async throws -> FriendRequest? {
        try await acceptFriendRequest(id, recipient: recipient, at: time) { _ in [] }
    }
}

/// Where events wait for their recipients, for a retention window that survives a restart.
public protocol EventStore: Sendable {
    /// Records the drafts in order, numbering them above every number given before. A recipient's events
    /// become visible in number order, whoever appends them at once, in whatever process: once `events(for:)`
    /// has returned number n of a recipient, no smaller number of theirs appears later, so replaying from a
    /// client's `Last-Event-ID` never skips one.
    func appendEvents(_ drafts: [EventDraft]) async throws -> [Event]

    /// The recipient's events numbered above `after` (all when nil) and created at or after `since`, in order,
    /// at most `limit`.
    func events(for recipient: UserID, after: EventID?, since: Timestamp, limit: Int) async throws -> [Event]

    /// The events with these numbers that are still kept, in number order.
    func events(ids: [EventID]) async throws -> [Event]

    /// Removes events created before `time`; returns how many.
    func deleteEvents(before time: Timestamp) async throws -> Int
}

/// Every store the services use, grouped: services and the HTTP front take one generic parameter, however many
/// features join. A backend that keeps everything in one database implements each store and returns itself.
public protocol Stores: Sendable {
    associatedtype Places: PlaceStore
    associatedtype Campuses: CampusStore
    associatedtype Accounts: AccountStore
    associatedtype Positions: PositionStore
    associatedtype Friends: FriendStore
    associatedtype Events: EventStore
    associatedtype Votes: VoteStore
    associatedtype Outbox: OutboxStore
    associatedtype Devices: DeviceStore
    associatedtype Push: PushStore

    var places: Places { get }
    var campuses: Campuses { get }
    var accounts: Accounts { get }
    var positions: Positions { get }
    var friends: Friends { get }
    var events: Events { get }
    var votes: Votes { get }
    /// Mail (and push) waiting to leave.
    var outbox: Outbox { get }
    /// Phone apps' own passwords (OwnTracks, Traccar Client).
    var devices: Devices { get }
    /// Devices that take pushes (browsers, iOS apps) and what their people mute.
    var push: Push { get }

    associatedtype Guesses: GuessingLedger
    /// Where failed password checks are counted: shared by every process that shares the record, where the
    /// record can share it.
    var guesses: Guesses { get }

    associatedtype Limits: WindowLedger
    /// Where the other limits (sign-ups, vote openings, pokes, lookups of unknown vote ids) count: shared as
    /// `guesses` is.
    var limits: Limits { get }

    associatedtype StreamLeases: StreamLeaseLedger
    /// Where open event streams are counted per person: shared as `guesses` is, so that the cap on a person's
    /// streams holds over every process.
    var streamLeases: StreamLeases { get }

    associatedtype Changes: ChangeFeed
    /// Every change to positions, votes, events, alerts and sessions, by whichever process wrote it.
    var changes: Changes { get }

    /// Brings what memory holds of the changes' rows (positions, open votes, alerts, sessions) up to what the
    /// record holds now.
    /// Stores that hold nothing in memory have nothing to do.
    func follow(_ changes: [Change], at now: Timestamp) async throws

    /// Loads again everything memory holds that changes update: for a reader of the changes that fell behind
    /// what the record keeps of them.
    func reloadFollowed(at now: Timestamp) async throws

    /// The alerts memory holds naming `person`, with their sights (`HeldAlerts`); nil where the store holds none
    /// in memory, or none it can vouch for just now: the move is worked out against the record.
    func heldAlerts(of person: UserID) -> AlertContext?

    /// This process committed a change to these people's alerts: what memory holds of them is not to be
    /// trusted until it reads them again.
    func alertsChanged(of people: [UserID])

    /// This process committed a move with these alert changes, of which the record took `moved`: memory takes
    /// their new states where it can vouch for them (`HeldAlerts.advanced(_:moved:)`).
    func alertsAdvanced(_ changes: [AlertChange], moved: Set<AlertID>)
}

extension Stores {
    public func follow(_ changes: [Change], at now: Timestamp) async throws {}
    public func reloadFollowed(at now: Timestamp) async throws {}
    public func heldAlerts(of person: UserID) -> AlertContext? { nil }
    public func alertsChanged(of people: [UserID]) {}
    public func alertsAdvanced(_ changes: [AlertChange], moved: Set<AlertID>) {}
}
