import Foundation
import GeoCore
import NIOCore
import PostgresNIO
import VicinityCore

extension PostGISStore: RecordStore {
    public var places: PostGISStore { self }
    public var campuses: PostGISStore { self }
    public var accounts: PostGISStore { self }
    public var positions: PostGISStore { self }
    public var friends: PostGISStore { self }
    public var events: PostGISStore { self }
    public var changes: PostGISStore { self }
    public var guesses: PostGISStore { self }
    public var limits: PostGISStore { self }
    public var votes: PostGISStore { self }
}

/// The two-key advisory locks the store takes inside transactions, each keyed by a hash of what it guards.
/// A hash collision only makes two unrelated writers take turns.
enum LockSpace {
    /// One pair of people: friend requests and friendships between them.
    static let friendPair: Int32 = 1
    /// One recipient's events: numbers are taken and committed in one order.
    static let eventRecipient: Int32 = 2
    /// One schema's side load of places (`SideLoad`), keyed by the schema's name.
    static let placeLoad: Int32 = 3
}

/// The mapping between `Account` and a row of the `account` table.
enum AccountRow {
    static let columns = "id, username, first_name, last_name, email, privacy_mode, created_at"

    static func account(_ row: Columns) throws -> Account {
        let id: String = try row.decode("id")
        do {
            return Account(
                id: try userID(id),
                username: try Username(try row.decode("username", as: String.self)),
                firstName: try PersonName(try row.decode("first_name", as: String.self), field: "first_name"),
                lastName: try PersonName(try row.decode("last_name", as: String.self), field: "last_name"),
                email: try row.decode("email", as: String?.self).map { try Email($0) },
                privacyMode: try row.decode("privacy_mode"),
                createdAt: try row.timestamp("created_at"))
        } catch let error as ValidationError {
            throw StoreError.corrupt("account \(id): \(error)")
        }
    }

    static func userID(_ text: String) throws -> UserID {
        guard let id = UserID(text) else { throw StoreError.corrupt("user id \(text) is malformed") }
        return id
    }
}

extension PostGISStore: AccountStore {
    public func createAccount(_ account: Account, passwordHash: PasswordHash) async throws {
        try await execute("""
            INSERT INTO account (id, username, username_key, first_name, last_name, name_key, email, password_hash,
                                 privacy_mode, created_at)
            VALUES (\(account.id.rawValue), \(account.username.rawValue), \(account.username.key),
                    \(account.firstName.rawValue), \(account.lastName.rawValue), \(PeopleMatch.nameKey(account)),
                    \(account.email?.rawValue), \(passwordHash.encoded), \(account.privacyMode),
                    \(account.createdAt.millisecondsSince1970))
            """, constraints: ["account_username_unique": ServiceError.conflict(.usernameTaken)])
    }

    public func account(id: UserID) async throws -> Account? {
        try await rows("SELECT \(unescaped: AccountRow.columns) FROM account WHERE id = \(id.rawValue)").first.map(AccountRow.account)
    }

    public func accounts(ids: [UserID]) async throws -> [Account] {
        let unique = Array(Set(ids.map(\.rawValue)))
        guard !unique.isEmpty else { return [] }
        return try await rows("SELECT \(unescaped: AccountRow.columns) FROM account WHERE id = ANY(\(unique))").map(AccountRow.account)
    }

    public func credentials(usernameKey: String) async throws -> (account: Account, passwordHash: PasswordHash)? {
        // Usernames are ASCII letters, digits and . _ -: text holding NUL names nobody, and PostgreSQL's text
        // cannot carry it.
        guard !usernameKey.utf8.contains(0) else { return nil }
        guard let row = try await rows("""
            SELECT \(unescaped: AccountRow.columns), password_hash FROM account WHERE username_key = \(usernameKey)
            """).first
        else { return nil }
        return (try AccountRow.account(row), PasswordHash(encoded: try row.decode("password_hash")))
    }

    public func passwordHash(of id: UserID) async throws -> PasswordHash? {
        try await rows("SELECT password_hash FROM account WHERE id = \(id.rawValue)").first
            .map { PasswordHash(encoded: try $0.decode("password_hash")) }
    }

