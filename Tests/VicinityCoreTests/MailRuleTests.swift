import Foundation
import GeoCore
import Synchronization
import Testing
import VicinityBcrypt
import VicinityCore

/// A relay in memory, for the rules around mail: it keeps each mail handed to it and answers as the test
/// scripts it (delivered when nothing is scripted). The SMTP client is tested against a real relay in
/// VicinityTransportsTests, and the whole path in VicinityHTTPTests.
final class MemoryRelay: MailTransport {
    private let state = Mutex<(mails: [OutgoingMail], answers: [DeliveryOutcome])>(([], []))

    func deliver(_ mail: OutgoingMail) async -> DeliveryOutcome {
        state.withLock { state in
            let answer = state.answers.isEmpty ? DeliveryOutcome.delivered : state.answers.removeFirst()
            if answer == .delivered { state.mails.append(mail) }
            return answer
        }
    }

    /// The next tries' answers, in order.
    func answer(_ outcomes: DeliveryOutcome...) { state.withLock { $0.answers += outcomes } }

    var mails: [OutgoingMail] { state.withLock { $0.mails } }

    /// The code of the last mail to `address`: its first line.
    func code(to address: String) throws -> MailCode {
        let mail = try #require(mails.last { $0.mail.to.rawValue == address }, "no mail to \(address)")
        return try MailCode(String(mail.mail.body.split(separator: "\n").first ?? ""))
    }
}

/// People, a clock the test moves, a relay in memory and the services over the in-memory store, with mail
/// configured and e-mail addresses required.
private struct Campus {
    let clock = ManualClock()
    let store = InMemoryStore()
    let relay = MemoryRelay()
    let services: Services<InMemoryStore>
    let address = ClientAddress("198.51.100.7")

    init(mail: Bool = true, codeLifetime: Duration = CodeRules.standard.lifetime, outbox: OutboxRules = .standard) {
        var settings = ServiceSettings.standard
        settings.outbox = outbox
        settings.accounts.mail = MailSettings(relayConfigured: mail, requireEmail: mail)
        settings.accounts.codes.lifetime = codeLifetime
        settings.votes.verifiedOnlyByDefault = mail
        services = Services(stores: store, clock: clock, hasher: hasher, mail: mail ? relay : nil, settings: settings)
    }

    var accounts: AccountService<InMemoryStore> { services.accounts }

    func signUp(_ username: String, email: String?, password: String? = "correct horse battery") async throws -> Account {
        try await accounts.signUp(
            SignUp(
                username: try Username(username), password: try password.map { try Password($0) },
                firstName: try PersonName(username.capitalized, field: "first_name"), lastName: try PersonName("Test", field: "last_name"),
                email: try email.map { try Email($0) }),
            from: address)
    }

    /// Signs up with a confirmed address and signs in.
    func verified(_ username: String, email: String) async throws -> Identity {
        _ = try await signUp(username, email: email)
        let identity = try await signIn(username)
        try await services.outbox.sendDue()
        _ = try await accounts.confirmEmail(identity, code: try relay.code(to: email), from: address)
        return identity
    }

    func signIn(_ login: String, password: String = "correct horse battery") async throws -> Identity {
        let signedIn = try await accounts.signIn(login: login, password: password, from: address)
        return try await accounts.authenticate(token: signedIn.token.text)
    }
}

