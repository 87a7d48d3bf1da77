import Foundation
import GRDB
import GeoCore
import VicinityCore

/// The mapping between `Vote` and a row of the `vote` table, by column name.
enum VoteRow {
    /// Qualified, so that reads joined with `ballot` take the same columns.
    static let columns = """
        vote.id, vote.initiator_id, vote.subject, vote.options, vote.participants, vote.duration_minutes,
        vote.visibility, vote.anonymous, vote.lat, vote.lon, vote.label, vote.created_at, vote.ballots_cast,
        vote.completed_at, vote.extended_minutes, vote.closed_at, vote.cancelled_at, vote.name_conflict,
        vote.settling_ms, vote.published_at, vote.revision
        """

    static func vote(_ row: Row) throws -> Vote {
        let id: String = row["id"]
        do {
            guard let voteID = VoteID(id), voteID.rawValue == id else { throw StoreError.corrupt("vote id \(id) is malformed") }
            let options = try VoteOptions(storedJSON: row["options"], vote: id)
            guard let visibility = VoteVisibility(rawValue: row["visibility"]) else { throw StoreError.corrupt("vote \(id) has no visibility") }
            func time(_ column: String) -> Timestamp? { (row[column] as Int64?).map(Timestamp.init(millisecondsSince1970:)) }
            let extended: Int? = row["extended_minutes"]
            return Vote(
                id: voteID, initiator: try AccountRow.userID(row["initiator_id"]), subject: try VoteSubject(row["subject"]),
                options: options, participants: try ParticipantCount(row["participants"]),
                duration: try VoteDuration(storedMinutes: row["duration_minutes"]), visibility: visibility,
                anonymous: row["anonymous"], location: try Coordinate(latitude: row["lat"], longitude: row["lon"]),
                label: row["label"], createdAt: Timestamp(millisecondsSince1970: row["created_at"]),
                settlingTime: .milliseconds(row["settling_ms"] as Int64), ballotsCast: row["ballots_cast"],
                completedAt: time("completed_at"), extendedBy: try extended.map { try VoteDuration(storedMinutes: $0) },
                closedAt: time("closed_at"), cancelledAt: time("cancelled_at"), nameConflict: row["name_conflict"],
                publishedAt: time("published_at"), revision: row["revision"])
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.corrupt("vote \(id): \(error)")
        }
    }

    /// `open at ?`: not completed, closed or cancelled, with time left or none set, and nothing announced (a
    /// ballot stamped just before the end but written after its announcement is late).
    static let openAt = """
        vote.completed_at IS NULL AND vote.closed_at IS NULL AND vote.cancelled_at IS NULL
            AND vote.settling_announced = 0 AND vote.finish_announced = 0
            AND (vote.closes_at IS NULL OR vote.closes_at > ?)
        """

    /// When voting ended, as of `?1`; NULL while it is open (cancelling aside).
    private static let endedAt = "coalesce(vote.completed_at, vote.closed_at, CASE WHEN vote.closes_at <= ?1 THEN vote.closes_at END)"

    /// Whether the vote is finished or cancelled as of `?1` (`Vote.state(at:)`): called off, or ended with no
    /// name conflict, or with one that was published or whose settling time ran out.
    static let finalAt = """
        (vote.cancelled_at IS NOT NULL OR (\(endedAt) IS NOT NULL AND (NOT vote.name_conflict
            OR vote.published_at IS NOT NULL OR \(endedAt) + vote.settling_ms <= ?1)))
        """

    /// Whether an announcement is due as of `?1` (`StoredVote.announcementDue`): the finish not yet told, and
    /// the vote final, or ended (so settling or past it) with its settling not yet told. `finish_announced = 0`
    /// is written as the partial index `vote_unannounced` says it, so that SQLite uses the index.
    static let announcementDue = """
        vote.finish_announced = 0 AND (\(finalAt) OR (\(endedAt) IS NOT NULL AND vote.settling_announced = 0))
        """

    /// What an announcement is ordered by: the cancelling, else the end of voting.
    static let announcementTime = "coalesce(vote.cancelled_at, \(endedAt))"

    /// The columns an initiator's change writes (`VoteStore.updateVote`), with their values.
    static func changeable(_ vote: Vote) -> (assignments: String, arguments: StatementArguments) {
        (
            """
            subject = :subject, options = :options, extended_minutes = :extended, closes_at = :closes,
            closed_at = :closed, cancelled_at = :cancelled, published_at = :published, revision = :revision
            """,
            [
                "subject": vote.subject.rawValue, "options": vote.options.storedJSON, "extended": vote.extendedBy?.minutes,
                "closes": vote.closesAt?.millisecondsSince1970, "closed": vote.closedAt?.millisecondsSince1970,
                "cancelled": vote.cancelledAt?.millisecondsSince1970, "published": vote.publishedAt?.millisecondsSince1970,
                "revision": vote.revision,
            ])
    }
}

/// The mapping between `Ballot` and a row of the `ballot` table.
enum BallotRow {
    static let columns = "id, vote_id, voter_id, voter_name, option_index, cast_at, counted"

