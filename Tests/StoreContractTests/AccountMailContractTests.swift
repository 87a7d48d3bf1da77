import Foundation
import GeoCore
import Logging
import Synchronization
import Testing
import VicinityCore
import VicinitySQL
import VicinitySpatiaLite

/// A code for the account, as the service would keep it.
private func code(for account: Account, _ purpose: CodePurpose = .verifyEmail, email: String = "pim@student.csulb.edu", tries: Int = 5) throws -> StoredCode {
    StoredCode(
        account: account.id, purpose: purpose, email: try Email(email),
        hash: PasswordHash(encoded: "$2b$04$" + RandomID.make() + "abcdefghijklmnopqrstuvwxyzABCDEFG"), createdAt: epoch,
        expiresAt: epoch + .seconds(900), triesLeft: tries)
}

private func mail(to address: String, for account: Account?, at time: Timestamp = epoch) throws -> OutboxMessage {
    OutboxMessage(
        account: account?.id, payload: .mail(Mail(to: try Email(address), subject: "Your code", body: "123456\n\nไทย 🙂")),
        createdAt: time, expiresAt: time + .seconds(900))
}

@Suite("Codes, the outbox and deletion: store contract")
struct AccountMailContractTests {
    @Test("a code is kept per account and purpose, a new one replaces it, each try is spent once however many race, and it is consumed once",
          arguments: StoreKind.available)
    func codes(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        var pim = try account("pim")
        pim.pendingEmail = try Email("pim@student.csulb.edu")
        let first = try code(for: pim)
        try await store.createAccount(StoredAccount(account: pim, passwordHash: nil), code: first, message: try mail(to: "pim@student.csulb.edu", for: pim))
        #expect(try await store.storedAccount(id: pim.id)?.passwordHash == nil, "an account may have no password")
        let second = try code(for: pim)
        try await store.issueCode(second, message: try mail(to: "pim@student.csulb.edu", for: pim))
        #expect(try await store.consumeCode(first) == false, "a newer code replaced it")

        // Eight guesses race for five tries: five get the code, three nothing.
        let pimID = pim.id
        let spent = try await withThrowingTaskGroup(of: StoredCode?.self) { group in
            for index in 0..<8 { group.addTask { try await subject.store(for: index).spendCodeTry(of: pimID, purpose: .verifyEmail, at: epoch) } }
            return try await group.reduce(into: [StoredCode]()) { if let code = $1 { $0.append(code) } }
        }
        #expect(spent.count == 5)
        #expect(Set(spent.map(\.triesLeft)) == [1, 2, 3, 4, 5], "each try saw the count before it")
        #expect(try await store.spendCodeTry(of: pim.id, purpose: .verifyEmail, at: epoch) == nil)
        #expect(try await store.consumeCode(second), "spent tries do not stop the one that matched")

        // Consuming a verify-email code verifies its address; an expired code gives no try.
        let third = try code(for: pim)
        try await store.issueCode(third, message: try mail(to: "pim@student.csulb.edu", for: pim))
        #expect(try await store.spendCodeTry(of: pim.id, purpose: .verifyEmail, at: epoch + .seconds(900)) == nil, "expired")
        #expect(try await store.consumeCode(third))
        #expect(try await store.account(id: pim.id)?.email?.rawValue == "pim@student.csulb.edu")
        #expect(try await store.account(id: pim.id)?.pendingEmail == nil)
        #expect(try await store.credentials(emailKey: "pim@student.csulb.edu")?.account.id == pim.id)
        #expect(try await store.consumeCode(third) == false, "consumed once")

        // Another account's code for an address already verified is refused when consumed, changing nothing.
        var nok = try account("nok")
        nok.pendingEmail = try Email("PIM@student.csulb.edu")
        let theirs = try code(for: nok, email: "PIM@student.csulb.edu")
        try await store.createAccount(StoredAccount(account: nok, passwordHash: someHash), code: theirs, message: nil)
        await #expect(throws: ServiceError.conflict(.emailTaken)) { try await store.consumeCode(theirs) }
        #expect(try await store.account(id: nok.id)?.email == nil)
    }

