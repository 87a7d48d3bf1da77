import Foundation
import GeoCore
import Testing
import VicinityCore
import VicinityBcrypt

/// bcrypt at its minimum cost: these tests are about the rules around hashing, not the hash's strength.

private func signUp(_ username: String, password: String = "correct horse battery") throws -> SignUp {
    SignUp(
        username: try Username(username), password: try Password(password),
        firstName: try PersonName("Test", field: "first_name"), lastName: try PersonName(username, field: "last_name"),
        email: nil)
}

@Suite("Account values")
struct AccountValueTests {
    @Test("usernames are 3 to 32 ASCII letters, digits, '.', '_' or '-', starting with a letter or digit; unique ignoring case")
    func usernames() throws {
        #expect(try Username("Alice_01").key == "alice_01")
        #expect(try Username("a.b").rawValue == "a.b")
        for bad in ["ab", String(repeating: "a", count: 33), "_alice", "alice smith", "álice", "alice\u{0}", "аlice"] {
            #expect(throws: ValidationError.self, "\(bad)") { try Username(bad) }
        }
    }

    @Test("passwords need 8 characters, fit bcrypt's 72 bytes and hold no NUL; longer ones are refused, never cut")
    func passwords() throws {
        #expect(throws: ValidationError.self) { try Password("seven77") }
        #expect(try Password("eight888").normalized == "eight888")
        #expect(try Password(String(repeating: "x", count: 72)).normalized.utf8.count == 72)
        let tooLong = #expect(throws: ValidationError.self) { try Password(String(repeating: "x", count: 73)) }
        #expect(tooLong?.message.contains("72 bytes") == true)
        // 24 three-byte characters are 72 bytes; one more is 75.
        #expect(try Password(String(repeating: "ก", count: 24)).normalized.utf8.count == 72)
        #expect(throws: ValidationError.self) { try Password(String(repeating: "ก", count: 25)) }
        #expect(throws: ValidationError.self) { try Password("nul\u{0}inside") }
        // Eight characters of which some take several bytes are eight characters.
        #expect(try Password("ééééaaaa").normalized.count == 8)
        #expect("\(try Password("secret-words"))" == "Password(redacted)")
    }

    @Test("a password typed with composed or decomposed accents is the same password")
    func normalisedPasswords() async throws {
        let composed = "caf\u{00E9} au lait", decomposed = "cafe\u{0301} au lait"
        let hash = try await hasher.hash(try Password(composed))
        #expect(try await hasher.verify(decomposed, against: hash))
        #expect(try await !hasher.verify("cafe au lait", against: hash))
        // Text bcrypt would cut is never taken as a match of its first 72 bytes.
        let long = String(repeating: "y", count: 72)
        let longHash = try await hasher.hash(try Password(long))
        #expect(try await hasher.verify(long, against: longHash))
        #expect(try await !hasher.verify(long + "z", against: longHash))
    }

    @Test("bcrypt cost is at least 10 for the service, 10 by default, and stored with the hash")
    func bcryptCost() async throws {
        #expect(BcryptCost.standard.value == 10)
        #expect(throws: ValidationError.self) { try BcryptCost(9) }
        #expect(throws: ValidationError.self) { try BcryptCost(32) }
        let hash = try await BcryptHasher().hash(try Password("correct horse battery"))
        #expect(hash.encoded.hasPrefix("$2b$10$"))
        #expect(!hash.encoded.contains("correct horse"))
    }

    @Test("e-mail addresses, names and statuses follow their rules")
    func otherValues() throws {
        #expect(try Email(" student@csulb.edu ").rawValue == "student@csulb.edu")
        for bad in ["student", "student@", "@csulb.edu", "a b@csulb.edu", "a@csulb", "a@b@c.edu"] {
            #expect(throws: ValidationError.self, "\(bad)") { try Email(bad) }
        }
        #expect(try PersonName(" Nok ", field: "first_name").rawValue == "Nok")
        #expect(throws: ValidationError.self) { try PersonName("   ", field: "first_name") }
        #expect(throws: ValidationError.self) { try PersonName("a\nb", field: "first_name") }
        #expect(try StatusText("   ") == nil)
        #expect(try StatusText(String(repeating: "é", count: 140))?.rawValue.count == 140)
        #expect(throws: ValidationError.self) { try StatusText(String(repeating: "a", count: 141)) }
        #expect(throws: ValidationError.self) { try StatusText("two\nlines") }
        #expect(throws: ValidationError.self) { try Accuracy(meters: -1) }
        #expect(throws: ValidationError.self) { try Accuracy(meters: .nan) }
    }