@Suite("Mailed codes, with a clock the tests move")
struct MailedCodeTests {
    @Test("sign-up with an address mails a six-digit code; the code makes it the verified address, once")
    func confirmAddress() async throws {
        let campus = Campus()
        let account = try await campus.signUp("nok", email: "Nok@student.csulb.edu")
        #expect(account.email == nil && account.pendingEmail?.rawValue == "Nok@student.csulb.edu" && !account.isVerified)
        #expect(try await campus.services.outbox.sendDue() == 1)
        let mail = try #require(campus.relay.mails.first)
        #expect(mail.mail.to.rawValue == "Nok@student.csulb.edu")
        #expect(mail.mail.body.contains("15 minutes") && mail.mail.body.contains("5 tries"), "what it is for and how long it works")
        let code = try campus.relay.code(to: "Nok@student.csulb.edu")
        #expect(mail.mail.subject.contains(code.text))
        let nok = try await campus.signIn("nok")
        let confirmed = try await campus.accounts.confirmEmail(nok, code: code, from: campus.address)
        #expect(confirmed.email?.rawValue == "Nok@student.csulb.edu" && confirmed.pendingEmail == nil && confirmed.isVerified)
        await #expect(throws: ServiceError.forbidden(AccountService<InMemoryStore>.codeRefusal), "a code works once") {
            try await campus.accounts.confirmEmail(nok, code: code, from: campus.address)
        }
        // The verified address now signs in, in any case.
        #expect(try await campus.accounts.signIn(login: "NOK@STUDENT.csulb.edu", password: "correct horse battery", from: campus.address).account.id == account.id)
        #expect(await (try? campus.accounts.signIn(login: "nok@csulb.edu", password: "correct horse battery", from: campus.address)) == nil)
    }

    @Test("a code works for 15 minutes, and a resend replaces it")
    func lifetimeAndTries() async throws {
        let campus = Campus()
        _ = try await campus.signUp("pim", email: "pim@student.csulb.edu")
        let pim = try await campus.signIn("pim")
        try await campus.services.outbox.sendDue()
        let first = try campus.relay.code(to: "pim@student.csulb.edu")

        // A resend replaces the first code.
        try await campus.accounts.requestEmailVerification(pim, from: campus.address)
        try await campus.services.outbox.sendDue()
        let second = try campus.relay.code(to: "pim@student.csulb.edu")
        if first.text != second.text {
            await #expect(throws: ServiceError.self) { try await campus.accounts.confirmEmail(pim, code: first, from: campus.address) }
        }
        // Past its lifetime, the right code no longer works.
        campus.clock.advance(by: .seconds(15 * 60))
        await #expect(throws: ServiceError.forbidden(AccountService<InMemoryStore>.codeRefusal)) {
            try await campus.accounts.confirmEmail(pim, code: second, from: campus.address)
        }
    }

    @Test("four wrong tries leave the fifth to the right code, each wrong one counted as a wrong password is")
    func fourWrongTries() async throws {
        let campus = Campus()
        _ = try await campus.signUp("pim", email: "pim@student.csulb.edu")
        let pim = try await campus.signIn("pim")
        try await campus.services.outbox.sendDue()
        let code = try campus.relay.code(to: "pim@student.csulb.edu")
        let wrong = try MailCode(code.text == "000000" ? "000001" : "000000")
        for _ in 0..<4 { _ = try? await campus.accounts.confirmEmail(pim, code: wrong, from: campus.address) }
        #expect(campus.clock.sleeps == [.seconds(1), .seconds(2)], "failures 3 and 4 answered late, as wrong passwords are")
        #expect(try await campus.accounts.confirmEmail(pim, code: code, from: campus.address).isVerified)
    }

    @Test("five tries spend a code, the right one refused after them, even once the guessing lock has passed")
    func spentCode() async throws {
        let campus = Campus(codeLifetime: .seconds(3600))
        _ = try await campus.signUp("pim", email: "pim@student.csulb.edu")
        let pim = try await campus.signIn("pim")
        try await campus.services.outbox.sendDue()
        let code = try campus.relay.code(to: "pim@student.csulb.edu")
        let wrong = try MailCode(code.text == "000000" ? "000001" : "000000")
        for _ in 0..<5 { _ = try? await campus.accounts.confirmEmail(pim, code: wrong, from: campus.address) }
        let locked = await #expect(throws: ServiceError.self) { try await campus.accounts.confirmEmail(pim, code: code, from: campus.address) }
        guard case .rateLimited? = locked else { throw StoreError.database("the fifth failure did not lock: \(String(describing: locked))") }
        campus.clock.advance(by: .seconds(16 * 60))
        await #expect(throws: ServiceError.forbidden(AccountService<InMemoryStore>.codeRefusal)) {
            try await campus.accounts.confirmEmail(pim, code: code, from: campus.address)
        }
    }

    @Test("codes mailed are limited per account, per address and per client")
    func sendLimits() async throws {
        let campus = Campus()
        _ = try await campus.signUp("ana", email: "ana@student.csulb.edu")
        let ana = try await campus.signIn("ana")
        for _ in 0..<4 { try await campus.accounts.requestEmailVerification(ana, from: campus.address) }
        let sixth = await #expect(throws: ServiceError.self) { try await campus.accounts.requestEmailVerification(ana, from: campus.address) }
        guard case .rateLimited(_, let limit)? = sixth else { throw ServiceError.unauthenticated }
        #expect([.codesToAddress, .codesForAccount].contains(limit), "the sign-up's code and four resends are the address's five")
        // Sign-in codes asked for an address count against it too, whoever asks, whether or not it is anyone's.
        for _ in 0..<5 { try await campus.accounts.requestSignInCode(to: try Email("nobody@csulb.edu"), from: ClientAddress("192.0.2.\(Int.random(in: 1...250))")) }
        await #expect(throws: ServiceError.self) {
            try await campus.accounts.requestSignInCode(to: try Email("nobody@csulb.edu"), from: ClientAddress("192.0.2.251"))
        }
        // One client asking for many addresses is held at its limit (300 an hour).
        let clientLimit = CodeRules.standard.sendsFromClient.limit
        #expect(clientLimit >= AccountRules.standard.signUpsPerAddress.limit, "every sign-up a client may make gets its code")
        for index in 0..<clientLimit { try await campus.accounts.requestSignInCode(to: try Email("x\(index)@csulb.edu"), from: ClientAddress("203.0.113.9")) }
        await #expect(throws: ServiceError.self) {
            try await campus.accounts.requestSignInCode(to: try Email("x\(clientLimit)@csulb.edu"), from: ClientAddress("203.0.113.9"))
        }
    }
}