    @Test("each waiting message is claimed by one sender at a time, whichever store it goes through, until its claim lapses; a late settle changes nothing",
          arguments: StoreKind.available)
    func claims(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let messages = try (0..<30).map { try mail(to: "student\($0)@csulb.edu", for: nil, at: epoch + .milliseconds(Int64($0))) }
        try await store.enqueue(messages)
        #expect(try await store.pendingOutboxCount() == 30)
        let rules = OutboxRules.standard
        let claimed = try await withThrowingTaskGroup(of: [OutboxMessage].self) { group in
            for index in 0..<8 { group.addTask { try await subject.store(for: index).claimOutbox(at: epoch + .seconds(1), limit: 7, rules: rules) } }
            return try await group.reduce(into: [OutboxMessage]()) { $0 += $1 }
        }
        let rest = try await store.claimOutbox(at: epoch + .seconds(1), limit: 100, rules: rules)
        #expect((claimed + rest).count == 30)
        #expect(Set((claimed + rest).map(\.id)) == Set(messages.map(\.id)), "every message once")
        #expect(try await store.claimOutbox(at: epoch + .seconds(2), limit: 100, rules: rules).isEmpty, "claimed ones wait for their lease")

        // Settled as the sender left it: delivered, its payload gone; retried, due later.
        var sent = try #require(claimed.first), retried = try #require(claimed.last)
        sent.settle(.delivered, at: epoch + .seconds(3), rules: rules)
        retried.settle(.retry(after: .seconds(120), reason: "451 later"), at: epoch + .seconds(3), rules: rules)
        #expect(try await store.settleOutbox(sent, attempt: 1))
        #expect(try await store.settleOutbox(retried, attempt: 1))
        #expect(try await store.settleOutbox(sent, attempt: 1) == false, "settled once")
        #expect(try await store.claimOutbox(at: epoch + .seconds(120), limit: 100, rules: rules).isEmpty)
        let again = try await store.claimOutbox(at: epoch + .seconds(123), limit: 100, rules: rules)
        #expect(again.map(\.id) == [retried.id] && again.first?.attempts == 2 && again.first?.lastError == "451 later")
        // The claims that lapsed are taken over, and the first sender's late word changes nothing.
        let lapsed = try await store.claimOutbox(at: epoch + .seconds(1) + rules.claim, limit: 100, rules: rules)
        #expect(lapsed.count == 28 && lapsed.allSatisfy { $0.attempts == 2 })
        #expect(try await store.settleOutbox(try #require(claimed.dropFirst().first), attempt: 1) == false)
        #expect(try await store.pendingOutboxCount() == 29)
        // Done messages are pruned once old.
        #expect(try await store.pruneOutbox(settledBefore: epoch + .seconds(4)) == 1)
    }

    @Test("accounts made by code are found by their waiting address ignoring case, newest first; not one with a password, nor once the address is confirmed",
          arguments: StoreKind.available)
    func waitingAddresses(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        var made: [Account] = []
        for (index, (name, password)) in [("older", nil), ("newer", nil), ("typed", someHash)].enumerated() {
            var person = try account(name, at: epoch + .seconds(Int64(index)))
            person.pendingEmail = try Email(index == 1 ? "Mai@Student.csulb.edu" : "mai@student.csulb.edu")
            try await store.createAccount(StoredAccount(account: person, passwordHash: password), code: nil, message: nil)
            made.append(person)
        }
        let found = try await store.passwordless(pendingEmailKey: "mai@student.csulb.edu", limit: 5)
        #expect(found.map(\.account.id) == [made[1].id, made[0].id], "newest first, without the one with a password")
        #expect(try await store.passwordless(pendingEmailKey: "mai@student.csulb.edu", limit: 1).map(\.account.id) == [made[1].id])
        #expect(try await store.passwordless(pendingEmailKey: "nobody@student.csulb.edu", limit: 5).isEmpty)
        let confirming = try code(for: made[1], email: "Mai@Student.csulb.edu")
        try await store.issueCode(confirming, message: try mail(to: "Mai@Student.csulb.edu", for: made[1]))
        #expect(try await store.consumeCode(confirming))
        #expect(try await store.passwordless(pendingEmailKey: "mai@student.csulb.edu", limit: 5).map(\.account.id) == [made[0].id])
    }

