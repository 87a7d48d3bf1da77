/// A vote with what only the record keeps: its password's hash and which announcements were made. Every
/// store keeps it whole and changes it only through the rules below, read and written back under the vote's
/// lock, so that the rules are written once, here, and stores only compare the times these rules work out.
public struct StoredVote: Hashable, Sendable {
    public var vote: Vote
    public var passwordHash: PasswordHash
    /// The initiator was told that the vote settles name conflicts (or it never needed to be).
    public var settlingAnnounced: Bool
    /// Everyone in the vote was told that it finished or was called off.
    public var finishAnnounced: Bool

    public init(vote: Vote, passwordHash: PasswordHash, settlingAnnounced: Bool = false, finishAnnounced: Bool = false) {
        self.vote = vote
        self.passwordHash = passwordHash
        self.settlingAnnounced = settlingAnnounced
        self.finishAnnounced = finishAnnounced
    }
}

// MARK: - Times the stores compare

extension StoredVote {
    /// The version of the rules behind `votingEndsAt`, `finalAt` and `announcementDueAt`: stores keep these
    /// times in columns, and recompute every row when it changes.
    public static let timesRuleVersion = 1

    /// Whether the vote takes ballots before `votingEndsAt`: nothing has ended it (completion, closing,
    /// cancelling) and nothing of it was announced. A store lists a vote as open at `now` exactly when this
    /// holds and `votingEndsAt` is nil or later than `now`: the same as `state(at: now) == .open`, for any
    /// `now`, before or after an ending that is recorded.
    public var takesBallots: Bool {
        vote.completedAt == nil && vote.closedAt == nil && vote.cancelledAt == nil && !settlingAnnounced && !finishAnnounced
    }

    /// When voting ends as far as the vote knows now: its completion, closing or cancelling, else the end of
    /// its time; nil while nothing will end it.
    public var votingEndsAt: Timestamp? {
        [vote.completedAt, vote.closedAt, vote.cancelledAt, vote.closesAt].compactMap { $0 }.min()
    }

    /// From when the vote is final (finished or cancelled, `Vote.state(at:)`) as far as it knows now; nil while
    /// nothing will make it so.
    public var finalAt: Timestamp? {
        if let cancelledAt = vote.cancelledAt { return cancelledAt }
        guard let ended = vote.votingEnds else { return nil }
        guard vote.nameConflict, vote.publishedAt == nil else { return ended }
        return ended + vote.settlingTime
    }

    /// From when an announcement is owed (`claimAnnouncement(at:)`); nil when none will be: the initiator is owed
    /// one when settling begins, everyone in the vote one when it is final.
    public var announcementDueAt: Timestamp? {
        guard !finishAnnounced else { return nil }
        var due: [Timestamp] = []
        if let finalAt { due.append(finalAt) }
        if !settlingAnnounced, vote.nameConflict, vote.cancelledAt == nil, vote.publishedAt == nil,
            let ended = vote.votingEnds
        {
            due.append(ended)
        }
        return due.min()
    }

    /// Whether an announcement is owed at `now`.
    public func isAnnouncementDue(at now: Timestamp) -> Bool {
        announcementDueAt.map { $0 <= now } ?? false
    }
}

// MARK: - The rules stores apply under the vote's lock

extension StoredVote {
    /// Counts `ballot`, or says why not: refused when the vote is not open at the ballot's time (time up, every
    /// participant has voted, closed or cancelled) or any announcement of it was made (a ballot stamped just
    /// before the end but recorded after its announcement is late), when its question is no longer the one the
    /// ballot's option was checked against, or when the voter has a ballot in it (`votersBallot`). A counted
    /// ballot completes the vote when it is the last participant's, and puts a vote that shows names into a
    /// name conflict when `sameNameBallots` other ballots carry a name that reads as its own.
    public mutating func cast(
        _ ballot: Ballot, answering question: VoteQuestion, votersBallot: Ballot?, sameNameBallots: Int
    ) -> BallotOutcome {
        guard vote.isOpen(at: ballot.castAt), !settlingAnnounced, !finishAnnounced else { return .finished }
        guard vote.question == question else { return .questionChanged }
        guard votersBallot == nil else { return .alreadyVoted }
        if !vote.anonymous, sameNameBallots > 0 { vote.nameConflict = true }
        vote.ballotsCast += 1
        vote.revision += 1
        if vote.ballotsCast == vote.participants.value { vote.completedAt = ballot.castAt }
        return .cast(vote)
    }

    /// Marks the announcement owed at `now` as made, when one is (true); which one the caller reads off
    /// `vote.state(at: now)`. A vote whose settling ended before its first announcement was made is owed only
    /// the second.
    public mutating func claimAnnouncement(at now: Timestamp) -> Bool {
        guard isAnnouncementDue(at: now) else { return false }
        settlingAnnounced = true
        switch vote.state(at: now) {
        case .open, .settling: break
        case .finished, .cancelled: finishAnnounced = true
        }
        return true
    }
}
