import Foundation
import GeoCore
import NIOCore
import PostgresNIO
import VicinityCore

/// The whole record at once, for moving a deployment between stores (`vicinity copy`).
extension PostGISStore {
    public func contents() async throws -> RecordContents {
        try await transaction(readOnlySnapshot: true) { transaction in
            var contents = RecordContents()
            contents.places = try await transaction.rows("SELECT \(unescaped: PlaceRow.columns) FROM place ORDER BY id COLLATE \"C\"")
                .map(PlaceRow.place)
            contents.campuses = try await transaction.rows("SELECT id, name, ST_AsBinary(boundary) AS boundary FROM campus ORDER BY id COLLATE \"C\"")
                .map(PostGISStore.campus)
            contents.accounts = try await transaction.rows("SELECT \(unescaped: AccountRow.columns), password_hash FROM account").map { row in
                StoredAccount(account: try AccountRow.account(row), passwordHash: PasswordHash(encoded: try row.decode("password_hash")))
            }
            contents.sessions = try await transaction.rows("SELECT token_digest, account_id, created_at, expires_at FROM session").map { row in
                Session(
                    digest: TokenDigest(bytes: try row.bytes("token_digest") ?? []),
                    userID: try AccountRow.userID(try row.decode("account_id")),
                    createdAt: try row.timestamp("created_at"), expiresAt: try row.timestamp("expires_at"))
            }
            contents.positions = try await transaction.rows("SELECT \(unescaped: PositionRow.columns) FROM user_position")
                .map(PositionRow.position)
            contents.friendships = try await transaction.rows("SELECT account_id, friend_id, since, share_position FROM friendship").map { row in
                FriendshipSide(
                    user: try AccountRow.userID(try row.decode("account_id")), friend: try AccountRow.userID(try row.decode("friend_id")),
                    since: try row.timestamp("since"), sharesPosition: try row.decode("share_position"))
            }
            contents.friendRequests = try await transaction.rows("SELECT \(unescaped: FriendRequestRow.columns) FROM friend_request")
                .map(FriendRequestRow.request)
            contents.events = try await transaction.rows("SELECT \(unescaped: EventRow.columns) FROM event ORDER BY id").map(EventRow.event)
            // The identity's last value covers numbers given to events since removed; null before the first.
            let lastGiven = try await transaction.rows("""
                SELECT pg_sequence_last_value(pg_get_serial_sequence('event', 'id')::regclass) AS last
                """).first?.decode("last", as: Int64?.self) ?? 0
            contents.nextEventNumber = max(lastGiven, contents.events.last?.id.rawValue ?? 0) + 1
            contents.votes = try await transaction.rows("""
                SELECT \(unescaped: VoteRow.columns), vote.password_hash, vote.settling_announced, vote.finish_announced
                FROM vote
                """).map { row in
                StoredVote(
                    vote: try VoteRow.vote(row), passwordHash: PasswordHash(encoded: try row.decode("password_hash")),
                    settlingAnnounced: try row.decode("settling_announced"), finishAnnounced: try row.decode("finish_announced"))
            }
            contents.ballots = try await transaction.rows("SELECT \(unescaped: BallotRow.columns) FROM ballot").map(BallotRow.ballot)
            return contents
        }
    }