@Suite("Signing in by mail, and leaving")
struct MailSignInTests {
    @Test("a sign-in code reaches only a verified address; unknown and unverified ones get the same answer and no mail")
    func signInCodes() async throws {
        let campus = Campus()
        let nok = try await campus.verified("nok", email: "nok@student.csulb.edu")
        _ = try await campus.signUp("pending", email: "pending@student.csulb.edu")
        try await campus.services.outbox.sendDue()
        let before = campus.relay.mails.count
        for address in ["nok@student.csulb.edu", "nobody@student.csulb.edu", "pending@student.csulb.edu"] {
            try await campus.accounts.requestSignInCode(to: try Email(address), from: campus.address)
        }
        #expect(try await campus.services.outbox.sendDue() == 3, "every request is recorded alike")
        #expect(campus.relay.mails.count == before + 1)
        #expect(campus.relay.mails.last?.mail.to.rawValue == "nok@student.csulb.edu")
        #expect(try await campus.store.pendingOutboxCount() == 0, "the other two are dropped")
        let code = try campus.relay.code(to: "nok@student.csulb.edu")
        let signedIn = try await campus.accounts.signIn(email: try Email("NOK@student.csulb.edu"), code: code, from: campus.address)
        #expect(signedIn.account.id == nok.userID)
        #expect(try await campus.accounts.authenticate(token: signedIn.token.text).codeSignIn == campus.clock.now)
        await #expect(throws: ServiceError.wrongCredentials, "a code signs in once") {
            try await campus.accounts.signIn(email: try Email("nok@student.csulb.edu"), code: code, from: campus.address)
        }
        await #expect(throws: ServiceError.wrongCredentials, "an unknown address reads as a wrong code") {
            try await campus.accounts.signIn(email: try Email("nobody@student.csulb.edu"), code: code, from: campus.address)
        }
    }

    @Test("a forgotten password is a code sign-in and a new password within ten minutes; every other session ends")
    func resetPassword() async throws {
        let campus = Campus()
        let nok = try await campus.verified("nok", email: "nok@student.csulb.edu")
        await #expect(throws: ServiceError.self, "a password session needs the current password") {
            try await campus.accounts.setPassword(try Password("a new long password"), current: nil, for: nok, from: campus.address)
        }
        try await campus.accounts.requestSignInCode(to: try Email("nok@student.csulb.edu"), from: campus.address)
        try await campus.services.outbox.sendDue()
        let signedIn = try await campus.accounts.signIn(
            email: try Email("nok@student.csulb.edu"), code: try campus.relay.code(to: "nok@student.csulb.edu"), from: campus.address)
        let byCode = try await campus.accounts.authenticate(token: signedIn.token.text)
        campus.clock.advance(by: .seconds(9 * 60))
        _ = try await campus.accounts.setPassword(try Password("a new long password"), current: nil, for: byCode, from: campus.address)
        #expect(try await campus.store.session(nok.session) == nil, "the other session ended")
        #expect(try await campus.store.session(byCode.session) != nil)
        await #expect(throws: ServiceError.wrongCredentials) { try await campus.signIn("nok") }
        _ = try await campus.signIn("nok", password: "a new long password")
        campus.clock.advance(by: .seconds(2 * 60))
        await #expect(throws: ServiceError.self, "ten minutes on, the code session needs a password again") {
            try await campus.accounts.setPassword(try Password("yet another password"), current: nil, for: byCode, from: campus.address)
        }
    }

    @Test("an account made by code has no password until it sets one, and signs in with the code mailed to its waiting address, which confirms it")
    func accountWithoutPassword() async throws {
        let campus = Campus()
        let mai = try await campus.signUp("mai", email: "mai@student.csulb.edu", password: nil)
        try await campus.services.outbox.sendDue()
        // Without a password, nothing a password would say signs it in.
        await #expect(throws: ServiceError.wrongCredentials) { try await campus.signIn("mai", password: "") }
        // The sign-up code lapses unused; asking for a sign-in code mails a new one to the waiting address.
        campus.clock.advance(by: CodeRules.standard.lifetime + .seconds(1))
        try await campus.accounts.requestSignInCode(to: try Email("MAI@student.csulb.edu"), from: campus.address)
        try await campus.services.outbox.sendDue()
        #expect(campus.relay.mails.count == 2 && campus.relay.mails.last?.mail.to.rawValue == "mai@student.csulb.edu")
        let code = try campus.relay.code(to: "mai@student.csulb.edu")
        let wrong = try MailCode(code.hashable.normalized == "000000" ? "000001" : "000000")
        await #expect(throws: ServiceError.wrongCredentials) {
            try await campus.accounts.signIn(email: try Email("mai@student.csulb.edu"), code: wrong, from: campus.address)
        }
        let signedIn = try await campus.accounts.signIn(email: try Email("mai@student.csulb.edu"), code: code, from: campus.address)
        #expect(signedIn.account.id == mai.id && signedIn.account.email?.rawValue == "mai@student.csulb.edu" && signedIn.account.pendingEmail == nil)
        // Signed in by code, she sets a password without one before it; then it signs her in.
        let identity = try await campus.accounts.authenticate(token: signedIn.token.text)
        _ = try await campus.accounts.setPassword(try Password("correct horse battery"), current: nil, for: identity, from: campus.address)
        _ = try await campus.signIn("mai")
        // An account with a password is not signed in by its waiting address's code: its owner typed that
        // address, and until it is confirmed it is not theirs.
        _ = try await campus.signUp("lan", email: "lan@student.csulb.edu")
        try await campus.services.outbox.sendDue()
        let lansCode = try campus.relay.code(to: "lan@student.csulb.edu")
        await #expect(throws: ServiceError.wrongCredentials) {
            try await campus.accounts.signIn(email: try Email("lan@student.csulb.edu"), code: lansCode, from: campus.address)
        }
    }

    @Test("deleting an account removes it and everything about it; counted ballots stay, naming nobody; open votes it started are called off")
    func deletion() async throws {
        let campus = Campus(mail: false)
        let hall = try Place(id: PlaceID("csulb-hsci"), name: "Hall of Science", category: "academic", coordinate: Spot.hallOfScience)
        _ = try await campus.store.upsert([hall])
        for name in ["tess", "ana", "ben"] { _ = try await campus.signUp(name, email: nil) }
        let tess = try await campus.signIn("tess"), ana = try await campus.signIn("ana"), ben = try await campus.signIn("ben")
        // Ana pokes Ben and asks Tess; Tess votes in Ana's vote; Ben in a vote of Tess's, which finishes.
        _ = try await campus.services.friends.sendRequest(from: ana, to: ben.userID)
        _ = try await campus.services.friends.accept(try #require(try await campus.store.friendRequests(of: ben.userID).first).id, by: ben)
        _ = try await campus.services.friends.poke(ben.userID, by: ana)
        _ = try await campus.services.friends.sendRequest(from: ana, to: tess.userID)
        _ = try await campus.services.friends.sharePosition(ana, at: Spot.hallOfScience, accuracy: nil, status: nil)
        let draft = { (participants: Int) in
            VoteDraft(
                subject: try VoteSubject("Lunch?"), options: try VoteOptions(["Pizza", "Tacos"]),
                participants: try ParticipantCount(participants), password: try VotePassword("482913"), duration: .permanent,
                visibility: .public, anonymous: false, location: Spot.hallOfScience)
        }
        let anasVote = try await campus.services.votes.open(try draft(3), by: ana).vote.id
        _ = try await campus.services.votes.castBallot(on: anasVote, password: "482913", option: 1, by: tess, from: campus.address)
        let tessVote = try await campus.services.votes.open(try draft(2), by: tess).vote.id
        _ = try await campus.services.votes.castBallot(on: tessVote, password: "482913", option: 0, by: ana, from: campus.address)
        _ = try await campus.services.votes.castBallot(on: tessVote, password: "482913", option: 1, by: ben, from: campus.address)
        let tallyBefore = try await campus.services.votes.result(of: tessVote, for: tess, from: campus.address).tally

        await #expect(throws: ServiceError.forbidden("The current password is wrong.")) {
            try await campus.accounts.deleteAccount(ana, password: "not my password", from: campus.address)
        }
        try await campus.accounts.deleteAccount(ana, password: "correct horse battery", from: campus.address)

        #expect(try await campus.store.account(id: ana.userID) == nil)
        #expect(try await campus.store.session(ana.session) == nil)
        #expect(try await campus.store.position(of: ana.userID) == nil)
        #expect(try await campus.store.friendships(of: ben.userID).isEmpty)
        #expect(try await campus.store.friendRequests(of: tess.userID).isEmpty)
        let since = Timestamp(millisecondsSince1970: 0)
        #expect(try await campus.store.events(for: ben.userID, after: nil, since: since, limit: 100).allSatisfy { $0.payload.about != ana.userID },
                "her poke and acceptance are gone from Ben's events")
        // Tess's finished vote keeps its tally; Ana's ballot in it names nobody.
        let after = try await campus.services.votes.result(of: tessVote, for: tess, from: campus.address)
        #expect(after.tally == tallyBefore)
        #expect(after.voters?.map(\.name) == [nil, "Ben Test"] || after.voters?.map(\.name) == ["Ben Test", nil])
        // Ana's open vote is called off, and Tess, who voted in it, is told.
        let cancelled = try #require(try await campus.store.vote(id: anasVote))
        #expect(cancelled.initiator == nil)
        guard case .cancelled = cancelled.state(at: campus.clock.now) else { throw StoreError.database("not called off") }
        #expect(try await campus.store.events(for: tess.userID, after: nil, since: since, limit: 100).contains { $0.type == .voteCancelled })
        // The vote still reads for those in it, with no initiator's name.
        #expect(try await campus.services.votes.vote(anasVote, for: tess, from: campus.address).view.initiatorName == nil)
        // Her username is free again.
        _ = try await campus.signUp("ana", email: nil)
    }

    @Test("a vote for verified voters takes no ballot from an account without a confirmed address")
    func verifiedVoters() async throws {
        let campus = Campus()
        let hall = try Place(id: PlaceID("csulb-hsci"), name: "Hall of Science", category: "academic", coordinate: Spot.hallOfScience)
        _ = try await campus.store.upsert([hall])
        let tess = try await campus.verified("tess", email: "tess@csulb.edu")
        let ana = try await campus.verified("ana", email: "ana@student.csulb.edu")
        _ = try await campus.signUp("ben", email: "ben@student.csulb.edu")
        let ben = try await campus.signIn("ben")
        let view = try await campus.services.votes.open(
            VoteDraft(
                subject: try VoteSubject("Quiz now?"), options: try VoteOptions(["Yes", "No"]), participants: try ParticipantCount(3),
                password: try VotePassword("482913"), duration: .permanent, visibility: .public, anonymous: false,
                location: Spot.hallOfScience),
            by: tess)
        #expect(view.vote.verifiedOnly, "with addresses required, votes take verified voters by default")
        _ = try await campus.services.votes.castBallot(on: view.vote.id, password: "482913", option: 0, by: ana, from: campus.address)
        await #expect(throws: ServiceError.forbidden(VoteService<InMemoryStore>.verifiedOnlyRefusal)) {
            try await campus.services.votes.castBallot(on: view.vote.id, password: "482913", option: 0, by: ben, from: campus.address)
        }
    }

    @Test("without a relay, what needs mail is refused, naming the setting; accounts without addresses work as before")
    func noRelay() async throws {
        let campus = Campus(mail: false)
        await #expect(throws: ServiceError.mailUnavailable) { try await campus.signUp("nok", email: "nok@csulb.edu") }
        _ = try await campus.signUp("nok", email: nil)
        let nok = try await campus.signIn("nok")
        await #expect(throws: ServiceError.mailUnavailable) {
            try await campus.accounts.requestSignInCode(to: try Email("nok@csulb.edu"), from: campus.address)
        }
        await #expect(throws: ServiceError.mailUnavailable) {
            try await campus.accounts.update(nok, AccountChanges(email: .some(try Email("nok@csulb.edu"))), from: campus.address)
        }
        #expect(ServiceError.mailUnavailable.message.contains("--smtp-url"))
    }
}

