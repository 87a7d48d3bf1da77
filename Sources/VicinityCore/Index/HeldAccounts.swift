import Synchronization

/// The sessions this process has looked up, and the accounts others see (`accounts(ids:)`: names, privacy mode,
/// default sharing), held in memory in front of the record's accounts, so that a signed-in request reads no session
/// from the database, and a friend list or a vote's initiator no account.
///
/// Accounts are held as `HeldCopies` holds them: until an account changes in the record (`updateAccount`,
/// `consumeCode` and `deleteAccount` here forget it at once; another process's change comes through the feed as
/// `Change.account`, to `forgetAccounts(_:)`). One's own account (`account(id:)`, `storedAccount(id:)`) is always
/// read from the record, so what a person changed shows to them at once on every front.
///
/// A session ends in the record (signing out, a password change, a disabled or deleted account, expiry), and
/// every process then forgets what it holds of that account:
/// - this process's own endings at once, when the record has committed them (`deleteSession`,
///   `updateAccount(_:ending:)`, `deleteAccount`);
/// - other processes' when the change feed brings them (`forget(_:)`, from `IndexedStores.follow`): a session
///   ended on another front is taken here for as long as this process's feed lags (`ChangeFollower`);
/// - expiry needs no notice: the caller checks a session against the clock at every use, held or read.
///
/// A lookup holds what it read only if no ending came while it read, so a read that began before a session
/// ended never brings it back. At most `capacity` sessions are held; past that, an arbitrary one makes room. With
/// a capacity of 0 every lookup reads the record.
public final class HeldAccounts<Record: AccountStore>: AccountStore {
    private struct Book {
        var sessions: [TokenDigest: Session] = [:]
        var byAccount: [UserID: Set<TokenDigest>] = [:]
        /// Raised at every ending this process learns of.
        var endings = 0

        mutating func remove(_ digest: TokenDigest) {
            guard let session = sessions.removeValue(forKey: digest) else { return }
            byAccount[session.userID]?.remove(digest)
            if byAccount[session.userID]?.isEmpty == true { byAccount[session.userID] = nil }
        }
    }

    public let record: Record
    public let capacity: Int
    private let book = Mutex(Book())
    private let others: HeldCopies<UserID, Account>
    /// Told of every account forgotten, for what else holds of it (the sights `HeldAlerts` holds).
    private let changed: @Sendable ([UserID]) -> Void

    /// 100,000 sessions: ten for each of the 10,000 people a front serves, at about 200 bytes each, 20 MB; as
    /// many accounts, at about 300 bytes each, 30 MB.
    public static var standardCapacity: Int { 100_000 }

    /// Holds at most `capacity` sessions and as many accounts; `changed` learns of every account changed, here or
    /// through the feed, whatever the capacity.
    public init(record: Record, capacity: Int = standardCapacity, changed: @escaping @Sendable ([UserID]) -> Void = { _ in }) {
        self.record = record
        self.capacity = capacity
        self.changed = changed
        others = HeldCopies(capacity: capacity)
    }

    /// How many sessions are held.
    public var heldCount: Int { book.withLock { $0.sessions.count } }

    /// How many accounts are held.
    public var heldAccountCount: Int { others.count }

    /// These accounts changed or were deleted: by this process, or by another as the change feed says.
    public func forgetAccounts(_ accounts: some Sequence<UserID>) {
        let accounts = Array(accounts)
        others.forget(accounts)
        changed(accounts)
    }

    /// Sessions of these accounts ended: this process's own ending, or another's from the change feed.
    public func forget(_ accounts: some Sequence<UserID>) {
        book.withLock { book in
            book.endings += 1
            for account in accounts {
                for digest in book.byAccount[account] ?? [] { book.remove(digest) }
            }
        }
    }

    /// Forgets every session and account held: for a follower that fell behind what the feed keeps.
    public func forgetAll() {
        book.withLock { book in
            book = Book(endings: book.endings + 1)
        }
        others.forgetAll()
    }

    public func session(_ digest: TokenDigest) async throws -> Session? {
        guard capacity > 0 else { return try await record.session(digest) }
        let endings: Int
        do {
            let held = book.withLock { book in (book.sessions[digest], book.endings) }
            if let session = held.0 { return session }
            endings = held.1
        }
        guard let session = try await record.session(digest) else { return nil }
        book.withLock { book in
            guard book.endings == endings else { return }
            if book.sessions.count >= capacity, let any = book.sessions.keys.first { book.remove(any) }
            book.sessions[digest] = session
            book.byAccount[session.userID, default: []].insert(digest)
        }
        return session
    }

    public func deleteSession(_ digest: TokenDigest) async throws {
        try await record.deleteSession(digest)
        book.withLock { book in
            book.endings += 1
            book.remove(digest)
        }
    }

    public func updateAccount(_ account: StoredAccount, ending: SessionEnding) async throws -> Bool {
        let updated = try await record.updateAccount(account, ending: ending)
        if ending != .none { forget([account.account.id]) }
        forgetAccounts([account.account.id])
        return updated
    }

    public func deleteAccount(
        _ id: UserID, at now: Timestamp, cancel: @escaping @Sendable (inout StoredVote) -> Bool,
        announcements: @escaping @Sendable (Vote, [Ballot]) -> [EventDraft]
    ) async throws -> Bool {
        let deleted = try await record.deleteAccount(id, at: now, cancel: cancel, announcements: announcements)
        forget([id])
        forgetAccounts([id])
        return deleted
    }

    /// Other people's accounts, held.
    public func accounts(ids: [UserID]) async throws -> [Account] {
        let held = try await others.values(of: Array(Set(ids))) { missing in
            Dictionary(try await record.accounts(ids: missing).map { ($0.id, $0) }) { first, _ in first }
        }
        return Array(held.values)
    }

    // MARK: Read and written straight through

    public func createAccount(_ account: StoredAccount, code: StoredCode?, message: OutboxMessage?) async throws {
        try await record.createAccount(account, code: code, message: message)
    }

    public func account(id: UserID) async throws -> Account? { try await record.account(id: id) }

    public func storedAccount(id: UserID) async throws -> StoredAccount? { try await record.storedAccount(id: id) }
    public func credentials(usernameKey: String) async throws -> StoredAccount? { try await record.credentials(usernameKey: usernameKey) }
    public func credentials(emailKey: String) async throws -> StoredAccount? { try await record.credentials(emailKey: emailKey) }

    public func passwordless(pendingEmailKey: String, limit: Int) async throws -> [StoredAccount] {
        try await record.passwordless(pendingEmailKey: pendingEmailKey, limit: limit)
    }

    public func accountsMatching(_ needle: String) async throws -> [Account] { try await record.accountsMatching(needle) }
    public func createSession(_ session: Session) async throws { try await record.createSession(session) }

    /// Expired sessions need no forgetting here: every use checks the clock.
    public func deleteSessions(expiredBefore time: Timestamp) async throws -> Int {
        try await record.deleteSessions(expiredBefore: time)
    }

    public func accountCount() async throws -> Int { try await record.accountCount() }
    public func issueCode(_ code: StoredCode, message: OutboxMessage) async throws { try await record.issueCode(code, message: message) }

    public func spendCodeTry(of account: UserID, purpose: CodePurpose, at now: Timestamp) async throws -> StoredCode? {
        try await record.spendCodeTry(of: account, purpose: purpose, at: now)
    }

    /// A verified address changes the account.
    public func consumeCode(_ code: StoredCode) async throws -> Bool {
        let consumed = try await record.consumeCode(code)
        forgetAccounts([code.account])
        return consumed
    }
}
