/// One person's ballot. Only the voter is ever shown `option`; everyone else sees at most that a ballot
/// exists, by whom (unless the vote is anonymous) and whether it is counted.
public struct Ballot: Hashable, Sendable {
    public var id: BallotID
    public var vote: VoteID
    /// Nil once the voter deleted their account: the ballot still counts as cast, and names nobody.
    public var voter: UserID?
    /// The voter's display name when voting, which the result lists and name conflicts compare; nil once the
    /// voter deleted their account.
    public var voterName: String?
    public var option: Int
    public var castAt: Timestamp
    /// False once the initiator voids it.
    public var counted: Bool

    public init(id: BallotID, vote: VoteID, voter: UserID?, voterName: String?, option: Int, castAt: Timestamp, counted: Bool = true) {
        self.id = id
        self.vote = vote
        self.voter = voter
        self.voterName = voterName
        self.option = option
        self.castAt = castAt
        self.counted = counted
    }

    /// Names that compare the same here read the same in a result: case and accents are ignored. Nil for a
    /// ballot that names nobody any more.
    public var nameKey: String? { voterName.map(Self.nameKey) }

    /// The ballot once its voter deleted their account: counted as before, naming nobody.
    public var withoutVoter: Ballot {
        var ballot = self
        ballot.voter = nil
        ballot.voterName = nil
        return ballot
    }

    /// Whether the initiator may set `ballot` to `counted` among the vote's `ballots`, when settling name
    /// conflicts: only ballots that share their voter's name with another ballot, and never the last counted
    /// ballot of a name. Voiding at will would let an initiator void every ballot but one person's and read
    /// that choice from the tally; this confines voiding to real name conflicts. It does not stop an initiator
    /// who casts look-alike ballots under every other voter's name from voiding the real ones: that costs an
    /// account per voter, made for the occasion, which the conflict view shows (`BallotSummary.voterSince`).
    public static func checkSettling(
        _ ballot: BallotID, counted: Bool, among ballots: [Ballot]
    ) throws(ServiceError) {
        guard let target = ballots.first(where: { $0.id == ballot }) else { throw .notFound(.ballot) }
        guard let key = target.nameKey else { throw .conflict(.notInNameConflict) }
        let sameName = ballots.filter { $0.nameKey == key }
        guard sameName.count > 1 else { throw .conflict(.notInNameConflict) }
        if !counted, target.counted, sameName.filter(\.counted).count == 1 { throw .conflict(.lastCountedOfName) }
    }

    public static func nameKey(_ name: String) -> String { NameMatch.folded(name) }

    /// The ballots that share their voter's name with another, one group per name (in the order cast), the
    /// groups by name: what the initiator settles, and what `vote_conflict` counts.
    public static func nameConflicts(among ballots: [Ballot]) -> [[Ballot]] {
        Dictionary(grouping: ballots.filter { $0.nameKey != nil }, by: { $0.nameKey ?? "" }).values
            .filter { $0.count > 1 }
            .sorted { a, b in
                let (first, second) = (a[0].voterName ?? "", b[0].voterName ?? "")
                return first != second ? first < second : a[0].id < b[0].id
            }
    }
}