    public func updateAccount(_ account: Account, newPasswordHash: PasswordHash?, keeping: TokenDigest) async throws -> Bool {
        try await transaction { transaction in
            let updated = try await transaction.rows("""
                UPDATE account SET first_name = \(account.firstName.rawValue), last_name = \(account.lastName.rawValue),
                    name_key = \(PeopleMatch.nameKey(account)), email = \(account.email?.rawValue),
                    privacy_mode = \(account.privacyMode), password_hash = coalesce(\(newPasswordHash?.encoded), password_hash)
                WHERE id = \(account.id.rawValue)
                RETURNING id
                """)
            guard !updated.isEmpty else { return false }
            if newPasswordHash != nil {
                try await transaction.execute("""
                    DELETE FROM session WHERE account_id = \(account.id.rawValue) AND token_digest <> \(ByteBuffer(bytes: keeping.bytes))
                    """)
            }
            return true
        }
    }

    public func accountsMatching(_ needle: String) async throws -> [Account] {
        // No account's names hold NUL (names refuse control characters), and PostgreSQL's text cannot carry it.
        guard !needle.utf8.contains(0) else { return [] }
        let escaped = Self.escapeLike(needle)
        return try await rows("""
            SELECT \(unescaped: AccountRow.columns) FROM account
            WHERE username_key LIKE \(escaped + "%") OR name_key LIKE \("%" + escaped + "%")
            """).map(AccountRow.account)
    }

    public func createSession(_ session: Session) async throws {
        try await execute("""
            INSERT INTO session (token_digest, account_id, created_at, expires_at)
            VALUES (\(ByteBuffer(bytes: session.digest.bytes)), \(session.userID.rawValue),
                    \(session.createdAt.millisecondsSince1970), \(session.expiresAt.millisecondsSince1970))
            """)
    }

    public func session(_ digest: TokenDigest) async throws -> Session? {
        guard let row = try await rows("""
            SELECT account_id, created_at, expires_at FROM session WHERE token_digest = \(ByteBuffer(bytes: digest.bytes))
            """).first
        else { return nil }
        return Session(
            digest: digest, userID: try AccountRow.userID(try row.decode("account_id")),
            createdAt: try row.timestamp("created_at"), expiresAt: try row.timestamp("expires_at"))
    }

    public func deleteSession(_ digest: TokenDigest) async throws {
        try await execute("DELETE FROM session WHERE token_digest = \(ByteBuffer(bytes: digest.bytes))")
    }

    public func deleteSessions(expiredBefore time: Timestamp) async throws -> Int {
        try await rows("DELETE FROM session WHERE expires_at < \(time.millisecondsSince1970) RETURNING 1 AS deleted").count
    }

    public func accountCount() async throws -> Int {
        try await rows("SELECT count(*) AS count FROM account").first?.decode("count") ?? 0
    }
}

/// The mapping between `SharedPosition` and a row of `user_position`.
enum PositionRow {
    static let columns = "account_id, lat, lon, accuracy_m, status, label, on_campus, closest_place_id, updated_at"

    static func position(_ row: Columns) throws -> SharedPosition {
        let id: String = try row.decode("account_id")
        do {
            return SharedPosition(
                userID: try AccountRow.userID(id),
                coordinate: try Coordinate(latitude: try row.decode("lat"), longitude: try row.decode("lon")),
                accuracy: try row.decode("accuracy_m", as: Double?.self).map { try Accuracy(meters: $0) },
                status: try row.decode("status", as: String?.self).flatMap { try StatusText($0) },
                label: try row.decode("label"),
                onCampus: try row.decode("on_campus"),
                closestPlace: try row.decode("closest_place_id", as: String?.self).map { try PlaceID($0) },
                updatedAt: try row.timestamp("updated_at"))
        } catch let error as ValidationError {
            throw StoreError.corrupt("position of \(id): \(error)")
        }
    }
}

extension PostGISStore: PositionStore {
    public func setPosition(_ position: SharedPosition) async throws {
        try await execute("""
            INSERT INTO user_position (account_id, lat, lon, accuracy_m, status, label, on_campus, closest_place_id, updated_at)
            VALUES (\(position.userID.rawValue), \(position.coordinate.latitude), \(position.coordinate.longitude),
                    \(position.accuracy?.distance.meters), \(position.status?.rawValue), \(position.label),
                    \(position.onCampus), \(position.closestPlace?.rawValue), \(position.updatedAt.millisecondsSince1970))
            ON CONFLICT (account_id) DO UPDATE SET
                lat = excluded.lat, lon = excluded.lon, accuracy_m = excluded.accuracy_m, status = excluded.status,
                label = excluded.label, on_campus = excluded.on_campus, closest_place_id = excluded.closest_place_id,
                updated_at = excluded.updated_at
            """)
        changesCommitted()
    }

