import Foundation
import GRDB
import GeoCore
import VicinityCore

extension SpatiaLiteStore: RecordStore {
    public var location: String { path }

    public var places: SpatiaLiteStore { self }
    public var campuses: SpatiaLiteStore { self }
    public var accounts: SpatiaLiteStore { self }
    public var positions: SpatiaLiteStore { self }
    public var friends: SpatiaLiteStore { self }
    public var events: SpatiaLiteStore { self }
    public var changes: SpatiaLiteStore { self }
    public var votes: SpatiaLiteStore { self }
}

/// The mapping between `Account` and a row of the `account` table.
enum AccountRow {
    static let columns = "id, username, first_name, last_name, email, privacy_mode, created_at"

    static func account(_ row: Row) throws -> Account {
        do {
            guard let id = UserID(row[0] as String) else { throw StoreError.corrupt("account id \(row[0] as String) is malformed") }
            return Account(
                id: id,
                username: try Username(row[1] as String),
                firstName: try PersonName(row[2] as String, field: "first_name"),
                lastName: try PersonName(row[3] as String, field: "last_name"),
                email: try (row[4] as String?).map { try Email($0) },
                privacyMode: row[5],
                createdAt: Timestamp(millisecondsSince1970: row[6]))
        } catch let error as ValidationError {
            throw StoreError.corrupt("account \(row[0] as String): \(error)")
        }
    }

    static func userID(_ text: String) throws -> UserID {
        guard let id = UserID(text) else { throw StoreError.corrupt("user id \(text) is malformed") }
        return id
    }
}

