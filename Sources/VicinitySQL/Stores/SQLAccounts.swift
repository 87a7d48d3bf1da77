import VicinityCore

extension SQLRecordStore {
    public func createAccount(_ account: StoredAccount, code: StoredCode?, message: OutboxMessage?) async throws {
        // However sign-ups race, the unique username key refuses the second: SQLite's one writer sees the first,
        // PostgreSQL's constraint the concurrent one.
        var writes = [StoredAccount.insert(account, conflict: .fail(duplicate: ServiceError.conflict(.usernameTaken)))]
        if let code { writes.append(StoredCode.upsert(code)) }
        if let message { writes.append(OutboxMessage.upsert(message)) }
        try await write(.writing(writes, result: ()))
    }

    public func account(id: UserID) async throws -> Account? {
        try await storedAccount(id: id)?.account
    }

    public func accounts(ids: [UserID]) async throws -> [Account] {
        let unique = Set(ids.map(\.rawValue))
        guard !unique.isEmpty else { return [] }
        return try await records(StoredAccount.self, where: .among("id", unique.sorted().map(SQLValue.text))).map(\.account)
    }

    public func storedAccount(id: UserID) async throws -> StoredAccount? {
        try await records(StoredAccount.self, where: .equals("id", .text(id.rawValue))).first
    }

    public func credentials(usernameKey: String) async throws -> StoredAccount? {
        // Usernames are ASCII letters, digits and . _ -: text holding NUL names nobody, and PostgreSQL's text
        // cannot carry it.
        guard !usernameKey.utf8.contains(0) else { return nil }
        return try await records(StoredAccount.self, where: .equals("username_key", .text(usernameKey))).first
    }

    public func credentials(emailKey: String) async throws -> StoredAccount? {
        guard !emailKey.utf8.contains(0) else { return nil }
        return try await records(StoredAccount.self, where: .equals("email_key", .text(emailKey))).first
    }

    public func passwordless(pendingEmailKey: String, limit: Int) async throws -> [StoredAccount] {
        guard !pendingEmailKey.utf8.contains(0) else { return [] }
        return try await records(
            StoredAccount.self, where: .and([.equals("pending_email_key", .text(pendingEmailKey)), .isNull("password_hash")]),
            order: [.descending("created_at"), .descending("id")], limit: limit)
    }

    public func updateAccount(_ account: StoredAccount, ending: SessionEnding) async throws -> Bool {
        let id = SQLValue.text(account.account.id.rawValue)
        return try await write(.select(StoredAccount.self, where: .equals("id", id), lock: .forUpdate) { found in
            guard !found.isEmpty else { return .done(false) }
            var writes = [StoredAccount.update(account, duplicate: ServiceError.conflict(.emailTaken))]
            switch ending {
            case .none: break
            case .allBut(let kept):
                writes.append(Session.delete(where: .and([.equals("account_id", id), .notEquals("token_digest", .bytes(kept.bytes))])))
            case .all:
                writes.append(Session.delete(where: .equals("account_id", id)))
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

    public func issueCode(_ code: StoredCode, message: OutboxMessage) async throws {
        try await write(.writing([StoredCode.upsert(code), OutboxMessage.upsert(message)], result: ()))
    }

    public func spendCodeTry(of account: UserID, purpose: CodePurpose, at now: Timestamp) async throws -> StoredCode? {
        try await write(.select(StoredCode.self, where: .code(of: account, purpose), lock: .forUpdate) { found in
            guard let code = found.first, code.isUsable(at: now) else { return .done(nil) }
            var spent = code
            spent.triesLeft -= 1
            return .writing([StoredCode.update(spent)], result: code)
        })
    }

    public func consumeCode(_ code: StoredCode) async throws -> Bool {
        try await write(.select(StoredCode.self, where: .code(of: code.account, code.purpose), lock: .forUpdate) { found in
            guard found.first?.hash == code.hash else { return .done(false) }
            let consumed = StoredCode.delete(where: .code(of: code.account, code.purpose))
            guard code.purpose == .verifyEmail else { return .writing([consumed], result: true) }
            return .select(StoredAccount.self, where: .equals("id", .text(code.account.rawValue)), lock: .forUpdate) { accounts in
                guard var stored = accounts.first else { return .done(false) }
                stored.account.email = code.email
                if stored.account.pendingEmail?.key == code.email.key { stored.account.pendingEmail = nil }
                return .writing([consumed, StoredAccount.update(stored, duplicate: ServiceError.conflict(.emailTaken))], result: true)
            }
        })
    }
}