@Suite("The outbox, with a clock the tests move")
struct OutboxRuleTests {
    @Test("a message the relay cannot take now is tried again with growing waits and delivered once")
    func retries() async throws {
        let campus = Campus()
        campus.relay.answer(.retry(after: nil, reason: "421 busy"), .retry(after: nil, reason: "connection refused"))
        _ = try await campus.signUp("nok", email: "nok@csulb.edu")
        #expect(try await campus.services.outbox.sendDue() == 1)
        #expect(try await campus.services.outbox.sendDue() == 0, "not before its wait")
        campus.clock.advance(by: .seconds(10))
        #expect(try await campus.services.outbox.sendDue() == 1)
        campus.clock.advance(by: .seconds(10))
        #expect(try await campus.services.outbox.sendDue() == 0, "the second wait is twice the first")
        campus.clock.advance(by: .seconds(10))
        #expect(try await campus.services.outbox.sendDue() == 1)
        #expect(campus.relay.mails.count == 1)
        campus.clock.advance(by: .seconds(3600))
        #expect(try await campus.services.outbox.sendDue() == 0, "delivered once")
        #expect(try await campus.store.pendingOutboxCount() == 0)
    }

    @Test("a message refused for good is dropped, and so is a code whose lifetime ends before the relay takes it")
    func drops() async throws {
        let campus = Campus()
        campus.relay.answer(.failed(reason: "550 no such user"))
        _ = try await campus.signUp("nok", email: "nok@csulb.edu")
        #expect(try await campus.services.outbox.sendDue() == 1)
        #expect(try await campus.store.pendingOutboxCount() == 0)
        campus.relay.answer(.misconfigured(reason: "530 authentication required"))
        // A try a minute at most, for as long as the code works.
        for _ in 0..<20 { campus.relay.answer(.retry(after: nil, reason: "down")) }
        let nok = try await campus.signIn("nok")
        try await campus.accounts.requestEmailVerification(nok, from: campus.address)
        for _ in 0..<20 {
            try await campus.services.outbox.sendDue()
            campus.clock.advance(by: .seconds(60))
        }
        #expect(try await campus.store.pendingOutboxCount() == 0, "dropped once its code could no longer work")
        #expect(campus.relay.mails.isEmpty)
    }

