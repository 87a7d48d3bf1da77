/// Codes mailed to an address: confirming it, and signing in with it.
extension AccountService {
    /// Mails a new code to the account's address waiting for confirmation, replacing any code before it.
    public func requestEmailVerification(_ identity: Identity, from address: ClientAddress) async throws {
        guard rules.mail.relayConfigured else { throw ServiceError.mailUnavailable }
        let account = try await me(identity)
        guard let email = account.pendingEmail else { throw ServiceError.conflict(.noEmailToVerify) }
        try await codeSends.acquire(account: account.id, email: email, client: address)
        let (code, message) = try await makeCode(.verifyEmail, for: account.id, to: email, at: clock.now)
        try await stores.accounts.issueCode(code, message: message)
        outboxSignal.notify()
    }

    /// Confirms the address the code was mailed to: it becomes the account's verified address. Each check
    /// spends one of the code's tries, and counts under the sign-in guard as a password would.
    public func confirmEmail(_ identity: Identity, code text: MailCode, from address: ClientAddress) async throws -> Account {
        let confirmed = try await guardedCheck(key: "verify " + identity.userID.rawValue, from: address) { () async throws -> Bool? in
            guard let code = try await spentTry(of: identity.userID, .verifyEmail, matching: text) else { return nil }
            return try await stores.accounts.consumeCode(code) ? true : nil
        }
        guard confirmed != nil else { throw ServiceError.forbidden(Self.codeRefusal) }
        return try await me(identity)
    }

    /// Asks for a code that signs in without a password, mailed to `email` if an account has verified it. The
    /// answer is the same, and as quick, whether or not one has: only the request is recorded here; the sender
    /// works out whether there is anything to mail (`prepareSignInCode`).
    public func requestSignInCode(to email: Email, from address: ClientAddress) async throws {
        guard rules.mail.relayConfigured else { throw ServiceError.mailUnavailable }
        try await codeSends.acquire(account: nil, email: email, client: address)
        let now = clock.now
        try await stores.outbox.enqueue([
            OutboxMessage(account: nil, payload: .signInCode(email), createdAt: now, expiresAt: now + rules.codes.lifetime),
        ])
        outboxSignal.notify()
    }

    /// Turns a sign-in code request into its mail, with a new code kept for the account that verified the
    /// address, or else for the newest account made by code that waits for it (its code confirms the address
    /// too); nil when there is none, or it is disabled, or its own limit of codes is reached: there is then
    /// nothing to send. Run by the sender, which alone learns whether the address is anyone's.
    public func prepareSignInCode(_ message: OutboxMessage, to email: Email) async throws -> OutboxMessage? {
        let purpose: CodePurpose, stored: StoredAccount, address: Email
        if let verified = try await stores.accounts.credentials(emailKey: email.key), let owned = verified.account.email {
            (purpose, stored, address) = (.signIn, verified, owned)
        } else if let waiting = try await stores.accounts.passwordless(pendingEmailKey: email.key, limit: 1).first,
            let pending = waiting.account.pendingEmail {
            (purpose, stored, address) = (.verifyEmail, waiting, pending)
        } else {
            return nil
        }
        guard !stored.account.disabled, try await codeSends.acquireForAccount(stored.account.id) else { return nil }
        var prepared = message
        // To the address as its owner spelt it, not as the request did.
        let (code, mail) = try await makeCode(purpose, for: stored.account.id, to: address, at: clock.now)
        prepared.account = stored.account.id
        prepared.payload = mail.payload
        prepared.expiresAt = min(message.expiresAt, code.expiresAt)
        try await stores.accounts.issueCode(code, message: prepared)
        return prepared
    }

    /// Signs in with a code mailed to a verified address; or, for an account made by code (no password) whose
    /// address still waits, with the code mailed to that address, which confirms it on the way. A wrong code,
    /// an unknown address and an address nobody verified read the same; each counts under the sign-in guard
    /// with the address's password tries.
    public func signIn(email: Email, code text: MailCode, from address: ClientAddress) async throws -> SignedIn {
        let account = try await guardedCheck(key: Self.guessingKey(email.key), from: address) { () async throws -> Account? in
            if let stored = try await stores.accounts.credentials(emailKey: email.key) {
                guard let code = try await spentTry(of: stored.account.id, .signIn, matching: text) else { return nil }
                return try await stores.accounts.consumeCode(code) ? stored.account : nil
            }
            // Newest first, as the codes are mailed (`prepareSignInCode`); a few at most, each check one try.
            let waiting = try await stores.accounts.passwordless(pendingEmailKey: email.key, limit: Self.waitingAccountsChecked)
            guard !waiting.isEmpty else {
                // As long as a real check takes.
                _ = try await hasher.verify(text.hashable.normalized, against: try await standIn.hash(using: hasher))
                return nil
            }
            for candidate in waiting {
                if let code = try await spentTry(of: candidate.account.id, .verifyEmail, matching: text) {
                    guard try await stores.accounts.consumeCode(code) else { return nil }
                    return try await stores.accounts.account(id: candidate.account.id)
                }
            }
            return nil
        }
        guard let account else { throw ServiceError.wrongCredentials }
        return try await openSession(for: account, byCode: true)
    }