    @Test("tokens carry 256 random bits in 43 base64url characters and are looked up by SHA-256 only")
    func tokens() throws {
        let token = SessionToken.random()
        #expect(token.text.utf8.count == 43)
        #expect(SessionToken(token.text) != nil)
        #expect(SessionToken(token.text + "A") == nil)
        #expect(SessionToken(String(token.text.dropLast()) + "+") == nil)
        #expect(token.digest.bytes.count == 32)
        #expect(token.digest == SessionToken(token.text)?.digest)
        #expect(SessionToken.random().text != token.text)
        // SHA-256 of 43 "A"s, as Python's hashlib computes it.
        let fixed = try #require(SessionToken(String(repeating: "A", count: 43)))
        #expect(fixed.digest.bytes.map { String(format: "%02x", $0) }.joined()
            == "0f007385b6f9d4b7eeb2748605afe1a984a0a3bfa3f014d09e2a784ce9e5cd1a")
        #expect("\(token)" == "SessionToken(redacted)")
    }

    @Test("timestamps are written as RFC 3339 UTC with milliseconds, as Foundation writes them")
    func timestamps() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        var generator = SystemRandomNumberGenerator()
        let samples: [Int64] = [0, -1, 951_782_400_000, 1_795_338_000_123, 4_102_444_799_999, -2_208_988_800_000]
            + (0..<500).map { _ in Int64.random(in: -4_000_000_000_000...8_000_000_000_000, using: &generator) }
        for milliseconds in samples {
            let timestamp = Timestamp(millisecondsSince1970: milliseconds)
            #expect(timestamp.rfc3339 == formatter.string(from: timestamp.date), "\(milliseconds)")
        }
        #expect(Timestamp(millisecondsSince1970: 951_782_400_000).rfc3339 == "2000-02-29T00:00:00.000Z")
        #expect(Duration.milliseconds(1001).wholeSecondsRoundedUp == 2)
        #expect(Duration.seconds(900).wholeSecondsRoundedUp == 900)
    }
}

