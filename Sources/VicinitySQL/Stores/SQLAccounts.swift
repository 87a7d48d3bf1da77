import VicinityCore

extension SQLRecordStore {
    public func createAccount(_ account: Account, passwordHash: PasswordHash) async throws {
        // However sign-ups race, the unique username key refuses the second: SQLite's one writer sees the first,
        // PostgreSQL's constraint the concurrent one.
        let stored = StoredAccount(account: account, passwordHash: passwordHash)
        try await write(.writing([StoredAccount.insert(stored, conflict: .fail(duplicate: ServiceError.conflict(.usernameTaken)))], result: ()))
    }

    public func account(id: UserID) async throws -> Account? {
        try await records(StoredAccount.self, where: .equals("id", .text(id.rawValue))).first?.account
    }

    public func accounts(ids: [UserID]) async throws -> [Account] {
        let unique = Set(ids.map(\.rawValue))
        guard !unique.isEmpty else { return [] }
        return try await records(StoredAccount.self, where: .among("id", unique.sorted().map(SQLValue.text))).map(\.account)
    }

    public func credentials(usernameKey: String) async throws -> (account: Account, passwordHash: PasswordHash)? {
        // Usernames are ASCII letters, digits and . _ -: text holding NUL names nobody, and PostgreSQL's text
        // cannot carry it.
        guard !usernameKey.utf8.contains(0) else { return nil }
        return try await records(StoredAccount.self, where: .equals("username_key", .text(usernameKey))).first
            .map { ($0.account, $0.passwordHash) }
    }

    public func passwordHash(of id: UserID) async throws -> PasswordHash? {
        try await records(StoredAccount.self, where: .equals("id", .text(id.rawValue))).first?.passwordHash
    }

    public func updateAccount(_ account: Account, newPasswordHash: PasswordHash?, keeping: TokenDigest) async throws -> Bool {
        try await write(.select(StoredAccount.self, where: .equals("id", .text(account.id.rawValue)), lock: .forUpdate) { found in
            guard let stored = found.first else { return .done(false) }
            var writes = [StoredAccount.update(StoredAccount(account: account, passwordHash: newPasswordHash ?? stored.passwordHash))]
            if newPasswordHash != nil {
                writes.append(Session.delete(where: .and([
                    .equals("account_id", .text(account.id.rawValue)), .notEquals("token_digest", .bytes(keeping.bytes)),
                ])))
            }
            return .writing(writes, result: true)
        })
    }

    public func accountsMatching(_ needle: String) async throws -> [Account] {
        // No account's names hold NUL (names refuse control characters), and PostgreSQL's text cannot carry it.
        guard !needle.utf8.contains(0) else { return [] }
        return try await records(StoredAccount.self, where: .or([.startsWith("username_key", needle), .contains("name_key", needle)]))
            .map(\.account)
    }

    public func createSession(_ session: Session) async throws {
        try await write(.writing([Session.insert(session)], result: ()))
    }

    /// On every signed-in request.
    public func session(_ digest: TokenDigest) async throws -> Session? {
        try await records(Session.self, where: .equals("token_digest", .bytes(digest.bytes))).first
    }

    public func deleteSession(_ digest: TokenDigest) async throws {
        try await write(.writing([Session.delete(where: .equals("token_digest", .bytes(digest.bytes)))], result: ()))
    }

    public func deleteSessions(expiredBefore time: Timestamp) async throws -> Int {
        try await write(.finish([Session.delete(where: .compare("expires_at", .less, .time(time)))]) { $0.first?.count ?? 0 })
    }

    public func accountCount() async throws -> Int {
        try await read(.count(StoredAccount.self) { .done($0) })
    }
}
