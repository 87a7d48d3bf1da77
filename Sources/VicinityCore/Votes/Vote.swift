import GeoCore

/// A vote as stored: its settings, where it is held, how many have voted and what its initiator did to it.
/// Its state is not stored but read off the clock (`state(at:)`), so a vote whose time (or settling time) is up
/// has moved on for every reader whether or not anything ran at that moment.
public struct Vote: Hashable, Sendable {
    public var id: VoteID
    /// Nil once the initiator deleted their account: the vote, cancelled if it was not over, stays for those
    /// who voted in it.
    public var initiator: UserID?
    public var subject: VoteSubject
    public var options: VoteOptions
    public var participants: ParticipantCount
    public var duration: VoteDuration
    public var visibility: VoteVisibility
    public var anonymous: Bool
    /// Takes ballots only from accounts with a verified e-mail address, so that every ballot is a real
    /// person's (seed 001: "assures that every participant of a vote is valid").
    public var verifiedOnly: Bool
    public var location: Coordinate
    /// Where the vote is held in words, "Around Hall of Science", as the initiator was told when opening it.
    public var label: String
    public var createdAt: Timestamp
    /// Ballots cast, voided ones included: a voided ballot was still cast by a participant.
    public var ballotsCast: Int
    /// When the last participant voted; nil until then.
    public var completedAt: Timestamp?
    /// The one extension of a timed vote, if its initiator gave it.
    public var extendedBy: VoteDuration?
    /// When the initiator closed the vote before its time.
    public var closedAt: Timestamp?
    /// When the initiator called the vote off: it then has no result.
    public var cancelledAt: Timestamp?
    /// Whether two or more ballots carry names that read the same, so that the vote settles before its result
    /// is published. Never set on an anonymous vote, which shows no names.
    public var nameConflict: Bool
    /// How long the initiator has to settle name conflicts once the vote ends, fixed when it opens, so that
    /// a change of the server's setting never moves a vote already running.
    public var settlingTime: Duration
    /// When the initiator ended settling and published the result.
    public var publishedAt: Timestamp?
    /// Raised by every change of the row (a ballot, an initiator's action), so that a copy held in memory
    /// keeps the newest of two copies that arrive out of order.
    public var revision: Int

    public init(
        id: VoteID, initiator: UserID?, subject: VoteSubject, options: VoteOptions, participants: ParticipantCount,
        duration: VoteDuration, visibility: VoteVisibility, anonymous: Bool, verifiedOnly: Bool = false,
        location: Coordinate, label: String,
        createdAt: Timestamp, settlingTime: Duration = VoteRules.standard.settlingTime, ballotsCast: Int = 0,
        completedAt: Timestamp? = nil, extendedBy: VoteDuration? = nil, closedAt: Timestamp? = nil,
        cancelledAt: Timestamp? = nil, nameConflict: Bool = false, publishedAt: Timestamp? = nil, revision: Int = 0
    ) {
        self.id = id
        self.initiator = initiator
        self.subject = subject
        self.options = options
        self.participants = participants
        self.duration = duration
        self.visibility = visibility
        self.anonymous = anonymous
        self.verifiedOnly = verifiedOnly
        self.location = location
        self.label = label
        self.createdAt = createdAt
        self.settlingTime = settlingTime
        self.ballotsCast = ballotsCast
        self.completedAt = completedAt
        self.extendedBy = extendedBy
        self.closedAt = closedAt
        self.cancelledAt = cancelledAt
        self.nameConflict = nameConflict
        self.publishedAt = publishedAt
        self.revision = revision
    }

    /// What the vote asks: what a ballot answers, checked again under the vote's lock when it is recorded.
    public var question: VoteQuestion { VoteQuestion(subject: subject, options: options) }

    /// When a timed vote runs out, its extension included; nil for a permanent vote.
    public var closesAt: Timestamp? {
        duration.minutes.map { createdAt + .seconds(($0 + (extendedBy?.minutes ?? 0)) * 60) }
    }

    /// When voting ends as far as the vote knows now: its completion or closing, else the end of its time; nil
    /// for a permanent vote nobody has closed.
    public var votingEnds: Timestamp? { completedAt ?? closedAt ?? closesAt }

    /// When and why ballots stopped being taken, as of `now`; nil while they are taken. Completion and closing
    /// end a vote whatever the time asked about, so that a ballot stamped just before either is still refused.
    public func ending(at now: Timestamp) -> (reason: VoteState.FinishReason, at: Timestamp)? {
        if let completedAt { return (.allVoted, completedAt) }
        if let closedAt { return (.closed, closedAt) }
        if let closesAt, closesAt <= now { return (.timeUp, closesAt) }
        return nil
    }

    public func state(at now: Timestamp) -> VoteState {
        if let cancelledAt { return .cancelled(at: cancelledAt) }
        guard let end = ending(at: now) else { return .open }
        let (reason, ended) = end
        guard nameConflict else { return .finished(reason, at: ended) }
        if let publishedAt { return .finished(reason, at: publishedAt) }
        let until = ended + settlingTime
        return until <= now ? .finished(reason, at: until) : .settling(reason, endedAt: ended, until: until)
    }

    public func isOpen(at now: Timestamp) -> Bool { state(at: now) == .open }
}

/// A vote's subject and options: what a ballot's option index refers to.
public struct VoteQuestion: Hashable, Sendable {
    public var subject: VoteSubject
    public var options: VoteOptions

    public init(subject: VoteSubject, options: VoteOptions) {
        self.subject = subject
        self.options = options
    }
}