extension SpatiaLiteStore: AccountStore {
    public func createAccount(_ account: Account, passwordHash: PasswordHash) async throws {
        do {
            try await pool.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO account (id, username, username_key, first_name, last_name, name_key, email,
                                             password_hash, privacy_mode, created_at)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        account.id.rawValue, account.username.rawValue, account.username.key,
                        account.firstName.rawValue, account.lastName.rawValue, PeopleMatch.nameKey(account),
                        account.email?.rawValue, passwordHash.encoded, account.privacyMode,
                        account.createdAt.millisecondsSince1970,
                    ])
            }
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
            throw ServiceError.conflict(.usernameTaken)
        }
    }

    public func account(id: UserID) async throws -> Account? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT \(AccountRow.columns) FROM account WHERE id = ?", arguments: [id.rawValue])
                .map(AccountRow.account)
        }
    }

    public func accounts(ids: [UserID]) async throws -> [Account] {
        let unique = Array(Set(ids.map(\.rawValue)))
        guard !unique.isEmpty else { return [] }
        return try await pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT \(AccountRow.columns) FROM account WHERE id IN (SELECT value FROM json_each(?))",
                arguments: [Self.jsonList(unique)]
            ).map(AccountRow.account)
        }
    }

    public func credentials(usernameKey: String) async throws -> (account: Account, passwordHash: PasswordHash)? {
        try await pool.read { db in
            guard let row = try Row.fetchOne(
                db, sql: "SELECT \(AccountRow.columns), password_hash FROM account WHERE username_key = ?",
                arguments: [usernameKey])
            else { return nil }
            return (try AccountRow.account(row), PasswordHash(encoded: row[7]))
        }
    }

    public func passwordHash(of id: UserID) async throws -> PasswordHash? {
        try await pool.read { db in
            try String.fetchOne(db, sql: "SELECT password_hash FROM account WHERE id = ?", arguments: [id.rawValue])
                .map(PasswordHash.init(encoded:))
        }
    }

    public func updateAccount(_ account: Account, newPasswordHash: PasswordHash?, keeping: TokenDigest) async throws -> Bool {
        try await pool.write { db in
            try db.execute(
                sql: """
                    UPDATE account SET first_name = ?, last_name = ?, name_key = ?, email = ?, privacy_mode = ?,
                        password_hash = coalesce(?, password_hash)
                    WHERE id = ?
                    """,
                arguments: [
                    account.firstName.rawValue, account.lastName.rawValue, PeopleMatch.nameKey(account),
                    account.email?.rawValue, account.privacyMode, newPasswordHash?.encoded, account.id.rawValue,
                ])
            guard db.changesCount == 1 else { return false }
            if newPasswordHash != nil {
                try db.execute(
                    sql: "DELETE FROM session WHERE account_id = ? AND token_digest <> ?",
                    arguments: [account.id.rawValue, Data(keeping.bytes)])
            }
            return true
        }
    }

    public func accountsMatching(_ needle: String) async throws -> [Account] {
        try await pool.read { db in
            let escaped = Self.escapeLike(needle)
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT \(AccountRow.columns) FROM account
                    WHERE username_key LIKE ?1 || '%' ESCAPE '\\' OR name_key LIKE '%' || ?1 || '%' ESCAPE '\\'
                    """,
                arguments: [escaped]
            ).map(AccountRow.account)
        }
    }

    public func createSession(_ session: Session) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "INSERT INTO session (token_digest, account_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
                arguments: [
                    Data(session.digest.bytes), session.userID.rawValue, session.createdAt.millisecondsSince1970,
                    session.expiresAt.millisecondsSince1970,
                ])
        }
    }

    /// On every signed-in request: a cached statement, parsed once per connection.
    public func session(_ digest: TokenDigest) async throws -> Session? {
        try await pool.read { db in
            let statement = try db.cachedStatement(sql: "SELECT account_id, created_at, expires_at FROM session WHERE token_digest = ?")
            guard let row = try Row.fetchOne(statement, arguments: [Data(digest.bytes)]) else { return nil }
            return Session(
                digest: digest, userID: try AccountRow.userID(row[0]),
                createdAt: Timestamp(millisecondsSince1970: row[1]), expiresAt: Timestamp(millisecondsSince1970: row[2]))
        }
    }

    public func deleteSession(_ digest: TokenDigest) async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM session WHERE token_digest = ?", arguments: [Data(digest.bytes)])
        }
    }

    public func deleteSessions(expiredBefore time: Timestamp) async throws -> Int {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM session WHERE expires_at < ?", arguments: [time.millisecondsSince1970])
            return db.changesCount
        }
    }

    public func accountCount() async throws -> Int {
        try await pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM account") ?? 0 }
    }

    /// A JSON array of strings, for `IN (SELECT value FROM json_each(?))`: one statement for any number of
    /// ids, which SQLite caches, instead of one per list length.
    static func jsonList(_ values: [String]) -> String {
        String(decoding: JSONValue.array(values.map(JSONValue.string)).jsonBytes, as: UTF8.self)
    }

    static func escapeLike(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_")
    }
}

/// The mapping between `SharedPosition` and a row of `user_position`.
enum PositionRow {
    static let select = """
        SELECT account_id, lat, lon, accuracy_m, status, label, on_campus, closest_place_id, updated_at FROM user_position
        """

    static func position(_ row: Row) throws -> SharedPosition {
        do {
            return SharedPosition(
                userID: try AccountRow.userID(row[0]),
                coordinate: try Coordinate(latitude: row[1], longitude: row[2]),
                accuracy: try (row[3] as Double?).map { try Accuracy(meters: $0) },
                status: try (row[4] as String?).flatMap { try StatusText($0) },
                label: row[5],
                onCampus: row[6],
                closestPlace: try (row[7] as String?).map { try PlaceID($0) },
                updatedAt: Timestamp(millisecondsSince1970: row[8]))
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.corrupt("position of \(row[0] as String): \(error)")
        }
    }
}

extension SpatiaLiteStore: PositionStore {
    /// The friend finder's most frequent write: a cached statement, parsed once.
    public func setPosition(_ position: SharedPosition) async throws {
        try await changingWrite { db in
            try db.cachedStatement(
                sql: """
                    INSERT INTO user_position (account_id, lat, lon, accuracy_m, status, label, on_campus,
                                               closest_place_id, updated_at, geom)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, MakePoint(?3, ?2, 4326))
                    ON CONFLICT(account_id) DO UPDATE SET
                        lat = excluded.lat, lon = excluded.lon, accuracy_m = excluded.accuracy_m,
                        status = excluded.status, label = excluded.label, on_campus = excluded.on_campus,
                        closest_place_id = excluded.closest_place_id, updated_at = excluded.updated_at,
                        geom = excluded.geom
                    """
            ).execute(
                arguments: [
                    position.userID.rawValue, position.coordinate.latitude, position.coordinate.longitude,
                    position.accuracy?.distance.meters, position.status?.rawValue, position.label, position.onCampus,
                    position.closestPlace?.rawValue, position.updatedAt.millisecondsSince1970,
                ])
        }
    }

    public func position(of user: UserID) async throws -> SharedPosition? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "\(PositionRow.select) WHERE account_id = ?", arguments: [user.rawValue])
                .map(PositionRow.position)
        }
    }

    public func positions(of users: [UserID]) async throws -> [SharedPosition] {
        let unique = Array(Set(users.map(\.rawValue)))
        guard !unique.isEmpty else { return [] }
        return try await pool.read { db in
            try Row.fetchAll(
                db, sql: "\(PositionRow.select) WHERE account_id IN (SELECT value FROM json_each(?))",
                arguments: [Self.jsonList(unique)]
            ).map(PositionRow.position)
        }
    }

    public func deletePosition(of user: UserID) async throws -> Bool {
        try await changingWrite { db in
            try db.execute(sql: "DELETE FROM user_position WHERE account_id = ?", arguments: [user.rawValue])
            return db.changesCount > 0
        }
    }

    public func forEachPosition(_ body: @Sendable ([SharedPosition]) throws -> Void) async throws {
        try await forEachBatch(sql: PositionRow.select, decode: PositionRow.position, body)
    }
}

/// The mapping between `FriendRequest` and a row of `friend_request`.
enum FriendRequestRow {
    static let select = "SELECT id, from_id, to_id, created_at FROM friend_request"

    static func request(_ row: Row) throws -> FriendRequest {
        guard let id = FriendRequestID(row[0] as String) else { throw StoreError.corrupt("friend request id \(row[0] as String) is malformed") }
        return FriendRequest(
            id: id, from: try AccountRow.userID(row[1]), to: try AccountRow.userID(row[2]),
            createdAt: Timestamp(millisecondsSince1970: row[3]))
    }

    static func pending(_ db: Database, from: UserID, to: UserID) throws -> FriendRequest? {
        try Row.fetchOne(db, sql: "\(select) WHERE from_id = ? AND to_id = ?", arguments: [from.rawValue, to.rawValue])
            .map(request)
    }
}

/// Both sides of friendships, one row per direction.
enum FriendshipRow {
    /// The user's side joined with the friend's, so that both sharing flags come in one row.
    static let select = """
        SELECT mine.friend_id, mine.since, mine.share_position, theirs.share_position
        FROM friendship AS mine
        JOIN friendship AS theirs ON theirs.account_id = mine.friend_id AND theirs.friend_id = mine.account_id
        """

    static func friendship(_ row: Row) throws -> Friendship {
        Friendship(
            friend: try AccountRow.userID(row[0]), since: Timestamp(millisecondsSince1970: row[1]),
            sharesWithFriend: row[2], friendSharesWithMe: row[3])
    }

    static func befriend(_ db: Database, _ a: UserID, _ b: UserID, since: Timestamp) throws {
        let statement = try db.cachedStatement(
            sql: "INSERT INTO friendship (account_id, friend_id, since, share_position) VALUES (?, ?, ?, 1)")
        try statement.execute(arguments: [a.rawValue, b.rawValue, since.millisecondsSince1970])
        try statement.execute(arguments: [b.rawValue, a.rawValue, since.millisecondsSince1970])
    }

    static func exists(_ db: Database, _ a: UserID, _ b: UserID) throws -> Bool {
        try Bool.fetchOne(
            db, sql: "SELECT 1 FROM friendship WHERE account_id = ? AND friend_id = ?", arguments: [a.rawValue, b.rawValue]
        ) ?? false
    }
}

extension SpatiaLiteStore: FriendStore {
    public func sendFriendRequest(_ request: FriendRequest) async throws -> FriendRequestOutcome {
        try await pool.write { db in
            if try FriendshipRow.exists(db, request.from, request.to) { return .alreadyFriends }
            if let theirs = try FriendRequestRow.pending(db, from: request.to, to: request.from) {
                try db.execute(sql: "DELETE FROM friend_request WHERE id = ?", arguments: [theirs.id.rawValue])
                try FriendshipRow.befriend(db, request.from, request.to, since: request.createdAt)
                return .becameFriends(accepted: theirs, since: request.createdAt)
            }
            if let mine = try FriendRequestRow.pending(db, from: request.from, to: request.to) { return .alreadyRequested(mine) }
            try db.execute(
                sql: "INSERT INTO friend_request (id, from_id, to_id, created_at) VALUES (?, ?, ?, ?)",
                arguments: [request.id.rawValue, request.from.rawValue, request.to.rawValue, request.createdAt.millisecondsSince1970])
            return .sent(request)
        }
    }

    public func acceptFriendRequest(_ id: FriendRequestID, recipient: UserID, at time: Timestamp) async throws -> FriendRequest? {
        try await pool.write { db in
            guard let request = try Row.fetchOne(
                db, sql: "\(FriendRequestRow.select) WHERE id = ? AND to_id = ?", arguments: [id.rawValue, recipient.rawValue]
            ).map(FriendRequestRow.request)
            else { return nil }
            try db.execute(sql: "DELETE FROM friend_request WHERE id = ?", arguments: [id.rawValue])
            try FriendshipRow.befriend(db, request.from, request.to, since: time)
            return request
        }
    }

    public func deleteFriendRequest(_ id: FriendRequestID, participant: UserID) async throws -> FriendRequest? {
        try await pool.write { db in
            guard let request = try Row.fetchOne(
                db, sql: "\(FriendRequestRow.select) WHERE id = ?1 AND (from_id = ?2 OR to_id = ?2)",
                arguments: [id.rawValue, participant.rawValue]
            ).map(FriendRequestRow.request)
            else { return nil }
            try db.execute(sql: "DELETE FROM friend_request WHERE id = ?", arguments: [id.rawValue])
            return request
        }
    }

    public func friendRequests(of user: UserID) async throws -> [FriendRequest] {
        try await pool.read { db in
            try Row.fetchAll(
                db, sql: "\(FriendRequestRow.select) WHERE from_id = ?1 OR to_id = ?1 ORDER BY created_at, id",
                arguments: [user.rawValue]
            ).map(FriendRequestRow.request)
        }
    }

    public func friendships(of user: UserID) async throws -> [Friendship] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "\(FriendshipRow.select) WHERE mine.account_id = ?", arguments: [user.rawValue])
                .map(FriendshipRow.friendship)
        }
    }

    public func friendship(of user: UserID, with friend: UserID) async throws -> Friendship? {
        try await pool.read { db in
            try Row.fetchOne(
                db, sql: "\(FriendshipRow.select) WHERE mine.account_id = ? AND mine.friend_id = ?",
                arguments: [user.rawValue, friend.rawValue]
            ).map(FriendshipRow.friendship)
        }
    }

    public func setSharing(_ shares: Bool, from user: UserID, to friend: UserID) async throws -> Friendship? {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE friendship SET share_position = ? WHERE account_id = ? AND friend_id = ?",
                arguments: [shares, user.rawValue, friend.rawValue])
            return try Row.fetchOne(
                db, sql: "\(FriendshipRow.select) WHERE mine.account_id = ? AND mine.friend_id = ?",
                arguments: [user.rawValue, friend.rawValue]
            ).map(FriendshipRow.friendship)
        }
    }

    public func endFriendship(of user: UserID, with friend: UserID) async throws -> Bool {
        try await pool.write { db in
            try db.execute(
                sql: "DELETE FROM friendship WHERE (account_id = ?1 AND friend_id = ?2) OR (account_id = ?2 AND friend_id = ?1)",
                arguments: [user.rawValue, friend.rawValue])
            return db.changesCount > 0
        }
    }

    public func relationships(of user: UserID, with others: [UserID]) async throws -> [UserID: Relationship] {
        guard !others.isEmpty else { return [:] }
        let list = Self.jsonList(Array(Set(others.map(\.rawValue))))
        return try await pool.read { db in
            var result: [UserID: Relationship] = [:]
            for row in try Row.fetchAll(
                db, sql: "\(FriendRequestRow.select) WHERE (from_id = ?1 AND to_id IN (SELECT value FROM json_each(?2))) OR (to_id = ?1 AND from_id IN (SELECT value FROM json_each(?2)))",
                arguments: [user.rawValue, list])
            {
                let request = try FriendRequestRow.request(row)
                result[request.from == user ? request.to : request.from] =
                    request.from == user ? .requestSent(request.id) : .requestReceived(request.id)
            }
            for text in try String.fetchAll(
                db, sql: "SELECT friend_id FROM friendship WHERE account_id = ? AND friend_id IN (SELECT value FROM json_each(?))",
                arguments: [user.rawValue, list])
            {
                result[try AccountRow.userID(text)] = .friend
            }
            return result
        }
    }
}

/// The mapping between `Event` and a row of `event`.
enum EventRow {
    static func event(_ row: Row) throws -> Event {
        let typeText: String = row[2]
        let dataText: String = row[3]
        guard let type = EventType(rawValue: typeText) else { throw StoreError.corrupt("event \(row[0] as Int64) has unknown type \(typeText)") }
        guard case .object(let data) = try JSONValue(jsonBytes: dataText.utf8) else {
            throw StoreError.corrupt("data of event \(row[0] as Int64) is not a JSON object")
        }
        return Event(
            id: EventID(row[0]),
            draft: EventDraft(
                recipient: try AccountRow.userID(row[1]), type: type, data: data,
                createdAt: Timestamp(millisecondsSince1970: row[4])))
    }
}

extension SpatiaLiteStore: EventStore {
    public func appendEvents(_ drafts: [EventDraft]) async throws -> [Event] {
        try await changingWrite { db in
            let statement = try db.cachedStatement(
                sql: "INSERT INTO event (recipient_id, type, data, created_at) VALUES (?, ?, ?, ?)")
            return try drafts.map { draft in
                try statement.execute(arguments: [
                    draft.recipient.rawValue, draft.type.rawValue,
                    String(decoding: JSONValue.object(draft.data).jsonBytes, as: UTF8.self),
                    draft.createdAt.millisecondsSince1970,
                ])
                return Event(id: EventID(db.lastInsertedRowID), draft: draft)
            }
        }
    }

    public func events(for recipient: UserID, after: EventID?, since: Timestamp, limit: Int) async throws -> [Event] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, recipient_id, type, data, created_at FROM event
                    WHERE recipient_id = ? AND id > ? AND created_at >= ? ORDER BY id LIMIT ?
                    """,
                arguments: [recipient.rawValue, after?.rawValue ?? 0, since.millisecondsSince1970, limit]
            ).map(EventRow.event)
        }
    }

    public func events(ids: [EventID]) async throws -> [Event] {
        guard !ids.isEmpty else { return [] }
        return try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, recipient_id, type, data, created_at FROM event
                    WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id
                    """,
                arguments: ["[" + ids.map { String($0.rawValue) }.joined(separator: ",") + "]"]
            ).map(EventRow.event)
        }
    }

    public func deleteEvents(before time: Timestamp) async throws -> Int {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM event WHERE created_at < ?", arguments: [time.millisecondsSince1970])
            return db.changesCount
        }
    }
}