    public func position(of user: UserID) async throws -> SharedPosition? {
        try await rows("SELECT \(unescaped: PositionRow.columns) FROM user_position WHERE account_id = \(user.rawValue)")
            .first.map(PositionRow.position)
    }

    public func positions(of users: [UserID]) async throws -> [SharedPosition] {
        let unique = Array(Set(users.map(\.rawValue)))
        guard !unique.isEmpty else { return [] }
        return try await rows("SELECT \(unescaped: PositionRow.columns) FROM user_position WHERE account_id = ANY(\(unique))")
            .map(PositionRow.position)
    }

    public func deletePosition(of user: UserID) async throws -> Bool {
        let deleted = !(try await rows("DELETE FROM user_position WHERE account_id = \(user.rawValue) RETURNING 1 AS deleted").isEmpty)
        if deleted { changesCommitted() }
        return deleted
    }

    public func forEachPosition(_ body: @Sendable ([SharedPosition]) throws -> Void) async throws {
        try await forEachBatch("SELECT \(unescaped: PositionRow.columns) FROM user_position", decode: PositionRow.position, body)
    }
}

/// The mapping between `FriendRequest` and a row of `friend_request`.
enum FriendRequestRow {
    static let columns = "id, from_id, to_id, created_at"

    static func request(_ row: Columns) throws -> FriendRequest {
        let text: String = try row.decode("id")
        guard let id = FriendRequestID(text) else { throw StoreError.corrupt("friend request id \(text) is malformed") }
        return FriendRequest(
            id: id, from: try AccountRow.userID(try row.decode("from_id")), to: try AccountRow.userID(try row.decode("to_id")),
            createdAt: try row.timestamp("created_at"))
    }
}

/// Both sides of friendships, one row per direction.
enum FriendshipRow {
    /// The user's side joined with the friend's, so that both sharing flags come in one row.
    static let select = """
        SELECT mine.friend_id, mine.since, mine.share_position AS mine_shares, theirs.share_position AS theirs_share
        FROM friendship AS mine
        JOIN friendship AS theirs ON theirs.account_id = mine.friend_id AND theirs.friend_id = mine.account_id
        """

    static func friendship(_ row: Columns) throws -> Friendship {
        Friendship(
            friend: try AccountRow.userID(try row.decode("friend_id")), since: try row.timestamp("since"),
            sharesWithFriend: try row.decode("mine_shares"), friendSharesWithMe: try row.decode("theirs_share"))
    }
}

extension Transaction {
    /// Holds the lock of the pair until the transaction ends: every change between two people takes it first,
    /// so a check and the write it decides run as one step whoever else asks at the same moment.
    func lockPair(_ a: UserID, _ b: UserID) async throws {
        let key = [a.rawValue, b.rawValue].sorted().joined(separator: "|")
        try await execute("SELECT pg_advisory_xact_lock(\(LockSpace.friendPair), hashtext(\(key)))")
    }

    func pendingRequest(from: UserID, to: UserID) async throws -> FriendRequest? {
        try await rows("""
            SELECT \(unescaped: FriendRequestRow.columns) FROM friend_request WHERE from_id = \(from.rawValue) AND to_id = \(to.rawValue)
            """).first.map(FriendRequestRow.request)
    }

    func befriend(_ a: UserID, _ b: UserID, since: Timestamp) async throws {
        try await execute("""
            INSERT INTO friendship (account_id, friend_id, since, share_position)
            VALUES (\(a.rawValue), \(b.rawValue), \(since.millisecondsSince1970), true),
                   (\(b.rawValue), \(a.rawValue), \(since.millisecondsSince1970), true)
            """)
    }

    func friendship(of user: UserID, with friend: UserID) async throws -> Friendship? {
        try await rows("""
            \(unescaped: FriendshipRow.select) WHERE mine.account_id = \(user.rawValue) AND mine.friend_id = \(friend.rawValue)
            """).first.map(FriendshipRow.friendship)
    }
}

