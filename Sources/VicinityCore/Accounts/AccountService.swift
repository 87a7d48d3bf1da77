import Synchronization

/// The rules of accounts and sessions.
public struct AccountRules: Hashable, Sendable {
    /// How long a token signs in. 30 days: students sign in on their phone once a month at most.
    public var sessionLifetime: Duration
    /// Wrong passwords and wrong sign-in codes alike.
    public var signIn: GuessingRules
    /// New accounts per client address. 100 an hour lets a lecture hall behind one campus NAT sign up at once
    /// while keeping one address from minting accounts by the thousand.
    public var signUpsPerAddress: RateLimit
    public var codes: CodeRules
    /// Whether a relay is configured, and what follows from it.
    public var mail: MailSettings

    public static let standard = AccountRules(
        sessionLifetime: .seconds(30 * 24 * 3600), signIn: .standard,
        signUpsPerAddress: RateLimit(limit: 100, window: .seconds(3600)), codes: .standard, mail: .withoutRelay)

    public init(
        sessionLifetime: Duration, signIn: GuessingRules, signUpsPerAddress: RateLimit, codes: CodeRules = .standard,
        mail: MailSettings = .withoutRelay
    ) {
        self.sessionLifetime = sessionLifetime
        self.signIn = signIn
        self.signUpsPerAddress = signUpsPerAddress
        self.codes = codes
        self.mail = mail
    }
}

/// Whether the service can mail, and what it asks of accounts because of it.
public struct MailSettings: Hashable, Sendable {
    /// A relay is configured (`serve --smtp-url`): without one, what needs mail is refused with
    /// `ServiceError.mailUnavailable`.
    public var relayConfigured: Bool
    /// Sign-up needs an e-mail address, and new votes take verified voters only unless they say otherwise
    /// (`serve --require-email`; by default, when a relay is configured).
    public var requireEmail: Bool

    public static let withoutRelay = MailSettings(relayConfigured: false, requireEmail: false)

    public init(relayConfigured: Bool, requireEmail: Bool) {
        self.relayConfigured = relayConfigured
        self.requireEmail = requireEmail
    }
}

/// Where a request came from, for limits per client address. Requests whose address is unknown share one.
public struct ClientAddress: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(_ rawValue: String?) { self.rawValue = rawValue ?? "unknown" }

    public var description: String { rawValue }
}

/// Signs people up, in and out, and looks after their account: its addresses and the codes mailed to them,
/// its password, its deletion.
public struct AccountService<S: Stores>: Sendable {
    let stores: S
    let clock: any WallClock
    let hasher: any PasswordHasher
    public let rules: AccountRules
    let outbox: OutboxRules
    /// Event streams end with the session that opened them.
    let streams: EventHub
    let signInGuard: GuessingGuard<S.KeyedGuesses>
    private let signUps: WindowLimit<S.KeyedLimits>
    let codeSends: CodeSendLimits<S.KeyedLimits>
    /// Checked against when a username or address has no account, so that a sign-in takes as long whether or
    /// not the account exists.
    let standIn: StandInHash
    /// Wakes this process's sender once a message is recorded.
    let outboxSignal: ChangeSignal
    /// Privacy mode changes what every friend sees.
    let visibility: VisibilityNotices<S>

    public init(
        stores: S, clock: any WallClock, hasher: any PasswordHasher, streams: EventHub, visibility: VisibilityNotices<S>,
        rules: AccountRules = .standard, outbox: OutboxRules = .standard, limitKeys: LimitKeys = .random(),
        outboxSignal: ChangeSignal = ChangeSignal()
    ) {
        self.visibility = visibility
        self.outboxSignal = outboxSignal
        self.stores = stores
        self.streams = streams
        self.clock = clock
        self.hasher = hasher
        self.rules = rules
        self.outbox = outbox
        let limits = KeyedWindowLedger(stores.limits, keys: limitKeys)
        signInGuard = GuessingGuard(rules: rules.signIn, limits: .signIn, clock: clock, ledger: KeyedGuessingLedger(stores.guesses, keys: limitKeys))
        signUps = WindowLimit(rules.signUpsPerAddress, scope: .signUps, clock: clock, ledger: limits)
        codeSends = CodeSendLimits(rules: rules.codes, clock: clock, ledger: limits)
        standIn = StandInHash()
    }