    /// Accounts made by code that one code sign-in checks when several wait for the same address: anyone
    /// may type any address, so more are not worth the time they would take.
    static var waitingAccountsChecked: Int { 3 }

    // MARK: Helpers

    /// A new code for the purpose, kept as its hash, and the mail that carries it.
    func makeCode(
        _ purpose: CodePurpose, for account: UserID, to email: Email, at now: Timestamp
    ) async throws -> (StoredCode, OutboxMessage) {
        let code = MailCode.random()
        let expires = now + rules.codes.lifetime
        let stored = StoredCode(
            account: account, purpose: purpose, email: email, hash: try await hasher.hash(code.hashable), createdAt: now,
            expiresAt: expires, triesLeft: rules.codes.tries)
        let mail = MailTexts.code(code, purpose: purpose, to: email, rules: rules.codes)
        return (stored, OutboxMessage(account: account, payload: .mail(mail), createdAt: now, expiresAt: expires))
    }

    /// Spends one try of the account's code for the purpose and checks `text` against it: the code when it
    /// matches, nil when there is none usable or it does not.
    private func spentTry(of account: UserID, _ purpose: CodePurpose, matching text: MailCode) async throws -> StoredCode? {
        guard let code = try await stores.accounts.spendCodeTry(of: account, purpose: purpose, at: clock.now) else {
            // As long as a real check takes.
            _ = try await hasher.verify(text.hashable.normalized, against: try await standIn.hash(using: hasher))
            return nil
        }
        return try await hasher.verify(text.hashable.normalized, against: code.hash) ? code : nil
    }

    public static var codeRefusal: String {
        "This code is wrong, or no longer works (a code works for a few minutes and a few tries); ask for a new one."
    }
}

/// The limits on codes mailed: per account, per address and per client, counted in the store's window
/// ledger, so that every front shares them.
struct CodeSendLimits<Ledger: WindowLedger>: Sendable {
    let rules: CodeRules
    let clock: any WallClock
    let ledger: Ledger

    /// Counts a send against the address and the client, and the account when there is one; refuses, counting
    /// nothing, when any is at its limit.
    func acquire(account: UserID?, email: Email, client: ClientAddress) async throws {
        let now = clock.now
        var checks: [(key: WindowKey, rule: RateLimit, limit: ServiceError.Limit)] = [
            (WindowKey(.codesToAddress, email.key, window: rules.sendsPerAddress.window), rules.sendsPerAddress, .codesToAddress),
            (WindowKey(.codesFromClient, client.rawValue, window: rules.sendsFromClient.window), rules.sendsFromClient, .codesFromClient),
        ]
        if let account {
            checks.append((WindowKey(.codesForAccount, account.rawValue, window: rules.sendsPerAccount.window), rules.sendsPerAccount, .codesForAccount))
        }
        let keys = checks.map(\.key), limits = checks.map { ($0.rule, $0.limit) }
        let refusal = try await ledger.withWindows(keys, at: now) { states -> ServiceError? in
            for (index, (rule, limit)) in limits.enumerated() {
                if let wait = states[index].wait(under: rule, at: now) { return .rateLimited(retryAfter: wait, limit) }
            }
            for index in states.indices { states[index].add(at: now) }
            return nil
        }
        if let refusal { throw refusal }
    }

    /// Counts a send against the account alone; false, counting nothing, at its limit. For sign-in codes, whose
    /// account is known only to the sender, which tells nobody.
    func acquireForAccount(_ account: UserID) async throws -> Bool {
        let now = clock.now, rule = rules.sendsPerAccount
        return try await ledger.withWindows([WindowKey(.codesForAccount, account.rawValue, window: rule.window)], at: now) { states in
            guard states[0].wait(under: rule, at: now) == nil else { return false }
            states[0].add(at: now)
            return true
        }
    }
}