    @Test("when mail goes through again, messages waiting for it after a failed try become due now; those a sender holds, and those never tried, are left as they are",
          arguments: StoreKind.available)
    func hurry(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let rules = OutboxRules.standard
        let messages = try (0..<3).map { try mail(to: "student\($0)@csulb.edu", for: nil, at: epoch + .milliseconds(Int64($0))) }
        try await store.enqueue(messages)
        var claimed = try await store.claimOutbox(at: epoch + .seconds(1), limit: 2, rules: rules)
        #expect(claimed.count == 2)
        claimed[0].settle(.retry(after: nil, reason: "connection refused"), at: epoch + .seconds(2), rules: rules)
        #expect(try await store.settleOutbox(claimed[0], attempt: 1))
        // The third was never tried, and is due anyway; the second is held by its sender.
        let now = epoch + .seconds(3)
        #expect(try await store.claimOutbox(at: now, limit: 5, rules: rules).map(\.id) == [messages[2].id])
        #expect(try await store.hurryOutbox(.mail, at: now) == 1)
        let due = try await store.claimOutbox(at: now, limit: 5, rules: rules)
        #expect(due.map(\.id) == [claimed[0].id] && due.first?.attempts == 2)
        #expect(try await store.hurryOutbox(.mail, at: now) == 0, "nothing else waits")
    }