extension PostGISStore: FriendStore {
    public func sendFriendRequest(_ request: FriendRequest) async throws -> FriendRequestOutcome {
        try await transaction { transaction in
            try await transaction.lockPair(request.from, request.to)
            if try await transaction.friendship(of: request.from, with: request.to) != nil { return .alreadyFriends }
            if let theirs = try await transaction.pendingRequest(from: request.to, to: request.from) {
                try await transaction.execute("DELETE FROM friend_request WHERE id = \(theirs.id.rawValue)")
                try await transaction.befriend(request.from, request.to, since: request.createdAt)
                return .becameFriends(accepted: theirs, since: request.createdAt)
            }
            if let mine = try await transaction.pendingRequest(from: request.from, to: request.to) { return .alreadyRequested(mine) }
            try await transaction.execute("""
                INSERT INTO friend_request (id, from_id, to_id, created_at)
                VALUES (\(request.id.rawValue), \(request.from.rawValue), \(request.to.rawValue), \(request.createdAt.millisecondsSince1970))
                """)
            return .sent(request)
        }
    }

    public func acceptFriendRequest(_ id: FriendRequestID, recipient: UserID, at time: Timestamp) async throws -> FriendRequest? {
        try await transaction { transaction in
            // The pair is known from the request; under its lock the request is taken again, in case another
            // writer turned it into a friendship or removed it meanwhile.
            guard let seen = try await transaction.rows("""
                SELECT \(unescaped: FriendRequestRow.columns) FROM friend_request WHERE id = \(id.rawValue) AND to_id = \(recipient.rawValue)
                """).first.map(FriendRequestRow.request)
            else { return nil }
            try await transaction.lockPair(seen.from, seen.to)
            guard let request = try await transaction.rows("""
                DELETE FROM friend_request WHERE id = \(id.rawValue) AND to_id = \(recipient.rawValue)
                RETURNING \(unescaped: FriendRequestRow.columns)
                """).first.map(FriendRequestRow.request)
            else { return nil }
            try await transaction.befriend(request.from, request.to, since: time)
            return request
        }
    }

    /// Under the pair's lock, as every change between two people: a request withdrawn while the other asks
    /// back is either withdrawn first (their request is then a new one) or accepted first (and then not
    /// withdrawn), never both.
    public func deleteFriendRequest(_ id: FriendRequestID, participant: UserID) async throws -> FriendRequest? {
        try await transaction { transaction in
            guard let seen = try await transaction.rows("""
                SELECT \(unescaped: FriendRequestRow.columns) FROM friend_request
                WHERE id = \(id.rawValue) AND (from_id = \(participant.rawValue) OR to_id = \(participant.rawValue))
                """).first.map(FriendRequestRow.request)
            else { return nil }
            try await transaction.lockPair(seen.from, seen.to)
            return try await transaction.rows("""
                DELETE FROM friend_request WHERE id = \(id.rawValue) AND (from_id = \(participant.rawValue) OR to_id = \(participant.rawValue))
                RETURNING \(unescaped: FriendRequestRow.columns)
                """).first.map(FriendRequestRow.request)
        }
    }

    public func friendRequests(of user: UserID) async throws -> [FriendRequest] {
        try await rows("""
            SELECT \(unescaped: FriendRequestRow.columns) FROM friend_request
            WHERE from_id = \(user.rawValue) OR to_id = \(user.rawValue) ORDER BY created_at, id COLLATE "C"
            """).map(FriendRequestRow.request)
    }

    public func friendships(of user: UserID) async throws -> [Friendship] {
        try await rows("\(unescaped: FriendshipRow.select) WHERE mine.account_id = \(user.rawValue)").map(FriendshipRow.friendship)
    }

    public func friendship(of user: UserID, with friend: UserID) async throws -> Friendship? {
        try await transaction { try await $0.friendship(of: user, with: friend) }
    }

    public func setSharing(_ shares: Bool, from user: UserID, to friend: UserID) async throws -> Friendship? {
        try await transaction { transaction in
            try await transaction.execute("""
                UPDATE friendship SET share_position = \(shares) WHERE account_id = \(user.rawValue) AND friend_id = \(friend.rawValue)
                """)
            return try await transaction.friendship(of: user, with: friend)
        }
    }

    public func endFriendship(of user: UserID, with friend: UserID) async throws -> Bool {
        try await transaction { transaction in
            try await transaction.lockPair(user, friend)
            return !(try await transaction.rows("""
                DELETE FROM friendship
                WHERE (account_id = \(user.rawValue) AND friend_id = \(friend.rawValue))
                   OR (account_id = \(friend.rawValue) AND friend_id = \(user.rawValue))
                RETURNING 1 AS deleted
                """).isEmpty)
        }
    }

