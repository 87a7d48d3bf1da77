import Foundation
import GRDB
import GeoCore
import VicinityCore

/// The mapping between `Vote` and a row of the `vote` table.
enum VoteRow {
    /// Qualified, so that reads joined with `ballot` take the same columns.
    static let columns = """
        vote.id, vote.initiator_id, vote.subject, vote.options, vote.participants, vote.duration_minutes,
        vote.visibility, vote.anonymous, vote.lat, vote.lon, vote.label, vote.created_at, vote.ballots_cast,
        vote.completed_at
        """

    static func vote(_ row: Row) throws -> Vote {
        let id: String = row[0]
        do {
            guard let voteID = VoteID(id), voteID.rawValue == id else { throw StoreError.corrupt("vote id \(id) is malformed") }
            guard case .array(let values) = try JSONValue(jsonBytes: Array((row[3] as String).utf8)) else {
                throw StoreError.corrupt("options of vote \(id) are not a JSON array")
            }
            let texts = try values.map { value -> String in
                guard case .string(let text) = value else { throw StoreError.corrupt("an option of vote \(id) is not text") }
                return text
            }
            guard let visibility = VoteVisibility(rawValue: row[6]) else { throw StoreError.corrupt("vote \(id) has no visibility") }
            let created = Timestamp(millisecondsSince1970: row[11])
            let vote = Vote(
                id: voteID, initiator: try AccountRow.userID(row[1]), subject: try VoteSubject(row[2]),
                options: try VoteOptions(texts), participants: try ParticipantCount(row[4]),
                duration: try VoteDuration(storedMinutes: row[5]), visibility: visibility, anonymous: row[7],
                location: try Coordinate(latitude: row[8], longitude: row[9]), label: row[10], createdAt: created,
                ballotsCast: row[12], completedAt: (row[13] as Int64?).map(Timestamp.init(millisecondsSince1970:)))
            return vote
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.corrupt("vote \(id): \(error)")
        }
    }

    /// `open at ?`: not completed, and with time left or none set.
    static let openAt = "vote.completed_at IS NULL AND (vote.closes_at IS NULL OR vote.closes_at > ?)"
}

/// The mapping between `Ballot` and a row of the `ballot` table.
enum BallotRow {
    static let columns = "id, vote_id, voter_id, voter_name, option_index, cast_at, counted"

    static func ballot(_ row: Row) throws -> Ballot {
        let id: String = row[0]
        guard let ballotID = BallotID(id), let voteID = VoteID(row[1] as String) else {
            throw StoreError.corrupt("ballot \(id) has a malformed id")
        }
        return Ballot(
            id: ballotID, vote: voteID, voter: try AccountRow.userID(row[2]), voterName: row[3], option: row[4],
            castAt: Timestamp(millisecondsSince1970: row[5]), counted: row[6])
    }
}