@Suite("Sign-in limits, with a clock the tests move")
struct SignInLimitTests {
    @Test("failures 3 and 4 are slowed by 1 s and 2 s, the 5th locks the account for 15 minutes, the 10th for 30")
    func slowedThenLocked() async throws {
        let clock = ManualClock()
        let guardian = GuessingGuard(rules: .standard, limits: .signIn, clock: clock)
        var waits: [Duration] = []
        for _ in 1...5 {
            let attempt = try await guardian.begin(account: "alice", address: "10.0.0.1")
            waits.append(try await guardian.failed(attempt).delay)
        }
        #expect(waits == [.zero, .zero, .seconds(1), .seconds(2), .zero])
        let locked = await #expect(throws: ServiceError.self) { try await guardian.begin(account: "alice", address: "10.0.0.1") }
        #expect(locked == .rateLimited(retryAfter: .seconds(900), .signInAttempts))
        clock.advance(by: .seconds(899))
        await #expect(throws: ServiceError.rateLimited(retryAfter: .seconds(1), .signInAttempts)) {
            try await guardian.begin(account: "alice", address: "10.0.0.1")
        }
        // Other accounts are not affected.
        let attempt = try await guardian.begin(account: "bob", address: "10.0.0.1")
        try await guardian.succeeded(attempt)
        clock.advance(by: .seconds(1))
        for _ in 6...10 {
            let attempt = try await guardian.begin(account: "alice", address: "10.0.0.2")
            _ = try await guardian.failed(attempt)
        }
        await #expect(throws: ServiceError.rateLimited(retryAfter: .seconds(1800), .signInAttempts)) {
            try await guardian.begin(account: "alice", address: "10.0.0.2")
        }
    }

    @Test("locks double up to a day, and a success forgets the failures")
    func longestLockAndReset() async throws {
        let rules = GuessingRules.standard
        #expect(rules.lock(afterFailures: 5) == .seconds(900))
        #expect(rules.lock(afterFailures: 20) == .seconds(7200))
        #expect(rules.lock(afterFailures: 5000) == .seconds(86_400))
        #expect(rules.lock(afterFailures: 7) == nil)

        let clock = ManualClock()
        let guardian = GuessingGuard(rules: rules, limits: .signIn, clock: clock)
        for _ in 1...4 {
            let attempt = try await guardian.begin(account: "carol", address: "a")
            _ = try await guardian.failed(attempt)
        }
        try await guardian.succeeded(try await guardian.begin(account: "carol", address: "a"))
        let attempt = try await guardian.begin(account: "carol", address: "a")
        #expect(try await guardian.failed(attempt).delay == .zero, "the count started again after the success")
    }

    @Test("a wrong password while another attempt's failure has locked the key says no tries are left and gives the lock's wait")
    func failureUnderAnotherLock() async throws {
        let clock = ManualClock()
        let guardian = GuessingGuard(rules: .standard, limits: .votePassword, clock: clock)
        for _ in 1...4 { _ = try await guardian.failed(try await guardian.begin(account: "vote ana", address: "a")) }
        // A check that outlives its attempt's lifetime lets another attempt begin; its failure then locks the key.
        let slow = try await guardian.begin(account: "vote ana", address: "a")
        clock.advance(by: GuessingBook.attemptLifetime + .milliseconds(1))
        let next = try await guardian.begin(account: "vote ana", address: "a")
        await #expect(throws: ServiceError.self) { try await guardian.failed(slow) }
        let failure = try await guardian.failed(next)
        #expect(failure.triesLeft == 0, "not 4, as the count of failures alone would say")
        #expect(failure.lock == .rateLimited(retryAfter: .seconds(900), .votePasswordAttempts))
    }

    @Test("a lock ends by the end it is given: the wait it names stops there, with the limit that says so")
    func lockEndingByAnEnd() async throws {
        let clock = ManualClock()
        let guardian = GuessingGuard(rules: .standard, limits: .votePassword, clock: clock)
        let end = clock.now + .seconds(300)
        var left: [Int] = []
        var locks: [ServiceError?] = []
        for _ in 1...5 {
            let attempt = try await guardian.begin(account: "vote ben", address: "a", lockEndingBy: end)
            let failure = try await guardian.failed(attempt, lockEndingBy: end)
            left.append(failure.triesLeft)
            locks.append(failure.lock)
        }
        #expect(left == [4, 3, 2, 1, 0])
        #expect(locks == [nil, nil, nil, nil, .rateLimited(retryAfter: .seconds(300), .votePasswordAttemptsUntilVoteEnds)])
        clock.advance(by: .seconds(299))
        await #expect(throws: ServiceError.rateLimited(retryAfter: .seconds(1), .votePasswordAttemptsUntilVoteEnds)) {
            try await guardian.begin(account: "vote ben", address: "a", lockEndingBy: end)
        }
        clock.advance(by: .seconds(1))
        let after = try await guardian.begin(account: "vote ben", address: "a")
        try await guardian.succeeded(after)
        // Without an end the same rules lock for their whole 15 minutes.
        for _ in 1...5 { _ = try await guardian.failed(try await guardian.begin(account: "vote cy", address: "b")) }
        await #expect(throws: ServiceError.rateLimited(retryAfter: .seconds(900), .votePasswordAttempts)) {
            try await guardian.begin(account: "vote cy", address: "b", lockEndingBy: clock.now + .seconds(3600))
        }
    }

    @Test("attempts under way count against the failures left, so parallel guesses cannot slip past the lock")
    func parallelAttempts() async throws {
        let guardian = GuessingGuard(rules: .standard, limits: .signIn, clock: ManualClock())
        var attempts: [GuessingAttempt] = []
        for _ in 1...5 { attempts.append(try await guardian.begin(account: "dave", address: "a")) }
        await #expect(throws: ServiceError.self) { try await guardian.begin(account: "dave", address: "a") }
        try await guardian.abandoned(attempts[0])
        _ = try await guardian.begin(account: "dave", address: "a")
    }

    @Test("100 failures from one address close it for sign-ins; successes never count, so a classroom signs in")
    func perAddress() async throws {
        let clock = ManualClock()
        let guardian = GuessingGuard(rules: .standard, limits: .signIn, clock: clock)
        for student in 0..<500 {
            try await guardian.succeeded(try await guardian.begin(account: "student\(student)", address: "campus-nat"))
        }
        for guess in 0..<100 {
            _ = try await guardian.failed(try await guardian.begin(account: "victim\(guess)", address: "campus-nat"))
        }
        await #expect(throws: ServiceError.rateLimited(retryAfter: .seconds(900), .signInsFromAddress)) {
            try await guardian.begin(account: "student1", address: "campus-nat")
        }
        _ = try await guardian.begin(account: "student1", address: "elsewhere")
        clock.advance(by: .seconds(900))
        _ = try await guardian.begin(account: "student2", address: "campus-nat")
    }

    @Test("failures of made-up usernames are forgotten after a day, so guessing names cannot grow memory for good")
    func forgetsOldFailures() async throws {
        let clock = ManualClock()
        var rules = GuessingRules.standard
        rules.failuresPerAddress = RateLimit(limit: 1_000_000, window: .seconds(60))
        let guardian = GuessingGuard(rules: rules, limits: .signIn, clock: clock)
        for index in 0..<4000 {
            _ = try await guardian.failed(try await guardian.begin(account: "made-up-\(index)", address: "a"))
        }
        #expect(guardian.ledger.rememberedKeys == 4000)
        clock.advance(by: .seconds(24 * 3600 + 1))
        for index in 0..<96 {
            _ = try await guardian.failed(try await guardian.begin(account: "fresh-\(index)", address: "a"))
        }
        #expect(guardian.ledger.rememberedKeys == 96, "the 4,096th failure swept the day-old ones")
    }

    @Test("a window ledger in memory forgets the keys whose events aged out")
    func windowLedgerSweeps() async throws {
        let ledger = MemoryWindowLedger()
        let rule = RateLimit(limit: 3, window: .seconds(600))
        let start = Timestamp(millisecondsSince1970: 1_795_338_000_000)
        #expect(try await ledger.acquire(.pokes, key: "a", rule: rule, at: start) == nil)
        #expect(try await ledger.acquire(.pokes, key: "b", rule: rule, at: start) == nil)
        let later = start + .seconds(3600)
        for index in 0..<4096 { _ = try await ledger.acquire(.pokes, key: "key\(index)", rule: rule, at: later) }
        #expect(ledger.keyCount <= 4096, "a and b aged out and were swept")
        #expect(try await ledger.acquire(.pokes, key: "a", rule: rule, at: later) == nil)
    }

    @Test("200 concurrent wrong guesses from one address are cut at its limit of 100, however they interleave")
    func concurrentGuessesFromOneAddress() async throws {
        let guardian = GuessingGuard(rules: .standard, limits: .votePassword, clock: ManualClock())
        // Each guess says whether it reached the password check or was refused before it.
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for person in 0..<200 {
                group.addTask {
                    guard let attempt = try? await guardian.begin(account: "vote person\(person)", address: "attacker") else { return false }
                    // The slow password check: the other guesses run meanwhile.
                    await Task.yield()
                    _ = try? await guardian.failed(attempt)
                    return true
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 }.count == 100)
        #expect(outcomes.filter { !$0 }.count == 100)
        await #expect(throws: ServiceError.self) { try await guardian.begin(account: "vote late", address: "attacker") }
    }
}

