/// One person blocking another: the blocked person cannot find the blocker in people search, ask them to be
/// friends or poke them, and is never told: their requests wait as any unanswered request does.
public struct Block: Hashable, Sendable {
    public var blocker: UserID
    public var blocked: UserID
    public var createdAt: Timestamp

    public init(blocker: UserID, blocked: UserID, createdAt: Timestamp) {
        self.blocker = blocker
        self.blocked = blocked
        self.createdAt = createdAt
    }
}

/// What blocking someone did.
public struct BlockOutcome: Hashable, Sendable {
    public var block: Block
    /// False when the caller had blocked them already: the block keeps its first time.
    public var isNew: Bool
    /// Whether a friendship between the two ended with it.
    public var endedFriendship: Bool

    public init(block: Block, isNew: Bool, endedFriendship: Bool) {
        self.block = block
        self.isNew = isNew
        self.endedFriendship = endedFriendship
    }
}

/// Someone the caller blocked, as their list shows them.
public struct BlockView: Hashable, Sendable {
    public var person: UserSummary
    public var since: Timestamp

    public init(person: UserSummary, since: Timestamp) {
        self.person = person
        self.since = since
    }
}
