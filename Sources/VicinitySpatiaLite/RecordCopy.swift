import Foundation
import GRDB
import GeoCore
import VicinityCore

/// The whole record at once, for moving a deployment between stores (`vicinity copy`).
extension SpatiaLiteStore {
    public func contents() async throws -> RecordContents {
        try await pool.read { db in
            var contents = RecordContents()
            contents.places = try Row.fetchAll(db, sql: "\(PlaceRow.select) ORDER BY rowid").map(PlaceRow.place)
            contents.campuses = try Row.fetchAll(db, sql: "SELECT id, name, AsBinary(boundary) FROM campus ORDER BY id").map(Self.campus)
            contents.accounts = try Row.fetchAll(db, sql: "SELECT \(AccountRow.columns), password_hash FROM account").map { row in
                StoredAccount(account: try AccountRow.account(row), passwordHash: PasswordHash(encoded: row["password_hash"]))
            }
            contents.sessions = try Row.fetchAll(db, sql: "SELECT token_digest, account_id, created_at, expires_at FROM session").map { row in
                let digest: Data = row["token_digest"]
                return Session(
                    digest: TokenDigest(bytes: Array(digest)), userID: try AccountRow.userID(row["account_id"]),
                    createdAt: Timestamp(millisecondsSince1970: row["created_at"]),
                    expiresAt: Timestamp(millisecondsSince1970: row["expires_at"]))
            }
            contents.positions = try Row.fetchAll(db, sql: PositionRow.select).map(PositionRow.position)
            contents.friendships = try Row.fetchAll(db, sql: "SELECT account_id, friend_id, since, share_position FROM friendship").map { row in
                FriendshipSide(
                    user: try AccountRow.userID(row["account_id"]), friend: try AccountRow.userID(row["friend_id"]),
                    since: Timestamp(millisecondsSince1970: row["since"]), sharesPosition: row["share_position"])
            }
            contents.friendRequests = try Row.fetchAll(db, sql: FriendRequestRow.select).map(FriendRequestRow.request)
            contents.events = try Row.fetchAll(db, sql: "SELECT id, recipient_id, type, data, created_at FROM event ORDER BY id").map(EventRow.event)
            // AUTOINCREMENT's counter holds the highest number ever given, also to events since removed.
            let lastGiven = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'event'") ?? 0
            contents.nextEventNumber = max(lastGiven, contents.events.last?.id.rawValue ?? 0) + 1
            contents.votes = try Row.fetchAll(
                db, sql: "SELECT \(VoteRow.columns), vote.password_hash, vote.settling_announced, vote.finish_announced FROM vote"
            ).map { row in
                StoredVote(
                    vote: try VoteRow.vote(row), passwordHash: PasswordHash(encoded: row["password_hash"]),
                    settlingAnnounced: row["settling_announced"], finishAnnounced: row["finish_announced"])
            }
            contents.ballots = try Row.fetchAll(db, sql: "SELECT \(BallotRow.columns) FROM ballot").map(BallotRow.ballot)
            return contents
        }
    }