@Suite("Account service, with a clock the tests move")
struct AccountServiceTests {
    @Test("a token signs in until its lifetime ends; signing out ends it at once")
    func tokenLifetime() async throws {
        let clock = ManualClock()
        let services = Services(stores: InMemoryStore(), clock: clock, hasher: hasher)
        _ = try await services.accounts.signUp(try signUp("alice"), from: ClientAddress("a"))
        let signedIn = try await services.accounts.signIn(login: "ALICE", password: "correct horse battery", from: ClientAddress("a"))
        #expect(signedIn.expiresAt == clock.now + .seconds(30 * 24 * 3600))
        let identity = try await services.accounts.authenticate(token: signedIn.token.text)
        #expect(identity.userID == signedIn.account.id)
        clock.advance(by: .seconds(30 * 24 * 3600) - .milliseconds(1))
        _ = try await services.accounts.authenticate(token: signedIn.token.text)
        clock.advance(by: .milliseconds(1))
        await #expect(throws: ServiceError.unauthenticated) { try await services.accounts.authenticate(token: signedIn.token.text) }

        let again = try await services.accounts.signIn(login: "alice", password: "correct horse battery", from: ClientAddress("a"))
        let second = try await services.accounts.authenticate(token: again.token.text)
        try await services.accounts.signOut(second)
        await #expect(throws: ServiceError.unauthenticated) { try await services.accounts.authenticate(token: again.token.text) }
        await #expect(throws: ServiceError.unauthenticated) { try await services.accounts.authenticate(token: "not a token") }
    }