    public func replaceContents(with contents: RecordContents) async throws {
        try validateBatch(contents.places)
        try await transaction { transaction in
            // The revisions first, as every upsert takes them, so that a copy and an import wait for each other
            // instead of deadlocking.
            try await transaction.execute("SELECT revision FROM data_revision ORDER BY name FOR UPDATE")
            try await transaction.execute("""
                TRUNCATE ballot, vote, event, friend_request, friendship, user_position, session, account, campus, place
                """)
            _ = try await PostGISStore.apply(contents.places, in: transaction, mayRebuildIndexes: true, progress: nil)
            try await transaction.execute("UPDATE data_revision SET revision = revision + 1 WHERE name = 'campuses'")
            for campus in contents.campuses { _ = try await transaction.upsert(campus) }
            for stored in contents.accounts {
                let item = stored.account
                try await transaction.execute("""
                    INSERT INTO account (id, username, username_key, first_name, last_name, name_key, email, password_hash,
                                         privacy_mode, created_at)
                    VALUES (\(item.id.rawValue), \(item.username.rawValue), \(item.username.key), \(item.firstName.rawValue),
                            \(item.lastName.rawValue), \(PeopleMatch.nameKey(item)), \(item.email?.rawValue),
                            \(stored.passwordHash.encoded), \(item.privacyMode), \(item.createdAt.millisecondsSince1970))
                    """)
            }
            for item in contents.sessions {
                try await transaction.execute("""
                    INSERT INTO session (token_digest, account_id, created_at, expires_at)
                    VALUES (\(ByteBuffer(bytes: item.digest.bytes)), \(item.userID.rawValue), \(item.createdAt.millisecondsSince1970),
                            \(item.expiresAt.millisecondsSince1970))
                    """)
            }
            for item in contents.positions {
                try await transaction.execute("""
                    INSERT INTO user_position (account_id, lat, lon, accuracy_m, status, label, on_campus, closest_place_id, updated_at)
                    VALUES (\(item.userID.rawValue), \(item.coordinate.latitude), \(item.coordinate.longitude),
                            \(item.accuracy?.distance.meters), \(item.status?.rawValue), \(item.label), \(item.onCampus),
                            \(item.closestPlace?.rawValue), \(item.updatedAt.millisecondsSince1970))
                    """)
            }
            for item in contents.friendships {
                try await transaction.execute("""
                    INSERT INTO friendship (account_id, friend_id, since, share_position)
                    VALUES (\(item.user.rawValue), \(item.friend.rawValue), \(item.since.millisecondsSince1970), \(item.sharesPosition))
                    """)
            }
            for item in contents.friendRequests {
                try await transaction.execute("""
                    INSERT INTO friend_request (id, from_id, to_id, created_at)
                    VALUES (\(item.id.rawValue), \(item.from.rawValue), \(item.to.rawValue), \(item.createdAt.millisecondsSince1970))
                    """)
            }
            for item in contents.events {
                let data = String(decoding: JSONValue.object(item.data).jsonBytes, as: UTF8.self)
                try await transaction.execute("""
                    INSERT INTO event (id, recipient_id, type, data, created_at) OVERRIDING SYSTEM VALUE
                    VALUES (\(item.id.rawValue), \(item.recipient.rawValue), \(item.type.rawValue), \(data)::json,
                            \(item.createdAt.millisecondsSince1970))
                    """)
            }
            // The next number continues above every number the source gave. Set as "last given", so that the
            // sequence's last value (what `contents()` reads back) says so before any event is appended.
            let next = max(contents.nextEventNumber, (contents.events.map(\.id.rawValue).max() ?? 0) + 1)
            if next > 1 {
                try await transaction.execute("SELECT setval(pg_get_serial_sequence('event', 'id'), \(next - 1), true)")
            } else {
                try await transaction.execute("SELECT setval(pg_get_serial_sequence('event', 'id'), 1, false)")
            }
            for stored in contents.votes {
                let item = stored.vote
                let options = item.options.storedJSON
                try await transaction.execute("""
                    INSERT INTO vote (id, initiator_id, subject, options, participants, password_hash, duration_minutes,
                                      visibility, anonymous, lat, lon, label, created_at, closes_at, ballots_cast, completed_at,
                                      finish_announced, extended_minutes, closed_at, cancelled_at, name_conflict, settling_ms,
                                      published_at, revision, settling_announced)
                    VALUES (\(item.id.rawValue), \(item.initiator.rawValue), \(item.subject.rawValue), \(options)::jsonb,
                            \(item.participants.value), \(stored.passwordHash.encoded), \(item.duration.minutes),
                            \(item.visibility.rawValue), \(item.anonymous), \(item.location.latitude), \(item.location.longitude),
                            \(item.label), \(item.createdAt.millisecondsSince1970), \(item.closesAt?.millisecondsSince1970),
                            \(item.ballotsCast), \(item.completedAt?.millisecondsSince1970), \(stored.finishAnnounced),
                            \(item.extendedBy?.minutes), \(item.closedAt?.millisecondsSince1970),
                            \(item.cancelledAt?.millisecondsSince1970), \(item.nameConflict), \(item.settlingTime.wholeMilliseconds),
                            \(item.publishedAt?.millisecondsSince1970), \(item.revision), \(stored.settlingAnnounced))
                    """)
            }
            for item in contents.ballots {
                try await transaction.execute("""
                    INSERT INTO ballot (id, vote_id, voter_id, voter_name, name_key, option_index, cast_at, counted)
                    VALUES (\(item.id.rawValue), \(item.vote.rawValue), \(item.voter.rawValue), \(item.voterName),
                            \(item.nameKey), \(item.option), \(item.castAt.millisecondsSince1970), \(item.counted))
                    """)
            }
        }
    }
}