    // MARK: Signing up, in and out

    /// Creates the account, and mails a code to its address when it gives one. Every attempt that gets this far
    /// counts against the address's sign-ups, a taken username included: counting first keeps concurrent
    /// sign-ups from slipping past the limit together.
    public func signUp(_ request: SignUp, from address: ClientAddress) async throws -> Account {
        if rules.mail.requireEmail, request.email == nil {
            throw ServiceError.invalid("email", "is required: this service confirms every account's address with a code")
        }
        if request.password == nil, request.email == nil {
            throw ServiceError.invalid("password", "is required for an account without an e-mail address to sign in with")
        }
        if request.email != nil, !rules.mail.relayConfigured { throw ServiceError.mailUnavailable }
        if let wait = try await signUps.acquire(address.rawValue) { throw ServiceError.rateLimited(retryAfter: wait, .signUpsFromAddress) }
        let now = clock.now
        var hash: PasswordHash?
        if let password = request.password { hash = try await hasher.hash(password) }
        let account = Account(
            id: .random(), username: request.username, firstName: request.firstName, lastName: request.lastName,
            email: nil, pendingEmail: request.email, privacyMode: false, createdAt: now)
        var code: (StoredCode, OutboxMessage)?
        if let email = request.email {
            // A new account's first code counts against its address and client, not against the account.
            try await codeSends.acquire(account: nil, email: email, client: address)
            code = try await makeCode(.verifyEmail, for: account.id, to: email, at: now)
        }
        try await stores.accounts.createAccount(
            StoredAccount(account: account, passwordHash: hash), code: code?.0, message: code?.1)
        if code != nil { outboxSignal.notify() }
        return account
    }

    /// Checks the password and opens a session. `login` is a username, or a verified e-mail address when it
    /// holds an `@` (no username does). Wrong credentials read the same whether or not the account exists;
    /// repeated failures are slowed, then refused for a while (`GuessingRules`).
    public func signIn(login: String, password: String, from address: ClientAddress) async throws -> SignedIn {
        let key = Self.guessingKey(login)
        let account = try await guardedCheck(key: key, from: address) { () async throws -> Account? in
            let found = try await credentials(of: login)
            let hash: PasswordHash
            if let stored = found?.passwordHash { hash = stored } else { hash = try await standIn.hash(using: hasher) }
            return try await hasher.verify(password, against: hash) && found?.passwordHash != nil ? found?.account : nil
        }
        guard let account else { throw ServiceError.wrongCredentials }
        return try await openSession(for: account, byCode: false)
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
        return Identity(userID: session.userID, session: digest, codeSignIn: session.byCode ? session.createdAt : nil)
    }

    // MARK: One's own account

    public func me(_ identity: Identity) async throws -> Account {
        guard let account = try await stores.accounts.account(id: identity.userID) else { throw ServiceError.unauthenticated }
        return account
    }

