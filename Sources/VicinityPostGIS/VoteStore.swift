import Foundation
import GeoCore
import PostgresNIO
import VicinityCore

/// The mapping between `Vote` and a row of the `vote` table.
enum VoteRow {
    /// Qualified, so that reads joined with `ballot` take the same columns.
    static let columns = """
        vote.id, vote.initiator_id, vote.subject, vote.options::text AS options, vote.participants,
        vote.duration_minutes, vote.visibility, vote.anonymous, vote.lat, vote.lon, vote.label, vote.created_at,
        vote.ballots_cast, vote.completed_at, vote.extended_minutes, vote.closed_at, vote.cancelled_at,
        vote.name_conflict, vote.settling_ms, vote.published_at, vote.revision
        """

    static func vote(_ row: Columns) throws -> Vote {
        let id: String = try row.decode("id")
        do {
            guard let voteID = VoteID(id), voteID.rawValue == id else { throw StoreError.corrupt("vote id \(id) is malformed") }
            let options = try VoteOptions(storedJSON: try row.decode("options"), vote: id)
            guard let visibility = VoteVisibility(rawValue: try row.decode("visibility")) else {
                throw StoreError.corrupt("vote \(id) has no visibility")
            }
            let extended = try row.decode("extended_minutes", as: Int?.self)
            return Vote(
                id: voteID, initiator: try AccountRow.userID(try row.decode("initiator_id")),
                subject: try VoteSubject(try row.decode("subject", as: String.self)), options: options,
                participants: try ParticipantCount(try row.decode("participants", as: Int.self)),
                duration: try VoteDuration(storedMinutes: try row.decode("duration_minutes", as: Int?.self)),
                visibility: visibility, anonymous: try row.decode("anonymous"),
                location: try Coordinate(latitude: try row.decode("lat"), longitude: try row.decode("lon")),
                label: try row.decode("label"), createdAt: try row.timestamp("created_at"),
                settlingTime: .milliseconds(try row.decode("settling_ms", as: Int64.self)),
                ballotsCast: try row.decode("ballots_cast"), completedAt: try row.optionalTimestamp("completed_at"),
                extendedBy: try extended.map { try VoteDuration(storedMinutes: $0) },
                closedAt: try row.optionalTimestamp("closed_at"), cancelledAt: try row.optionalTimestamp("cancelled_at"),
                nameConflict: try row.decode("name_conflict"), publishedAt: try row.optionalTimestamp("published_at"),
                revision: try row.decode("revision"))
        } catch let error as ValidationError {
            throw StoreError.corrupt("vote \(id): \(error)")
        }
    }

    /// "Open at a time": not completed, closed or cancelled, with time left or none set, and nothing announced
    /// (a ballot stamped just before the end but written after its announcement is late); the time is the
    /// statement's one parameter written after it.
    static let openBefore = """
        vote.completed_at IS NULL AND vote.closed_at IS NULL AND vote.cancelled_at IS NULL
            AND NOT vote.settling_announced AND NOT vote.finish_announced
            AND (vote.closes_at IS NULL OR vote.closes_at >
        """

    /// When voting ended as of `now`; NULL while it is open (cancelling aside). The time is written into the
    /// text as a number, never taken from input.
    private static func endedAt(_ now: Timestamp) -> String {
        let now = now.millisecondsSince1970
        return "coalesce(vote.completed_at, vote.closed_at, CASE WHEN vote.closes_at <= \(now) THEN vote.closes_at END)"
    }

    /// Whether the vote is finished or cancelled as of `now` (`Vote.state(at:)`): called off, or ended with no
    /// name conflict, or with one that was published or whose settling time ran out.
    static func finalAt(_ now: Timestamp) -> String {
        """
        (vote.cancelled_at IS NOT NULL OR (\(endedAt(now)) IS NOT NULL AND (NOT vote.name_conflict
            OR vote.published_at IS NOT NULL OR \(endedAt(now)) + vote.settling_ms <= \(now.millisecondsSince1970))))
        """
    }