    @Test("a wrong password and an unknown username read the same; both count towards the lock")
    func wrongCredentials() async throws {
        let clock = ManualClock()
        let services = Services(stores: InMemoryStore(), clock: clock, hasher: hasher)
        _ = try await services.accounts.signUp(try signUp("alice"), from: ClientAddress("a"))
        await #expect(throws: ServiceError.wrongCredentials) {
            try await services.accounts.signIn(login: "alice", password: "wrong password", from: ClientAddress("a"))
        }
        await #expect(throws: ServiceError.wrongCredentials) {
            try await services.accounts.signIn(login: "nobody", password: "wrong password", from: ClientAddress("a"))
        }
        for _ in 2...5 {
            _ = try? await services.accounts.signIn(login: "alice", password: "wrong password", from: ClientAddress("a"))
        }
        #expect(clock.sleeps == [.seconds(1), .seconds(2)])
        await #expect(throws: ServiceError.rateLimited(retryAfter: .seconds(900), .signInAttempts)) {
            try await services.accounts.signIn(login: "alice", password: "correct horse battery", from: ClientAddress("a"))
        }
        clock.advance(by: .seconds(900))
        _ = try await services.accounts.signIn(login: "alice", password: "correct horse battery", from: ClientAddress("a"))
    }

    @Test("usernames are unique ignoring case, and sign-ups per address are limited, attempts counted")
    func signUps() async throws {
        let clock = ManualClock()
        var settings = ServiceSettings()
        settings.accounts.signUpsPerAddress = RateLimit(limit: 2, window: .seconds(3600))
        let services = Services(stores: InMemoryStore(), clock: clock, hasher: hasher, settings: settings)
        _ = try await services.accounts.signUp(try signUp("alice"), from: ClientAddress("nat"))
        await #expect(throws: ServiceError.conflict(.usernameTaken)) {
            try await services.accounts.signUp(try signUp("ALICE"), from: ClientAddress("elsewhere"))
        }
        _ = try await services.accounts.signUp(try signUp("bob"), from: ClientAddress("nat"))
        await #expect(throws: ServiceError.rateLimited(retryAfter: .seconds(3600), .signUpsFromAddress)) {
            try await services.accounts.signUp(try signUp("carol"), from: ClientAddress("nat"))
        }
        _ = try await services.accounts.signUp(try signUp("carol"), from: ClientAddress("elsewhere"))
    }

    @Test("a new password needs the current one and ends every other session, keeping the one that changed it")
    func passwordChange() async throws {
        let services = Services(stores: InMemoryStore(), clock: ManualClock(), hasher: hasher)
        _ = try await services.accounts.signUp(try signUp("alice"), from: ClientAddress("a"))
        let phone = try await services.accounts.signIn(login: "alice", password: "correct horse battery", from: ClientAddress("a"))
        let laptop = try await services.accounts.signIn(login: "alice", password: "correct horse battery", from: ClientAddress("a"))
        let identity = try await services.accounts.authenticate(token: phone.token.text)

        await #expect(throws: ServiceError.forbidden(
            "Give your current password, or sign in with a code mailed to you first: for 10 minutes after that no password is needed.")) {
            try await services.accounts.update(identity, AccountChanges(newPassword: try Password("new password 1")), from: ClientAddress("a"))
        }
        await #expect(throws: ServiceError.forbidden("The current password is wrong.")) {
            try await services.accounts.update(
                identity, AccountChanges(newPassword: try Password("new password 1"), currentPassword: "guess"), from: ClientAddress("a"))
        }
        _ = try await services.accounts.authenticate(token: laptop.token.text)
        let updated = try await services.accounts.update(
            identity,
            AccountChanges(privacyMode: true, newPassword: try Password("new password 1"), currentPassword: "correct horse battery"),
            from: ClientAddress("a"))
        #expect(updated.privacyMode)
        _ = try await services.accounts.authenticate(token: phone.token.text)
        await #expect(throws: ServiceError.unauthenticated) { try await services.accounts.authenticate(token: laptop.token.text) }
        await #expect(throws: ServiceError.wrongCredentials) {
            try await services.accounts.signIn(login: "alice", password: "correct horse battery", from: ClientAddress("a"))
        }
        _ = try await services.accounts.signIn(login: "alice", password: "new password 1", from: ClientAddress("a"))
    }
}