    static func ballot(_ row: Row) throws -> Ballot {
        let id: String = row["id"]
        guard let ballotID = BallotID(id), let voteID = VoteID(row["vote_id"] as String) else {
            throw StoreError.corrupt("ballot \(id) has a malformed id")
        }
        return Ballot(
            id: ballotID, vote: voteID, voter: try AccountRow.userID(row["voter_id"]), voterName: row["voter_name"],
            option: row["option_index"], castAt: Timestamp(millisecondsSince1970: row["cast_at"]), counted: row["counted"])
    }
}

extension SpatiaLiteStore: VoteStore {
    public func createVote(_ vote: Vote, passwordHash: PasswordHash) async throws -> Bool {
        let options = vote.options.storedJSON
        return try await changingWrite { db in
            try db.execute(
                sql: """
                    INSERT INTO vote (id, initiator_id, subject, options, participants, password_hash, duration_minutes,
                                      visibility, anonymous, lat, lon, label, created_at, closes_at, settling_ms, geom)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, MakePoint(?11, ?10, 4326))
                    ON CONFLICT(id) DO NOTHING
                    """,
                arguments: [
                    vote.id.rawValue, vote.initiator.rawValue, vote.subject.rawValue, options, vote.participants.value,
                    passwordHash.encoded, vote.duration.minutes, vote.visibility.rawValue, vote.anonymous,
                    vote.location.latitude, vote.location.longitude, vote.label, vote.createdAt.millisecondsSince1970,
                    vote.closesAt?.millisecondsSince1970, vote.settlingTime.wholeMilliseconds,
                ])
            return db.changesCount == 1
        }
    }

    public func vote(id: VoteID) async throws -> Vote? {
        try await pool.read { db in try Self.vote(db, id: id) }
    }

    public func voteForBallot(id: VoteID) async throws -> (vote: Vote, passwordHash: PasswordHash)? {
        try await pool.read { db in
            guard let row = try Row.fetchOne(
                db, sql: "SELECT \(VoteRow.columns), vote.password_hash FROM vote WHERE vote.id = ?", arguments: [id.rawValue])
            else { return nil }
            return (try VoteRow.vote(row), PasswordHash(encoded: row["password_hash"]))
        }
    }

    public func openPublicVotes(near centre: Coordinate, within radius: Distance, at now: Timestamp, limit: Int) async throws -> [Vote] {
        try await pool.read { db in
            let box = BoundingBox(around: centre, radius: radius)
            let statement = try db.cachedStatement(sql: """
                SELECT \(VoteRow.columns) FROM vote
                WHERE vote.rowid IN (SELECT pkid FROM idx_vote_geom WHERE xmin <= ? AND xmax >= ? AND ymin <= ? AND ymax >= ?)
                    AND vote.visibility = 'public' AND \(VoteRow.openAt)
                """)
            var candidates: [Vote] = []
            for range in box.longitudeRanges {
                let rows = try Row.fetchCursor(
                    statement,
                    arguments: [range.upperBound, range.lowerBound, box.maxLatitude, box.minLatitude, now.millisecondsSince1970])
                while let row = try rows.next() { candidates.append(try VoteRow.vote(row)) }
            }
            return Ranking.nearest(candidates, to: centre, within: radius, limit: limit, at: \.location, id: \.id).map(\.item)
        }
    }