    /// Applies the changes. A new address waits for its code (`pendingEmail`), mailed at once; the verified one
    /// stays until then. A new password needs the current one, or a recent code sign-in (`setPassword`).
    public func update(_ identity: Identity, _ changes: AccountChanges, from address: ClientAddress) async throws -> Account {
        if let newPassword = changes.newPassword {
            _ = try await setPassword(newPassword, current: changes.currentPassword, for: identity, from: address)
        } else if changes.currentPassword != nil {
            throw ServiceError.invalid("current_password", "is only needed with a new password")
        }
        guard var stored = try await stores.accounts.storedAccount(id: identity.userID) else { throw ServiceError.unauthenticated }
        if let firstName = changes.firstName { stored.account.firstName = firstName }
        if let lastName = changes.lastName { stored.account.lastName = lastName }
        if let privacyMode = changes.privacyMode { stored.account.privacyMode = privacyMode }
        if let defaultShare = changes.defaultShare { stored.account.defaultShare = defaultShare }
        var code: (StoredCode, OutboxMessage)?
        switch changes.email {
        case nil:
            break
        case .some(nil):
            // Removing the address leaves an account that signs in with its password only.
            guard stored.passwordHash != nil else {
                throw ServiceError.invalid("email", "cannot be removed from an account without a password: set one first")
            }
            stored.account.email = nil
            stored.account.pendingEmail = nil
        case .some(let email?) where email.key == stored.account.email?.key:
            stored.account.pendingEmail = nil
        case .some(let email?):
            guard rules.mail.relayConfigured else { throw ServiceError.mailUnavailable }
            try await codeSends.acquire(account: stored.account.id, email: email, client: address)
            stored.account.pendingEmail = email
            code = try await makeCode(.verifyEmail, for: stored.account.id, to: email, at: clock.now)
        }
        let update = { try await stores.accounts.updateAccount(stored, ending: .none) }
        let updated = changes.privacyMode == nil ? try await update() : try await visibility.around(identity.userID, update)
        guard updated else { throw ServiceError.unauthenticated }
        if let (code, message) = code {
            try await stores.accounts.issueCode(code, message: message)
            outboxSignal.notify()
        }
        return stored.account
    }

    // MARK: Helpers

    /// The account `login` names: a verified address when it holds an `@`, else a username.
    func credentials(of login: String) async throws -> StoredAccount? {
        if login.contains("@") {
            guard let email = try? Email(login) else { return nil }
            return try await stores.accounts.credentials(emailKey: email.key)
        }
        return try await stores.accounts.credentials(usernameKey: Self.usernameKey(login))
    }

    /// What failed sign-ins are counted under: the username in lower case, or the address in lower case,
    /// whether or not an account holds it, so that the answers do not tell which exist; cut short so that
    /// made-up logins cannot grow the ledger by their length.
    static func guessingKey(_ login: String) -> String {
        login.contains("@") ? "email " + String(login.lowercased().prefix(Email.maximumLength + 1)) : usernameKey(login)
    }

    static func usernameKey(_ login: String) -> String { String(login.lowercased().prefix(Username.lengths.upperBound + 1)) }

    /// Opens a session for the account, unless an operator disabled it; expired sessions are swept on the way.
    func openSession(for account: Account, byCode: Bool) async throws -> SignedIn {
        guard !account.disabled else {
            throw ServiceError.forbidden("This account is disabled; the service's operators can say why and enable it again.")
        }
        let now = clock.now
        let token = SessionToken.random()
        let session = Session(
            digest: token.digest, userID: account.id, createdAt: now, expiresAt: now + rules.sessionLifetime, byCode: byCode)
        try await stores.accounts.createSession(session)
        _ = try await stores.accounts.deleteSessions(expiredBefore: now)
        return SignedIn(token: token, expiresAt: session.expiresAt, account: account)
    }

    /// A check under the sign-in guard, the one way signing in, changing a password and using a code check
    /// one: refused while the key or address is locked out, counted either way, a failure's answer held back.
    /// `check` returns its value when the secret matches and nil when it does not; if it throws, the attempt
    /// is abandoned, counting as neither.
    func guardedCheck<Value>(
        key: String, from address: ClientAddress, _ check: () async throws -> Value?
    ) async throws -> Value? {
        let attempt = try await signInGuard.begin(account: key, address: address.rawValue)
        let value: Value?
        do { value = try await check() } catch {
            try? await signInGuard.abandoned(attempt)
            throw error
        }
        guard let value else {
            let delay = try await signInGuard.failed(attempt).delay
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