    /// Whether an announcement is due as of `now` (`StoredVote.announcementDue`): the finish not yet told, and
    /// the vote final, or ended (so settling or past it) with its settling not yet told.
    static func announcementDue(_ now: Timestamp) -> String {
        "NOT vote.finish_announced AND (\(finalAt(now)) OR (\(endedAt(now)) IS NOT NULL AND NOT vote.settling_announced))"
    }

    /// What announcements are ordered by: the cancelling, else the end of voting.
    static func announcementTime(_ now: Timestamp) -> String { "coalesce(vote.cancelled_at, \(endedAt(now)))" }
}

/// The mapping between `Ballot` and a row of the `ballot` table.
enum BallotRow {
    static let columns = "id, vote_id, voter_id, voter_name, option_index, cast_at, counted"

    static func ballot(_ row: Columns) throws -> Ballot {
        let id: String = try row.decode("id")
        guard let ballotID = BallotID(id), let voteID = VoteID(try row.decode("vote_id", as: String.self)) else {
            throw StoreError.corrupt("ballot \(id) has a malformed id")
        }
        return Ballot(
            id: ballotID, vote: voteID, voter: try AccountRow.userID(try row.decode("voter_id")),
            voterName: try row.decode("voter_name"), option: try row.decode("option_index"),
            castAt: try row.timestamp("cast_at"), counted: try row.decode("counted"))
    }
}

extension PostGISStore: VoteStore {
    public func createVote(_ vote: Vote, passwordHash: PasswordHash) async throws -> Bool {
        let options = vote.options.storedJSON
        let created = !(try await rows("""
            INSERT INTO vote (id, initiator_id, subject, options, participants, password_hash, duration_minutes,
                              visibility, anonymous, lat, lon, label, created_at, closes_at, settling_ms)
            VALUES (\(vote.id.rawValue), \(vote.initiator.rawValue), \(vote.subject.rawValue), \(options)::jsonb,
                    \(vote.participants.value), \(passwordHash.encoded), \(vote.duration.minutes), \(vote.visibility.rawValue),
                    \(vote.anonymous), \(vote.location.latitude), \(vote.location.longitude), \(vote.label),
                    \(vote.createdAt.millisecondsSince1970), \(vote.closesAt?.millisecondsSince1970),
                    \(vote.settlingTime.wholeMilliseconds))
            ON CONFLICT (id) DO NOTHING
            RETURNING 1 AS created
            """).isEmpty)
        if created { changesCommitted() }
        return created
    }

    public func vote(id: VoteID) async throws -> Vote? {
        try await rows("SELECT \(unescaped: VoteRow.columns) FROM vote WHERE vote.id = \(id.rawValue)").first.map(VoteRow.vote)
    }

    public func voteForBallot(id: VoteID) async throws -> (vote: Vote, passwordHash: PasswordHash)? {
        guard let row = try await rows("""
            SELECT \(unescaped: VoteRow.columns), vote.password_hash FROM vote WHERE vote.id = \(id.rawValue)
            """).first
        else { return nil }
        return (try VoteRow.vote(row), PasswordHash(encoded: try row.decode("password_hash")))
    }

    public func openPublicVotes(near centre: Coordinate, within radius: Distance, at now: Timestamp, limit: Int) async throws -> [Vote] {
        let query: PostgresQuery = """
            SELECT \(unescaped: VoteRow.columns) FROM vote
            WHERE ST_DWithin(
                    vote.location, ST_SetSRID(ST_MakePoint(\(centre.longitude), \(centre.latitude)), 4326)::geography,
                    \(CandidateRadius.meters(radius)), false)
                AND vote.visibility = 'public' AND \(unescaped: VoteRow.openBefore) \(now.millisecondsSince1970))
            """
        let candidates = try await rows(query).map(VoteRow.vote)
        return Ranking.nearest(candidates, to: centre, within: radius, limit: limit, at: \.location, id: \.id).map(\.item)
    }

