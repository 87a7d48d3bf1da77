import GeoCore

/// Where accounts and sessions live. Stores keep what they are given; the rules (who may sign in, token
/// lifetime, limits) are `AccountService`'s.
public protocol AccountStore: Sendable {
    /// Adds an account with its password hash. Throws `ServiceError.conflict(.usernameTaken)` when an account
    /// has the same username ignoring case, whatever the order of concurrent calls.
    func createAccount(_ account: Account, passwordHash: PasswordHash) async throws

    func account(id: UserID) async throws -> Account?

    /// The accounts among `ids` that exist, in no particular order.
    func accounts(ids: [UserID]) async throws -> [Account]

    /// The account whose username is `usernameKey` ignoring case, with its password hash.
    func credentials(usernameKey: String) async throws -> (account: Account, passwordHash: PasswordHash)?

    func passwordHash(of id: UserID) async throws -> PasswordHash?

    /// Replaces the names, e-mail and privacy mode of an existing account, and with `newPasswordHash` its
    /// password, which ends every session of the account but `keeping`: all of it or nothing. False when
    /// there is no such account.
    func updateAccount(_ account: Account, newPasswordHash: PasswordHash?, keeping: TokenDigest) async throws -> Bool

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
    /// Stores the user's position, replacing the one before. Of positions of one user sent at once, the last
    /// to commit is kept.
    func setPosition(_ position: SharedPosition) async throws
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
    func sendFriendRequest(_ request: FriendRequest) async throws -> FriendRequestOutcome

    /// Accepts a pending request addressed to `recipient`, making the two friends (each sharing their
    /// position with the other), and returns it; nil when no such request is addressed to them, also when a
    /// concurrent call took or removed it first. One step with `sendFriendRequest` for the same pair.
    func acceptFriendRequest(_ id: FriendRequestID, recipient: UserID, at time: Timestamp) async throws -> FriendRequest?

    /// Removes a pending request that `participant` sent (cancel) or received (decline); nil when they have
    /// no such request.
    func deleteFriendRequest(_ id: FriendRequestID, participant: UserID) async throws -> FriendRequest?

    /// Pending requests sent or received by `user`, oldest first.
    func friendRequests(of user: UserID) async throws -> [FriendRequest]

    /// The user's friendships, in no particular order.
    func friendships(of user: UserID) async throws -> [Friendship]

    func friendship(of user: UserID, with friend: UserID) async throws -> Friendship?

    /// Whether `user` shares their position with `friend`; nil when they are not friends.
    func setSharing(_ shares: Bool, from user: UserID, to friend: UserID) async throws -> Friendship?

    /// Ends the friendship for both; false when there was none.
    func endFriendship(of user: UserID, with friend: UserID) async throws -> Bool

    /// How `user` stands to each of `others` (friend, request either way); absent means none.
    func relationships(of user: UserID, with others: [UserID]) async throws -> [UserID: Relationship]
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

    var places: Places { get }
    var campuses: Campuses { get }
    var accounts: Accounts { get }
    var positions: Positions { get }
    var friends: Friends { get }
    var events: Events { get }
    var votes: Votes { get }

    associatedtype Guesses: GuessingLedger
    /// Where failed password checks are counted: shared by every process that shares the record, where the
    /// record can share it.
    var guesses: Guesses { get }

    associatedtype Limits: WindowLedger
    /// Where the other limits (sign-ups, vote openings, pokes, lookups of unknown vote ids) count: shared as
    /// `guesses` is.
    var limits: Limits { get }

    associatedtype Changes: ChangeFeed
    /// Every change to positions, votes and events, by whichever process wrote it.
    var changes: Changes { get }

    /// Brings what memory holds of the changes' rows (positions, open votes) up to what the record holds now.
    /// Stores that hold nothing in memory have nothing to do.
    func follow(_ changes: [Change], at now: Timestamp) async throws

    /// Loads again everything memory holds that changes update: for a reader of the changes that fell behind
    /// what the record keeps of them.
    func reloadFollowed(at now: Timestamp) async throws
}

extension Stores {
    public func follow(_ changes: [Change], at now: Timestamp) async throws {}
    public func reloadFollowed(at now: Timestamp) async throws {}
}