extension SpatiaLiteStore: VoteStore {
    public func createVote(_ vote: Vote, passwordHash: PasswordHash) async throws -> Bool {
        let options = String(decoding: JSONValue.array(vote.options.texts.map(JSONValue.string)).jsonBytes, as: UTF8.self)
        return try await changingWrite { db in
            try db.execute(
                sql: """
                    INSERT INTO vote (id, initiator_id, subject, options, participants, password_hash, duration_minutes,
                                      visibility, anonymous, lat, lon, label, created_at, closes_at, geom)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, MakePoint(?11, ?10, 4326))
                    ON CONFLICT(id) DO NOTHING
                    """,
                arguments: [
                    vote.id.rawValue, vote.initiator.rawValue, vote.subject.rawValue, options, vote.participants.value,
                    passwordHash.encoded, vote.duration.minutes, vote.visibility.rawValue, vote.anonymous,
                    vote.location.latitude, vote.location.longitude, vote.label, vote.createdAt.millisecondsSince1970,
                    vote.closesAt?.millisecondsSince1970,
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
            return (try VoteRow.vote(row), PasswordHash(encoded: row[14]))
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

    public func castBallot(_ ballot: Ballot) async throws -> BallotOutcome {
        try await changingWrite { db in
            guard let state = try Row.fetchOne(
                db, sql: "SELECT \(VoteRow.openAt) FROM vote WHERE vote.id = ?",
                arguments: [ballot.castAt.millisecondsSince1970, ballot.vote.rawValue])
            else { return .noSuchVote }
            guard state[0] as Bool else { return .finished }
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
            try db.cachedStatement(sql: """
                UPDATE vote SET ballots_cast = ballots_cast + 1,
                    completed_at = CASE WHEN ballots_cast + 1 = participants THEN ? END
                WHERE id = ?
                """
            ).execute(arguments: [ballot.castAt.millisecondsSince1970, ballot.vote.rawValue])
            let sameName = try Int.fetchOne(
                db, sql: "SELECT count(*) FROM ballot WHERE vote_id = ? AND name_key = ?",
                arguments: [ballot.vote.rawValue, ballot.nameKey]) ?? 0
            guard let vote = try Self.vote(db, id: ballot.vote) else { return .noSuchVote }
            return .cast(vote: vote, sameName: sameName)
        }
    }

    public func ballots(of vote: VoteID) async throws -> [Ballot] {
        try await pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT \(BallotRow.columns) FROM ballot WHERE vote_id = ? ORDER BY cast_at, id",
                arguments: [vote.rawValue]
            ).map(BallotRow.ballot)
        }
    }

    public func ballot(of vote: VoteID, by voter: UserID) async throws -> Ballot? {
        try await pool.read { db in
            try Row.fetchOne(
                db, sql: "SELECT \(BallotRow.columns) FROM ballot WHERE vote_id = ? AND voter_id = ?",
                arguments: [vote.rawValue, voter.rawValue]
            ).map(BallotRow.ballot)
        }
    }

    public func setCounted(_ counted: Bool, ballot id: BallotID, of vote: VoteID, at now: Timestamp) async throws -> CountChange {
        try await pool.write { db in
            guard let open = try Bool.fetchOne(
                db, sql: "SELECT \(VoteRow.openAt) FROM vote JOIN ballot ON ballot.vote_id = vote.id WHERE vote.id = ? AND ballot.id = ?",
                arguments: [now.millisecondsSince1970, vote.rawValue, id.rawValue])
            else { return .noSuchBallot }
            guard open else { return .voteFinished }
            try db.execute(sql: "UPDATE ballot SET counted = ? WHERE id = ?", arguments: [counted, id.rawValue])
            guard let ballot = try Row.fetchOne(
                db, sql: "SELECT \(BallotRow.columns) FROM ballot WHERE id = ?", arguments: [id.rawValue]
            ).map(BallotRow.ballot)
            else { return .noSuchBallot }
            return .changed(ballot)
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

    public func claimFinishAnnouncements(at now: Timestamp, limit: Int) async throws -> [Vote] {
        try await changingWrite { db in
            let votes = try Row.fetchAll(
                db,
                sql: """
                    SELECT \(VoteRow.columns) FROM vote
                    WHERE vote.finish_announced = 0 AND (vote.completed_at IS NOT NULL OR vote.closes_at <= ?)
                    ORDER BY coalesce(vote.completed_at, vote.closes_at), vote.id LIMIT ?
                    """,
                arguments: [now.millisecondsSince1970, limit]
            ).map(VoteRow.vote)
            guard !votes.isEmpty else { return [] }
            try db.execute(
                sql: "UPDATE vote SET finish_announced = 1 WHERE id IN (SELECT value FROM json_each(?))",
                arguments: [Self.jsonList(votes.map(\.id.rawValue))])
            return votes
        }
    }

    private static func vote(_ db: Database, id: VoteID) throws -> Vote? {
        try Row.fetchOne(db, sql: "SELECT \(VoteRow.columns) FROM vote WHERE vote.id = ?", arguments: [id.rawValue])
            .map(VoteRow.vote)
    }
}