    public func openPublicVotes(at now: Timestamp) async throws -> [Vote] {
        try await rows("""
            SELECT \(unescaped: VoteRow.columns) FROM vote
            WHERE vote.visibility = 'public' AND \(unescaped: VoteRow.openBefore) \(now.millisecondsSince1970))
            """).map(VoteRow.vote)
    }

    /// The vote's row is locked first, so ballots of one vote take turns: the open check, the one-per-voter
    /// check, the count and the completion are one step, however many race.
    public func castBallot(_ ballot: Ballot, answering question: VoteQuestion) async throws -> BallotOutcome {
        let outcome = try await transaction { transaction -> BallotOutcome in
            guard let state = try await transaction.rows("""
                SELECT \(unescaped: VoteRow.openBefore) \(ballot.castAt.millisecondsSince1970)) AS open,
                    (vote.subject = \(question.subject.rawValue) AND vote.options = \(question.options.storedJSON)::jsonb) AS asked
                FROM vote WHERE vote.id = \(ballot.vote.rawValue) FOR UPDATE
                """).first else { return .noSuchVote }
            guard try state.decode("open", as: Bool.self) else { return .finished }
            guard try state.decode("asked", as: Bool.self) else { return .questionChanged }
            let voted = try await transaction.rows("""
                SELECT 1 AS voted FROM ballot WHERE vote_id = \(ballot.vote.rawValue) AND voter_id = \(ballot.voter.rawValue)
                """)
            guard voted.isEmpty else { return .alreadyVoted }
            try await transaction.execute("""
                INSERT INTO ballot (id, vote_id, voter_id, voter_name, name_key, option_index, cast_at, counted)
                VALUES (\(ballot.id.rawValue), \(ballot.vote.rawValue), \(ballot.voter.rawValue), \(ballot.voterName),
                        \(ballot.nameKey), \(ballot.option), \(ballot.castAt.millisecondsSince1970), true)
                """)
            // A name that reads as an earlier ballot's puts a vote that shows names into a name conflict.
            guard let vote = try await transaction.rows("""
                UPDATE vote SET ballots_cast = ballots_cast + 1, revision = revision + 1,
                    completed_at = CASE WHEN ballots_cast + 1 = participants THEN \(ballot.castAt.millisecondsSince1970)::bigint END,
                    name_conflict = name_conflict OR (NOT anonymous AND (
                        SELECT count(*) FROM ballot WHERE vote_id = \(ballot.vote.rawValue) AND name_key = \(ballot.nameKey)) > 1)
                WHERE id = \(ballot.vote.rawValue)
                RETURNING \(unescaped: VoteRow.columns)
                """).first.map(VoteRow.vote)
            else { return .noSuchVote }
            return .cast(vote)
        }
        if case .cast = outcome { changesCommitted() }
        return outcome
    }

    public func ballots(of vote: VoteID) async throws -> [Ballot] {
        try await rows("""
            SELECT \(unescaped: BallotRow.columns) FROM ballot WHERE vote_id = \(vote.rawValue) ORDER BY cast_at, id COLLATE "C"
            """).map(BallotRow.ballot)
    }

    public func ballot(of vote: VoteID, by voter: UserID) async throws -> Ballot? {
        try await rows("""
            SELECT \(unescaped: BallotRow.columns) FROM ballot WHERE vote_id = \(vote.rawValue) AND voter_id = \(voter.rawValue)
            """).first.map(BallotRow.ballot)
    }

    /// Under the vote's row lock, as ballots are cast: a void never interleaves with the ballot that ends the
    /// vote, nor with another void.
    public func setCounted(
        _ counted: Bool, ballot id: BallotID, of vote: VoteID, rule: @escaping @Sendable (Vote, [Ballot]) throws -> Void
    ) async throws -> Ballot? {
        try await transaction { transaction in
            guard let current = try await transaction.rows("""
                SELECT \(unescaped: VoteRow.columns) FROM vote WHERE vote.id = \(vote.rawValue) FOR UPDATE
                """).first.map(VoteRow.vote) else { return nil }
            let ballots = try await transaction.rows("""
                SELECT \(unescaped: BallotRow.columns) FROM ballot WHERE vote_id = \(vote.rawValue) ORDER BY cast_at, id COLLATE "C"
                """).map(BallotRow.ballot)
            guard ballots.contains(where: { $0.id == id }) else { return nil }
            try rule(current, ballots)
            return try await transaction.rows("""
                UPDATE ballot SET counted = \(counted) WHERE id = \(id.rawValue) AND vote_id = \(vote.rawValue)
                RETURNING \(unescaped: BallotRow.columns)
                """).first.map(BallotRow.ballot)
        }
    }

