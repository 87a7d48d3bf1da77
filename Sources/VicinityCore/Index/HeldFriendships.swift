/// Each person's friendships as this process has read them, held in memory in front of the record's, so that a
/// friend list, a nearby-friends search or a move's `friend_moved` notices read no friendship from the database.
///
/// Held as `HeldCopies` holds them, by person: this process's own changes to a pair forget both people once the
/// record has committed them; another process's come through the feed as `Change.friendships` (a side made,
/// changed or removed notes both its people), to `forget(_:)`. Everything else is read and written straight
/// through. Expiry of a level given for a while needs no notice: every reader checks `until` against the clock.
///
/// What holding changes: a level lowered through another front is seen here within the feed's lag, not at once, so
/// a move this front takes meanwhile can show in its lists at the level before. What is recorded or pushed about a
/// move reads past it: `friend_moved` reads the mover's account and sharing from the record, and an alert's change
/// is written only while the record still holds the sharing it was worked out from (`AlertSight`).
public struct HeldFriendships<Record: FriendStore>: FriendStore {
    public let record: Record
    private let held: HeldCopies<UserID, [Friendship]>
    /// Told of every person whose friendships changed, for what else holds of them (the sights `HeldAlerts` holds).
    private let changed: @Sendable ([UserID]) -> Void

    /// Holds the friendships of at most `capacity` people; with 0, every read goes to the record. `changed` learns
    /// of every person whose friendships changed, here or through the feed, whatever the capacity.
    public init(record: Record, capacity: Int, changed: @escaping @Sendable ([UserID]) -> Void = { _ in }) {
        self.record = record
        self.changed = changed
        held = HeldCopies(capacity: capacity)
    }

    /// How many people's friendships are held.
    public var heldCount: Int { held.count }

    /// These people's friendships changed: by this process, or by another as the change feed says.
    public func forget(_ people: some Sequence<UserID>) {
        let people = Array(people)
        held.forget(people)
        changed(people)
    }

    /// Forgets everything held: for a follower that fell behind what the feed keeps.
    public func forgetAll() { held.forgetAll() }

    // MARK: Held

    public func friendships(of user: UserID) async throws -> [Friendship] {
        try await held.values(of: [user]) { _ in [user: try await record.friendships(of: user)] }[user] ?? []
    }

    public func friendship(of user: UserID, with friend: UserID) async throws -> Friendship? {
        try await friendships(of: user).first { $0.friend == friend }
    }

    public func recordedFriendships(of user: UserID) async throws -> [Friendship] { try await record.friendships(of: user) }

    // MARK: Changing a pair: both people are forgotten once the record has it

    public func sendFriendRequest(
        _ request: FriendRequest, announcing: @escaping @Sendable (FriendRequestOutcome) throws -> [EventDraft]
    ) async throws -> FriendRequestOutcome {
        defer { forget([request.from, request.to]) }
        return try await record.sendFriendRequest(request, announcing: announcing)
    }

    public func acceptFriendRequest(
        _ id: FriendRequestID, recipient: UserID, at time: Timestamp,
        announcing: @escaping @Sendable (FriendRequest) throws -> [EventDraft]
    ) async throws -> FriendRequest? {
        let accepted = try await record.acceptFriendRequest(id, recipient: recipient, at: time, announcing: announcing)
        if let accepted { forget([accepted.from, accepted.to]) }
        return accepted
    }

    public func setSharing(_ share: ShareLevel, until: Timestamp?, from user: UserID, to friend: UserID) async throws -> Friendship? {
        defer { forget([user, friend]) }
        return try await record.setSharing(share, until: until, from: user, to: friend)
    }

    public func endSharing(
        at now: Timestamp, limit: Int, announcing: @escaping @Sendable (EndedSharing) -> [EventDraft]
    ) async throws -> [EndedSharing] {
        let ended = try await record.endSharing(at: now, limit: limit, announcing: announcing)
        if !ended.isEmpty { forget(ended.flatMap { [$0.side.user, $0.side.friend] }) }
        return ended
    }

    public func endFriendship(of user: UserID, with friend: UserID) async throws -> Bool {
        defer { forget([user, friend]) }
        return try await record.endFriendship(of: user, with: friend)
    }

    public func block(_ blocked: UserID, by blocker: UserID, at time: Timestamp) async throws -> BlockOutcome {
        defer { forget([blocked, blocker]) }
        return try await record.block(blocked, by: blocker, at: time)
    }

    // MARK: Read and written straight through

    public func deleteFriendRequest(_ id: FriendRequestID, participant: UserID) async throws -> FriendRequest? {
        try await record.deleteFriendRequest(id, participant: participant)
    }

    public func friendRequests(of user: UserID) async throws -> [FriendRequest] { try await record.friendRequests(of: user) }

    public func relationships(of user: UserID, with others: [UserID]) async throws -> [UserID: Relationship] {
        try await record.relationships(of: user, with: others)
    }

    public func unblock(_ blocked: UserID, by blocker: UserID) async throws -> Bool { try await record.unblock(blocked, by: blocker) }
    public func blocks(involving user: UserID) async throws -> [Block] { try await record.blocks(involving: user) }

    public func allowWatching(by person: UserID, watcher: UserID, at time: Timestamp) async throws -> WatchOutcome? {
        try await record.allowWatching(by: person, watcher: watcher, at: time)
    }

    public func revokeWatching(by person: UserID, watcher: UserID) async throws -> Bool {
        try await record.revokeWatching(by: person, watcher: watcher)
    }

    public func addAlert(_ alert: Alert, limit: Int) async throws -> AlertOutcome { try await record.addAlert(alert, limit: limit) }
    public func removeAlert(_ id: AlertID, watcher: UserID) async throws -> Bool { try await record.removeAlert(id, watcher: watcher) }
    public func alerts(involvingAny users: [UserID]) async throws -> [Alert] { try await record.alerts(involvingAny: users) }
    public func allAlerts() async throws -> [Alert] { try await record.allAlerts() }
    public func watchPermissions(involving user: UserID) async throws -> [WatchPermission] { try await record.watchPermissions(involving: user) }

    /// From the record, always: what a move of someone `HeldAlerts` cannot vouch for is worked out against, and
    /// the sights it holds with the alerts.
    public func alertContext(of user: UserID) async throws -> AlertContext { try await record.alertContext(of: user) }
    public func alertSights(of alerts: [Alert]) async throws -> [AlertID: AlertSight] { try await record.alertSights(of: alerts) }

    public func advance(_ changes: [AlertChange]) async throws -> Set<AlertID> { try await record.advance(changes) }
}