    @Test("deleting an account removes it and what is about it, keeps ballots and votes naming nobody, and calls off its open votes",
          arguments: StoreKind.available)
    func deletion(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let ana = try account("ana"), ben = try account("ben"), tess = try account("tess")
        for person in [ana, ben, tess] { try await store.createAccount(person, passwordHash: someHash) }
        try await store.createSession(Session(digest: SessionToken.random().digest, userID: ana.id, createdAt: epoch, expiresAt: epoch + .seconds(60)))
        try await store.setPosition(position(of: ana.id))
        _ = try await store.sendFriendRequest(FriendRequest(id: .random(), from: ana.id, to: ben.id, createdAt: epoch))
        _ = try await store.sendFriendRequest(FriendRequest(id: .random(), from: ben.id, to: ana.id, createdAt: epoch))
        _ = try await store.sendFriendRequest(FriendRequest(id: .random(), from: ana.id, to: tess.id, createdAt: epoch))
        _ = try await store.appendEvents([.poke(to: ben.id, from: ana.summary, at: epoch), .poke(to: ana.id, from: ben.summary, at: epoch),
                                          .poke(to: ben.id, from: tess.summary, at: epoch)])
        try await store.issueCode(try code(for: ana, email: "ana@csulb.edu"), message: try mail(to: "ana@csulb.edu", for: ana))
        let hers = try makeVote(by: ana.id, participants: 3)
        let theirs = try makeVote(by: tess.id, participants: 2)
        for vote in [hers, theirs] { #expect(try await store.createVote(vote, passwordHash: someHash)) }
        _ = try await store.castBallot(makeBallot(hers, by: tess))
        _ = try await store.castBallot(makeBallot(theirs, by: ana, option: 1))
        _ = try await store.castBallot(makeBallot(theirs, by: ben))
        let now = epoch + .seconds(120)

        #expect(try await store.deleteAccount(ana.id, at: now, cancel: { stored in
            guard (try? stored.vote.apply(.cancel, at: now)) != nil else { return false }
            return stored.claimAnnouncement(at: now)
        }, announcements: { vote, ballots in VoteAnnouncements.events(of: vote, ballots: ballots, at: now) }))
        #expect(try await store.deleteAccount(ana.id, at: now, cancel: { _ in false }, announcements: { _, _ in [] }) == false)

        #expect(try await store.account(id: ana.id) == nil)
        #expect(try await store.position(of: ana.id) == nil)
        #expect(try await store.friendships(of: ben.id).isEmpty)
        #expect(try await store.friendRequests(of: tess.id).isEmpty)
        #expect(try await store.spendCodeTry(of: ana.id, purpose: .verifyEmail, at: epoch) == nil)
        #expect(try await store.pendingOutboxCount() == 0)
        let bens = try await store.events(for: ben.id, after: nil, since: epoch, limit: 10)
        #expect(bens.count == 1 && bens.first?.payload.about == tess.id, "her poke is gone, Tess's stays")
        // Her ballot in Tess's finished vote still counts, naming nobody; her own vote is called off and kept.
        let ballots = try await store.ballots(of: theirs.id)
        #expect(ballots.count == 2 && ballots.filter { $0.voter == nil && $0.voterName == nil && $0.option == 1 }.count == 1)
        #expect(try await store.vote(id: theirs.id)?.ballotsCast == 2)
        let called = try #require(try await store.vote(id: hers.id))
        #expect(called.initiator == nil && called.cancelledAt == now)
        let told = try await store.events(for: tess.id, after: nil, since: epoch, limit: 10)
        #expect(told.map(\.type) == [.voteCancelled], "Tess, who voted in it, is told")
        #expect(try await store.claimAnnouncements(at: now + .seconds(1), limit: 10).map(\.id) == [theirs.id],
                "the cancelling was told once, with the deletion; Tess's finished vote waits for its own announcement")
    }

    @Test("a SpatiaLite file keeps nothing of a deleted account: not its username, not its address, in the file or its log")
    func nothingLeftInTheFile() async throws {
        let file = TemporaryFile()
        let store = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"))
        defer { try? store.close() }
        var gone = try account("zebulon_q", first: "Zebulon", last: "Quixotic")
        gone.email = try Email("zebulon.quixotic@student.csulb.edu")
        let stays = try account("stays")
        try await store.createAccount(StoredAccount(account: gone, passwordHash: someHash), code: nil, message: nil)
        try await store.createAccount(stays, passwordHash: someHash)
        _ = try await store.appendEvents([.poke(to: stays.id, from: gone.summary, at: epoch)])
        try await store.issueCode(try code(for: gone, email: "zebulon.quixotic@student.csulb.edu"),
                                  message: try mail(to: "zebulon.quixotic@student.csulb.edu", for: gone))
        for needle in ["zebulon_q", "zebulon.quixotic@student.csulb.edu"] {
            #expect(try file.contains(needle), "the test finds \(needle) while the account exists")
        }
        #expect(try await store.deleteAccount(gone.id, at: epoch, cancel: { _ in false }, announcements: { _, _ in [] }))
        for needle in ["zebulon_q", "zebulon.quixotic@student.csulb.edu", "Quixotic"] {
            #expect(try !file.contains(needle), "\(needle) is still in the database's files")
        }
        #expect(try await store.account(id: stays.id) == stays)
    }
}

extension TemporaryFile {
    /// Whether the database file, or its write-ahead log, holds `text`'s bytes anywhere (free pages included).
    func contains(_ text: String) throws -> Bool {
        let needle = Data(text.utf8)
        for suffix in ["", "-wal"] {
            guard let bytes = FileManager.default.contents(atPath: path + suffix) else { continue }
            if bytes.range(of: needle) != nil { return true }
        }
        return false
    }
}
