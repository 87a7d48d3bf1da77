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

/// Someone who voted, as a result names them: never with their choice.
public struct VoterEntry: Hashable, Sendable {
    /// Nil for a voter who deleted their account since.
    public var name: String?
    public var counted: Bool
}

extension VoteResult {
    /// Counts the vote's ballots as `viewer` reads the result: the tally, the winners and the voters' names are
    /// the same for everyone allowed to see them; only `yourBallot` is the viewer's own.
    public init(vote view: VoteView, ballots: [Ballot], for viewer: UserID?) {
        var tally = Array(repeating: 0, count: view.vote.options.texts.count)
        for ballot in ballots where ballot.counted { tally[ballot.option] += 1 }
        let voided = ballots.count { !$0.counted }
        let most = tally.max() ?? 0
        let voters = view.vote.anonymous ? nil : ballots
            .map { VoterEntry(name: $0.voterName, counted: $0.counted) }
            .enumerated()
            .sorted { a, b in
                let (first, second) = (a.element.name ?? "", b.element.name ?? "")
                return first != second ? first < second : a.offset < b.offset
            }
            .map(\.element)
        self.init(
            view: view, tally: tally, winners: most == 0 ? [] : tally.indices.filter { tally[$0] == most },
            ballotsCounted: tally.reduce(0, +), ballotsVoided: voided, voters: voters,
            yourBallot: viewer.flatMap { viewer in ballots.first { $0.voter == viewer } })
    }
}

/// A finished vote's outcome without the voters' names, as one person reads it: what a `vote_finished` event
/// carries to each who may see it. One event per voter, each with every name, would grow with the square of a
/// lecture hall; the names are one `GET /v1/votes/{id}/result` away.
public struct VoteOutcome: Hashable, Sendable {
    /// The options' texts, by index, as the vote asked them.
    public var options: [String]
    /// Counted ballots per option, by option index.
    public var tally: [Int]
    public var winners: [Int]
    public var participants: Int
    public var ballotsCast: Int
    public var ballotsCounted: Int
    public var ballotsVoided: Int
    public var settlement: Settlement?
    /// The reader's own ballot; nil when they did not vote.
    public var yourBallot: OwnBallot?

    public init(
        options: [String], tally: [Int], winners: [Int], participants: Int, ballotsCast: Int, ballotsCounted: Int,
        ballotsVoided: Int, settlement: Settlement?, yourBallot: OwnBallot?
    ) {
        self.options = options
        self.tally = tally
        self.winners = winners
        self.participants = participants
        self.ballotsCast = ballotsCast
        self.ballotsCounted = ballotsCounted
        self.ballotsVoided = ballotsVoided
        self.settlement = settlement
        self.yourBallot = yourBallot
    }

    /// The outcome of a result as its reader reads it.
    public init(_ result: VoteResult) {
        self.init(
            options: result.view.vote.options.texts, tally: result.tally, winners: result.winners,
            participants: result.view.vote.participants.value, ballotsCast: result.view.vote.ballotsCast,
            ballotsCounted: result.ballotsCounted, ballotsVoided: result.ballotsVoided,
            settlement: result.view.settlement, yourBallot: result.yourBallot.map(OwnBallot.init))
    }
}

/// A ballot as its own voter reads it: the only form that names a choice, and only to its voter.
public struct OwnBallot: Hashable, Sendable {
    public var id: BallotID
    public var option: Int
    public var counted: Bool
    public var castAt: Timestamp

    public init(id: BallotID, option: Int, counted: Bool, castAt: Timestamp) {
        self.id = id
        self.option = option
        self.counted = counted
        self.castAt = castAt
    }

    public init(_ ballot: Ballot) {
        self.init(id: ballot.id, option: ballot.option, counted: ballot.counted, castAt: ballot.castAt)
    }
}