    @Test("a claim left by a sender that stopped is taken over once its lease runs out")
    func lapsedClaims() async throws {
        let campus = Campus()
        _ = try await campus.signUp("nok", email: "nok@csulb.edu")
        let claimed = try await campus.store.claimOutbox(at: campus.clock.now, limit: 10, rules: .standard)
        #expect(claimed.count == 1)
        #expect(try await campus.services.outbox.sendDue() == 0, "held by the claim")
        campus.clock.advance(by: OutboxRules.standard.claim)
        #expect(try await campus.services.outbox.sendDue() == 1)
        #expect(campus.relay.mails.count == 1)
        // The first sender's late outcome does not undo the second's.
        var late = try #require(claimed.first)
        late.settle(.retry(after: nil, reason: "late"), at: campus.clock.now, rules: .standard)
        #expect(try await campus.store.settleOutbox(late, attempt: 1) == false)
        #expect(try await campus.store.pendingOutboxCount() == 0)
    }

    @Test("a sender woken during the gathering after a pass looks again when it ends: not sooner, and without waiting for the poll",
          .timeLimit(.minutes(1)))
    func wakesAreGathered() async throws {
        var rules = OutboxRules.standard
        rules.gathering = .seconds(1)
        rules.pollInterval = .seconds(600)
        let campus = Campus(outbox: rules)
        let sender = Task { await campus.services.outbox.run { error in Issue.record("a pass failed: \(error)") } }
        defer { sender.cancel() }
        _ = try await campus.signUp("pim", email: "pim@example.org")
        try await Self.waitUntil { campus.relay.mails.count == 1 }
        let first = ContinuousClock.now
        _ = try await campus.signUp("tam", email: "tam@example.org")
        try await Self.waitUntil { campus.relay.mails.count == 2 }
        // The second pass begins a second after the first ended, which was after the first mail was handed over
        // and seen here; half of it leaves the test room for a busy machine. The poll is ten minutes off.
        #expect(ContinuousClock.now - first >= .milliseconds(500))
        #expect(campus.relay.mails.map(\.mail.to.rawValue) == ["pim@example.org", "tam@example.org"])
    }

    /// Waits, yielding, until `condition` holds; a sender that never looks again leaves the test to its time limit.
    private static func waitUntil(_ condition: () -> Bool) async throws {
        while !condition() { try await Task.sleep(for: .milliseconds(5)) }
    }
}
