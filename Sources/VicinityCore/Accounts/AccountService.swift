import Synchronization

/// The rules of accounts and sessions.
public struct AccountRules: Hashable, Sendable {
    /// How long a token signs in. 30 days: students sign in on their phone once a month at most.
    public var sessionLifetime: Duration
    public var signIn: GuessingRules
    /// New accounts per client address. 100 an hour lets a lecture hall behind one campus NAT sign up at once
    /// while keeping one address from minting accounts by the thousand.
    public var signUpsPerAddress: RateLimit

    public static let standard = AccountRules(
        sessionLifetime: .seconds(30 * 24 * 3600), signIn: .standard,
        signUpsPerAddress: RateLimit(limit: 100, window: .seconds(3600)))

    public init(sessionLifetime: Duration, signIn: GuessingRules, signUpsPerAddress: RateLimit) {
        self.sessionLifetime = sessionLifetime
        self.signIn = signIn
        self.signUpsPerAddress = signUpsPerAddress
    }
}

/// Where a request came from, for limits per client address. Requests whose address is unknown share one.
public struct ClientAddress: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(_ rawValue: String?) { self.rawValue = rawValue ?? "unknown" }

    public var description: String { rawValue }
}

/// Signs people up, in and out, and looks after their account.
public struct AccountService<S: Stores>: Sendable {
    let stores: S
    let clock: any WallClock
    let hasher: any PasswordHasher
    public let rules: AccountRules
    /// Event streams end with the session that opened them.
    let streams: EventHub
    private let signInGuard: GuessingGuard<S.Guesses>
    private let signUps: WindowLimit<S.Limits>
    /// Checked against when a username has no account, so that a sign-in takes as long whether or not the
    /// account exists.
    private let standIn: StandInHash

    public init(
        stores: S, clock: any WallClock, hasher: any PasswordHasher, streams: EventHub, rules: AccountRules = .standard
    ) {
        self.stores = stores
        self.streams = streams
        self.clock = clock
        self.hasher = hasher
        self.rules = rules
        signInGuard = GuessingGuard(rules: rules.signIn, limits: .signIn, clock: clock, ledger: stores.guesses)
        signUps = WindowLimit(rules.signUpsPerAddress, scope: .signUps, clock: clock, ledger: stores.limits)
        standIn = StandInHash()
    }

    // MARK: Signing up, in and out

    /// Creates the account. Every attempt that gets this far counts against the address's sign-ups, a taken
    /// username included: counting first keeps concurrent sign-ups from slipping past the limit together.
    public func signUp(_ request: SignUp, from address: ClientAddress) async throws -> Account {
        if let wait = try await signUps.acquire(address.rawValue) { throw ServiceError.rateLimited(retryAfter: wait, .signUpsFromAddress) }
        let hash = try await hasher.hash(request.password)
        let account = Account(
            id: .random(), username: request.username, firstName: request.firstName, lastName: request.lastName,
            email: request.email, privacyMode: false, createdAt: clock.now)
        try await stores.accounts.createAccount(account, passwordHash: hash)
        return account
    }

    /// Checks the password and opens a session. Wrong credentials read the same whether or not the username
    /// exists; repeated failures are slowed, then refused for a while (`GuessingRules`).
    public func signIn(username: String, password: String, from address: ClientAddress) async throws -> SignedIn {
        // Bounded so that made-up usernames cannot grow the guard's memory by their length.
        let key = String(username.lowercased().prefix(Username.lengths.upperBound + 1))
        let signedIn = try await guardedPasswordCheck(account: key, from: address) { () async throws -> Account? in
            let found = try await stores.accounts.credentials(usernameKey: key)
            let hash: PasswordHash
            if let found { hash = found.passwordHash } else { hash = try await standIn.hash(using: hasher) }
            return try await hasher.verify(password, against: hash) ? found?.account : nil
        }
        guard let account = signedIn else { throw ServiceError.wrongCredentials }
        let now = clock.now
        let token = SessionToken.random()
        let session = Session(digest: token.digest, userID: account.id, createdAt: now, expiresAt: now + rules.sessionLifetime)
        try await stores.accounts.createSession(session)
        _ = try await stores.accounts.deleteSessions(expiredBefore: now)
        return SignedIn(token: token, expiresAt: session.expiresAt, account: account)
    }

    /// Ends the session the caller signed in with, and the event streams it opened.
    public func signOut(_ identity: Identity) async throws {
        try await stores.accounts.deleteSession(identity.session)
        streams.endStreams(of: identity.userID, sessions: .only(identity.session))
    }

    /// Who holds this token; `unauthenticated` for a token that is malformed, unknown, expired or revoked.
    public func authenticate(token text: String) async throws -> Identity {
        guard let token = SessionToken(text) else { throw ServiceError.unauthenticated }
        let digest = token.digest
        guard let session = try await stores.accounts.session(digest), session.isValid(at: clock.now) else {
            throw ServiceError.unauthenticated
        }
        return Identity(userID: session.userID, session: digest)
    }