    /// Under the vote's row lock: two changes, or a change and a ballot, never both pass against one state.
    public func updateVote(_ id: VoteID, _ change: @escaping @Sendable (inout Vote) throws -> Void) async throws -> Vote? {
        let changed = try await transaction { transaction -> Vote? in
            guard var vote = try await transaction.rows("""
                SELECT \(unescaped: VoteRow.columns) FROM vote WHERE vote.id = \(id.rawValue) FOR UPDATE
                """).first.map(VoteRow.vote) else { return nil }
            let old = vote
            try change(&vote)
            try vote.checkInitiatorChange(from: old)
            let options = vote.options.storedJSON
            return try await transaction.rows("""
                UPDATE vote SET subject = \(vote.subject.rawValue), options = \(options)::jsonb,
                    extended_minutes = \(vote.extendedBy?.minutes), closes_at = \(vote.closesAt?.millisecondsSince1970),
                    closed_at = \(vote.closedAt?.millisecondsSince1970), cancelled_at = \(vote.cancelledAt?.millisecondsSince1970),
                    published_at = \(vote.publishedAt?.millisecondsSince1970), revision = \(vote.revision)
                WHERE id = \(id.rawValue)
                RETURNING \(unescaped: VoteRow.columns)
                """).first.map(VoteRow.vote)
        }
        if changed != nil { changesCommitted() }
        return changed
    }

    public func votes(of user: UserID, role: VoteRole, limit: Int) async throws -> [Vote] {
        let query: PostgresQuery = switch role {
        case .initiated:
            """
            SELECT \(unescaped: VoteRow.columns) FROM vote WHERE vote.initiator_id = \(user.rawValue)
            ORDER BY vote.created_at DESC, vote.id COLLATE "C" DESC LIMIT \(limit)
            """
        case .attended:
            """
            SELECT \(unescaped: VoteRow.columns) FROM ballot JOIN vote ON vote.id = ballot.vote_id
            WHERE ballot.voter_id = \(user.rawValue) ORDER BY vote.created_at DESC, vote.id COLLATE "C" DESC LIMIT \(limit)
            """
        }
        return try await rows(query).map(VoteRow.vote)
    }

    /// Each row is claimed by the one transaction that locks it; others skip locked rows, and a row already
    /// claimed and committed no longer matches when it is rechecked under its lock.
    public func claimAnnouncements(at now: Timestamp, limit: Int) async throws -> [Vote] {
        let claimed = try await rows("""
            UPDATE vote SET settling_announced = true, finish_announced = \(unescaped: VoteRow.finalAt(now))
            WHERE vote.id IN (
                SELECT id FROM vote
                WHERE \(unescaped: VoteRow.announcementDue(now))
                ORDER BY \(unescaped: VoteRow.announcementTime(now)), id COLLATE "C" LIMIT \(limit)
                FOR UPDATE SKIP LOCKED)
            RETURNING \(unescaped: VoteRow.columns), \(unescaped: VoteRow.announcementTime(now)) AS announced_for
            """)
        let votes = try claimed.map { (vote: try VoteRow.vote($0), time: try $0.decode("announced_for", as: Int64.self)) }
        if !votes.isEmpty { changesCommitted() }
        return votes.sorted { a, b in
            a.time != b.time ? a.time < b.time : a.vote.id.rawValue.utf8.lexicographicallyPrecedes(b.vote.id.rawValue.utf8)
        }.map(\.vote)
    }
}