    public func openPublicVotes(at now: Timestamp) async throws -> [Vote] {
        try await pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT \(VoteRow.columns) FROM vote WHERE vote.visibility = 'public' AND \(VoteRow.openAt)",
                arguments: [now.millisecondsSince1970]
            ).map(VoteRow.vote)
        }
    }

    public func castBallot(_ ballot: Ballot, answering question: VoteQuestion) async throws -> BallotOutcome {
        try await changingWrite { db in
            guard let state = try Row.fetchOne(
                db, sql: "SELECT \(VoteRow.openAt) AS open, (vote.subject = ? AND vote.options = ?) AS asked FROM vote WHERE vote.id = ?",
                arguments: [
                    ballot.castAt.millisecondsSince1970, question.subject.rawValue, question.options.storedJSON,
                    ballot.vote.rawValue,
                ])
            else { return .noSuchVote }
            guard state["open"] as Bool else { return .finished }
            guard state["asked"] as Bool else { return .questionChanged }
            let voted = try Bool.fetchOne(
                db, sql: "SELECT 1 FROM ballot WHERE vote_id = ? AND voter_id = ?",
                arguments: [ballot.vote.rawValue, ballot.voter.rawValue]) ?? false
            guard !voted else { return .alreadyVoted }
            try db.cachedStatement(sql: """
                INSERT INTO ballot (id, vote_id, voter_id, voter_name, name_key, option_index, cast_at, counted)
                VALUES (?, ?, ?, ?, ?, ?, ?, 1)
                """
            ).execute(arguments: [
                ballot.id.rawValue, ballot.vote.rawValue, ballot.voter.rawValue, ballot.voterName, ballot.nameKey,
                ballot.option, ballot.castAt.millisecondsSince1970,
            ])
            // A name that reads as an earlier ballot's puts a vote that shows names into a name conflict.
            try db.cachedStatement(sql: """
                UPDATE vote SET ballots_cast = ballots_cast + 1, revision = revision + 1,
                    completed_at = CASE WHEN ballots_cast + 1 = participants THEN ?1 END,
                    name_conflict = name_conflict OR (NOT anonymous
                        AND (SELECT count(*) FROM ballot WHERE vote_id = ?2 AND name_key = ?3) > 1)
                WHERE id = ?2
                """
            ).execute(arguments: [ballot.castAt.millisecondsSince1970, ballot.vote.rawValue, ballot.nameKey])
            guard let vote = try Self.vote(db, id: ballot.vote) else { return .noSuchVote }
            return .cast(vote)
        }
    }

    public func ballots(of vote: VoteID) async throws -> [Ballot] {
        try await pool.read { db in try Self.ballots(db, of: vote) }
    }

    public func ballot(of vote: VoteID, by voter: UserID) async throws -> Ballot? {
        try await pool.read { db in
            try Row.fetchOne(
                db, sql: "SELECT \(BallotRow.columns) FROM ballot WHERE vote_id = ? AND voter_id = ?",
                arguments: [vote.rawValue, voter.rawValue]
            ).map(BallotRow.ballot)
        }
    }

    /// In the one write transaction, as ballots are cast: a void never interleaves with the ballot that ends
    /// the vote, nor with another void.
    public func setCounted(
        _ counted: Bool, ballot id: BallotID, of vote: VoteID, rule: @escaping @Sendable (Vote, [Ballot]) throws -> Void
    ) async throws -> Ballot? {
        try await pool.write { db in
            guard let current = try Self.vote(db, id: vote) else { return nil }
            let ballots = try Self.ballots(db, of: vote)
            guard ballots.contains(where: { $0.id == id }) else { return nil }
            try rule(current, ballots)
            try db.execute(sql: "UPDATE ballot SET counted = ? WHERE id = ?", arguments: [counted, id.rawValue])
            return try Row.fetchOne(db, sql: "SELECT \(BallotRow.columns) FROM ballot WHERE id = ?", arguments: [id.rawValue])
                .map(BallotRow.ballot)
        }
    }

    public func updateVote(_ id: VoteID, _ change: @escaping @Sendable (inout Vote) throws -> Void) async throws -> Vote? {
        try await changingWrite { db in
            guard var vote = try Self.vote(db, id: id) else { return nil }
            let old = vote
            try change(&vote)
            try vote.checkInitiatorChange(from: old)
            let (assignments, values) = VoteRow.changeable(vote)
            var arguments = values
            arguments += ["id": id.rawValue]
            try db.execute(sql: "UPDATE vote SET \(assignments) WHERE id = :id", arguments: arguments)
            return try Self.vote(db, id: id)
        }
    }

    public func votes(of user: UserID, role: VoteRole, limit: Int) async throws -> [Vote] {
        let sql = switch role {
        case .initiated:
            "SELECT \(VoteRow.columns) FROM vote WHERE vote.initiator_id = ? ORDER BY vote.created_at DESC, vote.id DESC LIMIT ?"
        case .attended:
            """
            SELECT \(VoteRow.columns) FROM ballot JOIN vote ON vote.id = ballot.vote_id
            WHERE ballot.voter_id = ? ORDER BY vote.created_at DESC, vote.id DESC LIMIT ?
            """
        }
        return try await pool.read { db in
            try Row.fetchAll(db, sql: sql, arguments: [user.rawValue, limit]).map(VoteRow.vote)
        }
    }

    public func claimAnnouncements(at now: Timestamp, limit: Int) async throws -> [Vote] {
        try await changingWrite { db in
            let votes = try Row.fetchAll(
                db,
                sql: """
                    SELECT \(VoteRow.columns) FROM vote WHERE \(VoteRow.announcementDue)
                    ORDER BY \(VoteRow.announcementTime), vote.id LIMIT ?2
                    """,
                arguments: [now.millisecondsSince1970, limit]
            ).map(VoteRow.vote)
            guard !votes.isEmpty else { return [] }
            try db.execute(
                sql: """
                    UPDATE vote SET settling_announced = 1, finish_announced = \(VoteRow.finalAt)
                    WHERE id IN (SELECT value FROM json_each(?2))
                    """,
                arguments: [now.millisecondsSince1970, Self.jsonList(votes.map(\.id.rawValue))])
            return votes
        }
    }

    private static func ballots(_ db: Database, of vote: VoteID) throws -> [Ballot] {
        try Row.fetchAll(
            db, sql: "SELECT \(BallotRow.columns) FROM ballot WHERE vote_id = ? ORDER BY cast_at, id", arguments: [vote.rawValue]
        ).map(BallotRow.ballot)
    }

    private static func vote(_ db: Database, id: VoteID) throws -> Vote? {
        try Row.fetchOne(db, sql: "SELECT \(VoteRow.columns) FROM vote WHERE vote.id = ?", arguments: [id.rawValue])
            .map(VoteRow.vote)
    }
}