    public func relationships(of user: UserID, with others: [UserID]) async throws -> [UserID: Relationship] {
        guard !others.isEmpty else { return [:] }
        let list = Array(Set(others.map(\.rawValue)))
        var result: [UserID: Relationship] = [:]
        for row in try await rows("""
            SELECT \(unescaped: FriendRequestRow.columns) FROM friend_request
            WHERE (from_id = \(user.rawValue) AND to_id = ANY(\(list))) OR (to_id = \(user.rawValue) AND from_id = ANY(\(list)))
            """)
        {
            let request = try FriendRequestRow.request(row)
            result[request.from == user ? request.to : request.from] =
                request.from == user ? .requestSent(request.id) : .requestReceived(request.id)
        }
        for row in try await rows("SELECT friend_id FROM friendship WHERE account_id = \(user.rawValue) AND friend_id = ANY(\(list))") {
            result[try AccountRow.userID(try row.decode("friend_id"))] = .friend
        }
        return result
    }
}

/// The mapping between `Event` and a row of `event`.
enum EventRow {
    static let columns = "id, recipient_id, type, data::text AS data, created_at"

    static func event(_ row: Columns) throws -> Event {
        let id: Int64 = try row.decode("id")
        let typeText: String = try row.decode("type")
        guard let type = EventType(rawValue: typeText) else { throw StoreError.corrupt("event \(id) has unknown type \(typeText)") }
        guard case .object(let data) = try JSONValue(jsonBytes: Array(try row.decode("data", as: String.self).utf8)) else {
            throw StoreError.corrupt("data of event \(id) is not a JSON object")
        }
        return Event(
            id: EventID(id),
            draft: EventDraft(
                recipient: try AccountRow.userID(try row.decode("recipient_id")), type: type, data: data,
                createdAt: try row.timestamp("created_at")))
    }
}

extension PostGISStore: EventStore {
    /// Numbers come from one identity, which hands them out in call order, not commit order. Each recipient's
    /// lock is taken before any number, in a fixed order, and held to commit: a second append to the same
    /// recipient takes its numbers only after the first has committed, so a reader that has seen number n
    /// of a recipient never later finds a smaller one appear (`Last-Event-ID` replay skips nothing).
    public func appendEvents(_ drafts: [EventDraft]) async throws -> [Event] {
        guard !drafts.isEmpty else { return [] }
        let events = try await transaction { transaction in
            for recipient in Set(drafts.map(\.recipient.rawValue)).sorted() {
                try await transaction.execute("SELECT pg_advisory_xact_lock(\(LockSpace.eventRecipient), hashtext(\(recipient)))")
            }
            var events: [Event] = []
            for draft in drafts {
                let data = String(decoding: JSONValue.object(draft.data).jsonBytes, as: UTF8.self)
                guard let row = try await transaction.rows("""
                    INSERT INTO event (recipient_id, type, data, created_at)
                    VALUES (\(draft.recipient.rawValue), \(draft.type.rawValue), \(data)::json, \(draft.createdAt.millisecondsSince1970))
                    RETURNING id
                    """).first
                else { throw StoreError.database("an event was stored without a number") }
                events.append(Event(id: EventID(try row.decode("id", as: Int64.self)), draft: draft))
            }
            return events
        }
        changesCommitted()
        return events
    }

    public func events(for recipient: UserID, after: EventID?, since: Timestamp, limit: Int) async throws -> [Event] {
        try await rows("""
            SELECT \(unescaped: EventRow.columns) FROM event
            WHERE recipient_id = \(recipient.rawValue) AND id > \(after?.rawValue ?? 0) AND created_at >= \(since.millisecondsSince1970)
            ORDER BY id LIMIT \(limit)
            """).map(EventRow.event)
    }

    public func events(ids: [EventID]) async throws -> [Event] {
        guard !ids.isEmpty else { return [] }
        return try await rows("""
            SELECT \(unescaped: EventRow.columns) FROM event WHERE id = ANY(\(ids.map(\.rawValue))) ORDER BY id
            """).map(EventRow.event)
    }

    public func deleteEvents(before time: Timestamp) async throws -> Int {
        try await rows("DELETE FROM event WHERE created_at < \(time.millisecondsSince1970) RETURNING 1 AS deleted").count
    }
}