    // MARK: One's own account

    public func me(_ identity: Identity) async throws -> Account {
        guard let account = try await stores.accounts.account(id: identity.userID) else { throw ServiceError.unauthenticated }
        return account
    }

    /// Applies the changes. A new password needs the current one, which counts as a sign-in attempt (a stolen
    /// token must not become a way to guess the password), and ends every other session.
    public func update(_ identity: Identity, _ changes: AccountChanges, from address: ClientAddress) async throws -> Account {
        var account = try await me(identity)
        if let firstName = changes.firstName { account.firstName = firstName }
        if let lastName = changes.lastName { account.lastName = lastName }
        if let email = changes.email { account.email = email }
        if let privacyMode = changes.privacyMode { account.privacyMode = privacyMode }
        var newHash: PasswordHash?
        if let newPassword = changes.newPassword {
            guard let current = changes.currentPassword else {
                throw ServiceError.invalid("current_password", "is required to change the password")
            }
            let confirmed = try await guardedPasswordCheck(account: account.username.key, from: address) { () async throws -> Bool? in
                guard let stored = try await stores.accounts.passwordHash(of: account.id) else { throw ServiceError.unauthenticated }
                return try await hasher.verify(current, against: stored) ? true : nil
            }
            guard confirmed != nil else { throw ServiceError.forbidden("The current password is wrong.") }
            newHash = try await hasher.hash(newPassword)
        } else if changes.currentPassword != nil {
            throw ServiceError.invalid("current_password", "is only needed with a new password")
        }
        guard try await stores.accounts.updateAccount(account, newPasswordHash: newHash, keeping: identity.session) else {
            throw ServiceError.unauthenticated
        }
        if newHash != nil { streams.endStreams(of: identity.userID, sessions: .allBut(identity.session)) }
        return account
    }

    /// A password check under the sign-in guard, the one way signing in and changing a password check one:
    /// refused while the account or address is locked out, counted either way, a failure's answer held back.
    /// `check` returns its value when the password matches and nil when it does not; if it throws, the attempt
    /// is abandoned, counting as neither.
    private func guardedPasswordCheck<Value>(
        account key: String, from address: ClientAddress, _ check: () async throws -> Value?
    ) async throws -> Value? {
        let attempt = try await signInGuard.begin(account: key, address: address.rawValue)
        let value: Value?
        do { value = try await check() } catch {
            try? await signInGuard.abandoned(attempt)
            throw error
        }
        guard let value else {
            let delay = try await signInGuard.failed(attempt)
            if delay > .zero { try await clock.sleep(for: delay) }
            return nil
        }
        try await signInGuard.succeeded(attempt)
        return value
    }
}

/// A bcrypt hash of a password nobody has, made on first use with the service's own hasher so that checking
/// against it costs what checking a real account costs.
final class StandInHash: Sendable {
    private let value = Mutex<PasswordHash?>(nil)

    func hash(using hasher: any PasswordHasher) async throws -> PasswordHash {
        if let hash = value.withLock({ $0 }) { return hash }
        // Random text of the minimum length; it is never told to anyone.
        let text = RandomID.make()
        guard let password = try? Password(text) else { preconditionFailure("a random id is a valid password") }
        let hash = try await hasher.hash(password)
        return value.withLock { stored in
            if let stored { return stored }
            stored = hash
            return hash
        }
    }
}

/// Ranking for people search: the username exactly, then usernames that start with the text, then names that
/// start with it, then names that contain it; each group by username.
public enum PeopleMatch {
    /// Usernames compare in lower case; names as `NameMatch` folds them (case and accents ignored).
    public static func folded(_ text: String) -> String { NameMatch.folded(text) }

    /// The folded "first last" that stores match against.
    public static func nameKey(_ account: Account) -> String {
        nameKey(firstName: account.firstName.rawValue, lastName: account.lastName.rawValue)
    }

    public static func nameKey(firstName: String, lastName: String) -> String {
        NameMatch.folded(firstName + " " + lastName)
    }

    /// 0 best; nil for no match.
    public static func rank(_ account: Account, folded needle: String) -> Int? {
        let username = account.username.key
        if username == needle { return 0 }
        if username.hasPrefix(needle) { return 1 }
        let name = nameKey(account)
        if name.hasPrefix(needle) || NameMatch.folded(account.lastName.rawValue).hasPrefix(needle) { return 2 }
        return name.contains(needle) ? 3 : nil
    }

    public static func best(_ accounts: some Sequence<Account>, matching text: String, limit: Int) -> [Account] {
        let needle = folded(text)
        guard !needle.isEmpty else { return [] }
        return accounts
            .compactMap { account in rank(account, folded: needle).map { (rank: $0, account: account) } }
            .sorted { a, b in a.rank != b.rank ? a.rank < b.rank : a.account.username.key < b.account.username.key }
            .prefix(limit)
            .map(\.account)
    }
}
