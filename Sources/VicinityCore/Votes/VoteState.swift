/// Whether a vote takes ballots, and if not, why and since when.
public enum VoteState: Hashable, Sendable {
    case open
    /// Voting has ended with ballots under names that read the same; the initiator settles them until `until`,
    /// and the result waits.
    case settling(FinishReason, endedAt: Timestamp, until: Timestamp)
    /// The result is out, since `at`.
    case finished(FinishReason, at: Timestamp)
    /// The initiator called the vote off: no result.
    case cancelled(at: Timestamp)

    /// Why voting ended.
    public enum FinishReason: String, Hashable, Sendable {
        case allVoted = "all_voted"
        case timeUp = "time_up"
        case closed
    }

    /// `open`, `settling`, `finished` or `cancelled`: the state's name on the wire.
    public var name: String {
        switch self {
        case .open: "open"
        case .settling: "settling"
        case .finished: "finished"
        case .cancelled: "cancelled"
        }
    }
}

/// How a settled vote's result was published.
public struct Settlement: Hashable, Sendable {
    public enum Publisher: String, Hashable, Sendable {
        /// The initiator published it.
        case initiator
        /// The settling time ran out with the ballots as they stood.
        case time
    }

    public var by: Publisher
    public var at: Timestamp

    public init(by: Publisher, at: Timestamp) {
        self.by = by
        self.at = at
    }
}
