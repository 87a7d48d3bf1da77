/// Everything between two people that friend requests, friendships, blocks and alerts change: the friendship's
/// two sides (or none), the requests pending between them, the blocks either placed, and the alerts and
/// permissions to set them that live only as long as the friendship. Stores read it whole under
/// the pair's lock, let one of the rules below change it and write back what changed, so that however requests
/// and blocks race, a pair ends with one friendship at most, never beside a block, and the rules are written
/// once.
public struct FriendPair: Hashable, Sendable {
    public let first: UserID
    public let second: UserID
    /// One side per direction while the two are friends; none otherwise.
    public private(set) var sides: [FriendshipSide]
    /// Requests pending between the two, either way.
    public private(set) var requests: [FriendRequest]
    /// Blocks either of the two placed on the other.
    public private(set) var blocks: [Block]
    /// Which of the two lets the other set place alerts on them (`FriendPair+Alerts.swift`).
    public internal(set) var watches: [WatchPermission]
    /// Alerts either of the two set on the other.
    public internal(set) var alerts: [Alert]
    /// How each of the two shares with a new friend (`Account.defaultShare`), as it stood when the pair was read.
    public let defaultShares: [UserID: ShareLevel]

    public init(
        _ first: UserID, _ second: UserID, sides: [FriendshipSide], requests: [FriendRequest], blocks: [Block],
        watches: [WatchPermission] = [], alerts: [Alert] = [], defaultShares: [UserID: ShareLevel] = [:]
    ) {
        self.first = first
        self.second = second
        self.sides = sides
        self.requests = requests
        self.blocks = blocks
        self.watches = watches
        self.alerts = alerts
        self.defaultShares = defaultShares
    }

    public var areFriends: Bool { !sides.isEmpty }

    /// Whether `blocker` has blocked `blocked`.
    public func blocks(_ blocker: UserID, _ blocked: UserID) -> Bool {
        blocks.contains { $0.blocker == blocker && $0.blocked == blocked }
    }

    private var eitherBlocks: Bool { !blocks.isEmpty }

    /// The friendship as `user` sees it; nil when the two are not friends.
    public func friendship(of user: UserID) -> Friendship? {
        guard let mine = sides.first(where: { $0.user == user }), let theirs = sides.first(where: { $0.friend == user }) else {
            return nil
        }
        return Friendship(
            friend: mine.friend, since: mine.since, shareWithFriend: mine.share, friendShareWithMe: theirs.share,
            shareWithFriendUntil: mine.until, friendShareWithMeUntil: theirs.until)
    }

    func pending(from: UserID, to: UserID) -> FriendRequest? {
        requests.first { $0.from == from && $0.to == to }
    }

    /// Friends from `since`, each sharing their position with the other as their default says.
    private mutating func befriend(since: Timestamp) {
        sides = [
            FriendshipSide(user: first, friend: second, since: since, share: defaultShares[first] ?? .standard),
            FriendshipSide(user: second, friend: first, since: since, share: defaultShares[second] ?? .standard),
        ]
    }

    /// A request from one to the other: nothing changes between friends or when the sender asked already; if
    /// the recipient had asked the sender, their request becomes the friendship. A sender who blocked the
    /// recipient is refused (they unblock first); a request to someone who blocked the sender is kept, and held:
    /// it waits as an unanswered request does, and nobody is told of it.
    public mutating func send(_ request: FriendRequest) -> FriendRequestOutcome {
        if areFriends { return .alreadyFriends }
        // Before the recipient's own request: it may wait, held, from before the sender blocked them.
        if blocks(request.from, request.to) { return .senderBlocks }
        if let theirs = pending(from: request.to, to: request.from) {
            requests.removeAll { $0.id == theirs.id }
            befriend(since: request.createdAt)
            return .becameFriends(accepted: theirs, since: request.createdAt)
        }
        if let mine = pending(from: request.from, to: request.to) { return .alreadyRequested(mine) }
        requests.append(request)
        return blocks(request.to, request.from) ? .held(request) : .sent(request)
    }

    /// Accepts the request `id` when it is pending and addressed to `recipient`; nil otherwise, and while
    /// either has blocked the other: the blocker unblocks first.
    public mutating func accept(_ id: FriendRequestID, recipient: UserID, at time: Timestamp) -> FriendRequest? {
        guard !eitherBlocks, let request = requests.first(where: { $0.id == id && $0.to == recipient }) else { return nil }
        requests.removeAll { $0.id == id }
        befriend(since: time)
        return request
    }

    /// Removes the request `id` when `participant` sent (cancel) or received (decline) it; nil otherwise.
    public mutating func withdraw(_ id: FriendRequestID, participant: UserID) -> FriendRequest? {
        guard let request = requests.first(where: { $0.id == id && ($0.from == participant || $0.to == participant) }) else {
            return nil
        }
        requests.removeAll { $0.id == id }
        return request
    }

    /// How exactly `user` shares their position with the other, until `until` (then their default) or until
    /// changed; nil when the two are not friends.
    public mutating func setSharing(_ share: ShareLevel, until: Timestamp? = nil, from user: UserID) -> Friendship? {
        guard areFriends, let index = sides.firstIndex(where: { $0.user == user }) else { return nil }
        sides[index].share = share
        sides[index].until = until
        return friendship(of: user)
    }

    /// Ends the friendship for both, with the alerts and permissions that came with it; false when there was none.
    public mutating func end() -> Bool {
        guard areFriends else { return false }
        sides = []
        watches = []
        alerts = []
        return true
    }

    /// `blocker` blocks the other: a friendship ends and the blocker's requests to them are withdrawn; the
    /// other's request to the blocker stays, held, so that nothing they see changes. Blocking again keeps the
    /// first block.
    public mutating func block(by blocker: UserID, at time: Timestamp) -> BlockOutcome {
        let blocked = blocker == first ? second : first
        if let existing = blocks.first(where: { $0.blocker == blocker && $0.blocked == blocked }) {
            return BlockOutcome(block: existing, isNew: false, endedFriendship: false)
        }
        let block = Block(blocker: blocker, blocked: blocked, createdAt: time)
        blocks.append(block)
        requests.removeAll { $0.from == blocker }
        return BlockOutcome(block: block, isNew: true, endedFriendship: end())
    }

    /// Lifts `blocker`'s block on the other; false when there was none. A request they sent meanwhile is
    /// then an ordinary pending request.
    public mutating func unblock(by blocker: UserID) -> Bool {
        let count = blocks.count
        blocks.removeAll { $0.blocker == blocker }
        return blocks.count != count
    }
}

/// One direction of a friendship: how exactly `user` shares their position with `friend`, and until when.
public struct FriendshipSide: Hashable, Sendable {
    public var user: UserID
    public var friend: UserID
    public var since: Timestamp
    public var share: ShareLevel
    /// When `share` ends and the user's default takes over; nil: until changed.
    public var until: Timestamp?

    public init(user: UserID, friend: UserID, since: Timestamp, share: ShareLevel, until: Timestamp? = nil) {
        self.user = user
        self.friend = friend
        self.since = since
        self.share = share
        self.until = until
    }
}

/// A level given for a while that has ended and was announced: the side as it was, the default that took over,
/// and who the friend is, for the sharer's event.
public struct EndedSharing: Hashable, Sendable {
    public var side: FriendshipSide
    public var fallback: ShareLevel
    public var friend: UserSummary?

    public init(side: FriendshipSide, fallback: ShareLevel, friend: UserSummary?) {
        self.side = side
        self.fallback = fallback
        self.friend = friend
    }
}
