/// Everything between two people that friend requests and friendships change: the friendship's two sides (or
/// none) and the requests pending between them. Stores read it whole under the pair's lock, let one of the
/// rules below change it and write back what changed, so that however requests race, a pair ends with one
/// friendship at most, and the rules are written once.
public struct FriendPair: Hashable, Sendable {
    public let first: UserID
    public let second: UserID
    /// One side per direction while the two are friends; none otherwise.
    public private(set) var sides: [FriendshipSide]
    /// Requests pending between the two, either way.
    public private(set) var requests: [FriendRequest]

    public init(_ first: UserID, _ second: UserID, sides: [FriendshipSide], requests: [FriendRequest]) {
        self.first = first
        self.second = second
        self.sides = sides
        self.requests = requests
    }

    public var areFriends: Bool { !sides.isEmpty }

    /// The friendship as `user` sees it; nil when the two are not friends.
    public func friendship(of user: UserID) -> Friendship? {
        guard let mine = sides.first(where: { $0.user == user }), let theirs = sides.first(where: { $0.friend == user }) else {
            return nil
        }
        return Friendship(friend: mine.friend, since: mine.since, sharesWithFriend: mine.sharesPosition, friendSharesWithMe: theirs.sharesPosition)
    }

    func pending(from: UserID, to: UserID) -> FriendRequest? {
        requests.first { $0.from == from && $0.to == to }
    }

    /// Friends from `since`, each sharing their position with the other.
    private mutating func befriend(since: Timestamp) {
        sides = [
            FriendshipSide(user: first, friend: second, since: since, sharesPosition: true),
            FriendshipSide(user: second, friend: first, since: since, sharesPosition: true),
        ]
    }

    /// A request from one to the other: nothing changes between friends or when the sender asked already; if
    /// the recipient had asked the sender, their request becomes the friendship.
    public mutating func send(_ request: FriendRequest) -> FriendRequestOutcome {
        if areFriends { return .alreadyFriends }
        if let theirs = pending(from: request.to, to: request.from) {
            requests.removeAll { $0.id == theirs.id }
            befriend(since: request.createdAt)
            return .becameFriends(accepted: theirs, since: request.createdAt)
        }
        if let mine = pending(from: request.from, to: request.to) { return .alreadyRequested(mine) }
        requests.append(request)
        return .sent(request)
    }

    /// Accepts the request `id` when it is pending and addressed to `recipient`; nil otherwise.
    public mutating func accept(_ id: FriendRequestID, recipient: UserID, at time: Timestamp) -> FriendRequest? {
        guard let request = requests.first(where: { $0.id == id && $0.to == recipient }) else { return nil }
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

    /// Whether `user` shares their position with the other; nil when the two are not friends.
    public mutating func setSharing(_ shares: Bool, from user: UserID) -> Friendship? {
        guard areFriends, let index = sides.firstIndex(where: { $0.user == user }) else { return nil }
        sides[index].sharesPosition = shares
        return friendship(of: user)
    }

    /// Ends the friendship for both; false when there was none.
    public mutating func end() -> Bool {
        guard areFriends else { return false }
        sides = []
        return true
    }
}

/// One direction of a friendship: whether `user` shares their position with `friend`.
public struct FriendshipSide: Hashable, Sendable {
    public var user: UserID
    public var friend: UserID
    public var since: Timestamp
    public var sharesPosition: Bool

    public init(user: UserID, friend: UserID, since: Timestamp, sharesPosition: Bool) {
        self.user = user
        self.friend = friend
        self.since = since
        self.sharesPosition = sharesPosition
    }
}