    public func replaceContents(with contents: RecordContents) async throws {
        try validateBatch(contents.places)
        try await pool.write { db in
            for table in ["ballot", "vote", "event", "friend_request", "friendship", "user_position", "session", "account", "campus", "place"] {
                try db.execute(sql: "DELETE FROM \(table)")
            }
            _ = try Self.apply(contents.places, to: db, mayRebuildIndex: true, progress: nil)
            let campus = try db.makeStatement(sql: Schema.upsertCampus)
            for item in contents.campuses {
                try campus.execute(arguments: [item.id.rawValue, item.name, Data(WKB.encode(item.boundary))])
            }
            try db.execute(sql: "UPDATE data_revision SET revision = revision + 1 WHERE name = 'campuses'")
            let account = try db.makeStatement(sql: """
                INSERT INTO account (id, username, username_key, first_name, last_name, name_key, email, password_hash,
                                     privacy_mode, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            for stored in contents.accounts {
                let item = stored.account
                try account.execute(arguments: [
                    item.id.rawValue, item.username.rawValue, item.username.key, item.firstName.rawValue,
                    item.lastName.rawValue, PeopleMatch.nameKey(item), item.email?.rawValue, stored.passwordHash.encoded,
                    item.privacyMode, item.createdAt.millisecondsSince1970,
                ])
            }
            let session = try db.makeStatement(
                sql: "INSERT INTO session (token_digest, account_id, created_at, expires_at) VALUES (?, ?, ?, ?)")
            for item in contents.sessions {
                try session.execute(arguments: [
                    Data(item.digest.bytes), item.userID.rawValue, item.createdAt.millisecondsSince1970,
                    item.expiresAt.millisecondsSince1970,
                ])
            }
            let position = try db.makeStatement(sql: """
                INSERT INTO user_position (account_id, lat, lon, accuracy_m, status, label, on_campus, closest_place_id,
                                           updated_at, geom)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, MakePoint(?3, ?2, 4326))
                """)
            for item in contents.positions {
                try position.execute(arguments: [
                    item.userID.rawValue, item.coordinate.latitude, item.coordinate.longitude, item.accuracy?.distance.meters,
                    item.status?.rawValue, item.label, item.onCampus, item.closestPlace?.rawValue,
                    item.updatedAt.millisecondsSince1970,
                ])
            }
            let friendship = try db.makeStatement(
                sql: "INSERT INTO friendship (account_id, friend_id, since, share_position) VALUES (?, ?, ?, ?)")
            for item in contents.friendships {
                try friendship.execute(arguments: [item.user.rawValue, item.friend.rawValue, item.since.millisecondsSince1970, item.sharesPosition])
            }
            let request = try db.makeStatement(sql: "INSERT INTO friend_request (id, from_id, to_id, created_at) VALUES (?, ?, ?, ?)")
            for item in contents.friendRequests {
                try request.execute(arguments: [item.id.rawValue, item.from.rawValue, item.to.rawValue, item.createdAt.millisecondsSince1970])
            }
            let event = try db.makeStatement(sql: "INSERT INTO event (id, recipient_id, type, data, created_at) VALUES (?, ?, ?, ?, ?)")
            for item in contents.events {
                try event.execute(arguments: [
                    item.id.rawValue, item.recipient.rawValue, item.type.rawValue,
                    String(decoding: JSONValue.object(item.data).jsonBytes, as: UTF8.self), item.createdAt.millisecondsSince1970,
                ])
            }
            // The next number continues above every number the source gave.
            try db.execute(sql: "DELETE FROM sqlite_sequence WHERE name = 'event'")
            try db.execute(
                sql: "INSERT INTO sqlite_sequence (name, seq) VALUES ('event', ?)",
                arguments: [max(contents.nextEventNumber - 1, contents.events.map(\.id.rawValue).max() ?? 0)])
            let vote = try db.makeStatement(sql: """
                INSERT INTO vote (id, initiator_id, subject, options, participants, password_hash, duration_minutes,
                                  visibility, anonymous, lat, lon, label, created_at, closes_at, ballots_cast, completed_at,
                                  finish_announced, extended_minutes, closed_at, cancelled_at, name_conflict, settling_ms,
                                  published_at, revision, settling_announced, geom)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22,
                        ?23, ?24, ?25, MakePoint(?11, ?10, 4326))
                """)
            for stored in contents.votes {
                let item = stored.vote
                let options = item.options.storedJSON
                try vote.execute(arguments: [
                    item.id.rawValue, item.initiator.rawValue, item.subject.rawValue, options, item.participants.value,
                    stored.passwordHash.encoded, item.duration.minutes, item.visibility.rawValue, item.anonymous,
                    item.location.latitude, item.location.longitude, item.label, item.createdAt.millisecondsSince1970,
                    item.closesAt?.millisecondsSince1970, item.ballotsCast, item.completedAt?.millisecondsSince1970,
                    stored.finishAnnounced, item.extendedBy?.minutes, item.closedAt?.millisecondsSince1970,
                    item.cancelledAt?.millisecondsSince1970, item.nameConflict, item.settlingTime.wholeMilliseconds,
                    item.publishedAt?.millisecondsSince1970, item.revision, stored.settlingAnnounced,
                ])
            }
            let ballot = try db.makeStatement(sql: """
                INSERT INTO ballot (id, vote_id, voter_id, voter_name, name_key, option_index, cast_at, counted)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """)
            for item in contents.ballots {
                try ballot.execute(arguments: [
                    item.id.rawValue, item.vote.rawValue, item.voter.rawValue, item.voterName, item.nameKey, item.option,
                    item.castAt.millisecondsSince1970, item.counted,
                ])
            }
        }
    }
}
