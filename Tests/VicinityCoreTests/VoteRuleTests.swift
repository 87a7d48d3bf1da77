import Foundation
import GeoCore
import Synchronization
import Testing
import VicinityBcrypt
import VicinityCore

/// Services over an in-memory store with a manual clock, with helpers to make people and votes.
private struct Room {
    let clock = ManualClock()
    let store = InMemoryStore()
    let services: Services<InMemoryStore>
    let address = ClientAddress("198.51.100.7")

    init(hasher: any PasswordHasher = hasher, settings: ServiceSettings = .standard) async throws {
        services = Services(stores: store, clock: clock, hasher: hasher, settings: settings)
        let hall = try Place(id: PlaceID("csulb-hsci"), name: "Hall of Science", category: "academic", coordinate: Spot.hallOfScience)
        _ = try await store.upsert([hall])
    }

    var votes: VoteService<InMemoryStore> { services.votes }

    func person(_ username: String, first: String? = nil, last: String = "Test") async throws -> Identity {
        let request = SignUp(
            username: try Username(username), password: try Password("correct horse battery"),
            firstName: try PersonName(first ?? username.capitalized, field: "first_name"),
            lastName: try PersonName(last, field: "last_name"), email: nil)
        _ = try await services.accounts.signUp(request, from: address)
        let signedIn = try await services.accounts.signIn(login: username, password: "correct horse battery", from: address)
        return try await services.accounts.authenticate(token: signedIn.token.text)
    }

    func open(
        by identity: Identity, participants: Int = 3, duration: String = "15m", visibility: VoteVisibility = .public,
        anonymous: Bool = false, at location: Coordinate? = Spot.hallOfScience, options: [String] = ["Pizza", "Tacos", "Pho"]
    ) async throws -> VoteView {
        let draft = VoteDraft(
            subject: try VoteSubject("Lunch after the lab?"), options: try VoteOptions(options),
            participants: try ParticipantCount(participants), password: try VotePassword("482913"),
            duration: try VoteDuration(duration), visibility: visibility, anonymous: anonymous, location: location)
        return try await votes.open(draft, by: identity)
    }

    /// Everything recorded for the person, oldest first; the initiator's `vote_progress` only when asked for, since
    /// most tests here are about how votes end.
    func events(of identity: Identity, withProgress: Bool = false) async throws -> [Event] {
        try await store.events(for: identity.userID, after: nil, since: Timestamp(millisecondsSince1970: 0), limit: 1000)
            .filter { withProgress || $0.type != .voteProgress }
    }

    @discardableResult
    func vote(_ id: VoteID, _ option: Int, by identity: Identity, password: String = "482913") async throws -> BallotReceipt {
        try await votes.castBallot(on: id, password: password, option: option, by: identity, from: address)
    }
}

@Suite("Vote input rules")
struct VoteInputTests {
    @Test("vote ids use no look-alike characters, read in either case, and are random")
    func voteIDs() throws {
        let alphabet = String(decoding: VoteID.alphabet, as: UTF8.self)
        for lookAlike in "0O1IlLU" { #expect(!alphabet.contains(lookAlike)) }
        #expect(VoteID("k7m3qx")?.rawValue == "K7M3QX")
        #expect(VoteID("K7m3Qx") == VoteID("k7M3qX"))
        for bad in ["K7M3Q0", "K7M3QO", "K7M3Q1", "K7M3QI", "K7M3QL", "K7M3Q", "K7M3QXX", "K7M3Q-", "K7M3QÄ", ""] {
            #expect(VoteID(bad) == nil, "\(bad)")
        }
        let ids = (0..<20_000).map { _ in VoteID.random() }
        #expect(ids.allSatisfy { VoteID($0.rawValue) == $0 && !VoteID.reserved.contains($0.rawValue) })
        #expect(Set(ids).count >= 19_990, "collisions among 20,000 of 729 million ids are rare")
        // Not sequential: consecutive ids differ in their first character about 29 times in 30.
        let firstChanges = zip(ids, ids.dropFirst()).count { $0.rawValue.first != $1.rawValue.first }
        #expect(firstChanges > 18_000)
    }

    @Test("subject, options, participants, password and duration are checked with the field named")
    func drafts() throws {
        #expect(throws: ValidationError(field: "subject", message: "must not be empty")) { try VoteSubject("   ") }
        #expect(throws: ValidationError(field: "subject", message: "must be at most 200 characters")) {
            try VoteSubject(String(repeating: "é", count: 201))
        }
        #expect(try VoteSubject("  Lunch?  ").rawValue == "Lunch?")
        #expect(throws: ValidationError(field: "options", message: "must hold 2 to 20 options, not 1")) { try VoteOptions(["Only"]) }
        #expect(throws: ValidationError(field: "options", message: "must hold 2 to 20 options, not 21")) {
            try VoteOptions((0...20).map { "Option \($0)" })
        }
        #expect(throws: ValidationError(field: "options[2]", message: "reads the same as options[0]")) {
            try VoteOptions(["Café", "Tea", "CAFE"])
        }
        #expect(throws: ValidationError(field: "options[1]", message: "must not be empty")) { try VoteOptions(["Yes", " "]) }
        #expect(try VoteOptions(["👍", "👎"]).texts == ["👍", "👎"])
        #expect(throws: ValidationError(field: "participants", message: "must be an integer in [1, 1000]")) { try ParticipantCount(0) }
        #expect(throws: ValidationError(field: "participants", message: "must be an integer in [1, 1000]")) { try ParticipantCount(1001) }
        for bad in ["12345", "1234567", "12345a", "１２３４５６", " 12345", "123 456", "-12345"] {
            #expect(throws: ValidationError(field: "password", message: "must be exactly 6 digits 0-9")) { try VotePassword(bad) }
        }
        #expect(try VotePassword("000000").description == "VotePassword(redacted)")
        #expect(try VoteDuration("5m") == .minutes(5))
        #expect(try VoteDuration("permanent") == .permanent)
        for bad in ["10m", "05m", "60", "1h", "Permanent", "m", ""] {
            #expect(throws: ValidationError(field: "duration", message: "must be one of 5m, 15m, 30m, 60m, permanent")) {
                try VoteDuration(bad)
            }
        }
    }
}

/// bcrypt that counts its checks.
private final class CountingHasher: PasswordHasher {
    let verifications = Mutex(0)

    func hash(_ password: Password) async throws -> PasswordHash { try await hasher.hash(password) }

    func verify(_ password: String, against hash: PasswordHash) async throws -> Bool {
        verifications.withLock { $0 += 1 }
        return try await hasher.verify(password, against: hash)
    }
}

@Suite("Vote rules")
struct VoteRuleTests {
    @Test("bcrypt checks a vote's password until a ballot proves it; later ballots, right or wrong, are checked in memory")
    func passwordMemo() async throws {
        let counting = CountingHasher()
        let room = try await Room(hasher: counting)
        let teacher = try await room.person("teacher")
        var students: [Identity] = []
        for index in 0..<6 { students.append(try await room.person("student\(index)")) }
        let id = try await room.open(by: teacher, participants: 10).vote.id
        let other = try await room.open(by: teacher, participants: 10).vote.id
        let signIns = counting.verifications.withLock { $0 }
        await #expect(throws: ServiceError.wrongVotePassword(triesLeft: 4)) {
            try await room.vote(id, 0, by: students[0], password: "111111")
        }
        #expect(counting.verifications.withLock { $0 } == signIns + 1, "no proof yet: bcrypt decides")
        try await room.vote(id, 0, by: students[1])
        #expect(counting.verifications.withLock { $0 } == signIns + 2)
        for student in students[2...4] { try await room.vote(id, 1, by: student) }
        await #expect(throws: ServiceError.wrongVotePassword(triesLeft: 4)) {
            try await room.vote(id, 0, by: students[5], password: "482914")
        }
        #expect(counting.verifications.withLock { $0 } == signIns + 2, "proved once, checked in memory after")
        try await room.vote(other, 0, by: students[5])
        #expect(counting.verifications.withLock { $0 } == signIns + 3, "each vote is proved on its own")
        #expect(try await room.votes.vote(id, for: teacher, from: room.address).view.vote.ballotsCast == 4)
    }

    @Test("a burst of right passwords for a new vote waits for one bcrypt check instead of each starting one")
    func passwordBurst() async throws {
        let counting = CountingHasher()
        let room = try await Room(hasher: counting)
        let teacher = try await room.person("teacher")
        var students: [Identity] = []
        for index in 0..<20 { students.append(try await room.person("student\(index)")) }
        let id = try await room.open(by: teacher, participants: 30).vote.id
        let before = counting.verifications.withLock { $0 }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for student in students { group.addTask { try await room.vote(id, 0, by: student) } }
            try await group.waitForAll()
        }
        #expect(counting.verifications.withLock { $0 } == before + 1)
        #expect(try await room.votes.vote(id, for: teacher, from: room.address).view.vote.ballotsCast == 20)
    }

    @Test("a timed vote is open until closes_at and finished from that instant, for every reader, without a timer")
    func finishedByTime() async throws {
        let room = try await Room()
        let teacher = try await room.person("teacher"), ana = try await room.person("ana")
        let opened = try await room.open(by: teacher, duration: "5m")
        let id = opened.vote.id
        #expect(opened.vote.closesAt == opened.vote.createdAt + .seconds(300))
        #expect(opened.state == .open)
        try await room.vote(id, 1, by: ana)
        room.clock.advance(by: .milliseconds(299_999))
        #expect(try await room.votes.vote(id, for: teacher, from: room.address).view.state == .open)
        await #expect(throws: ServiceError.conflict(.voteNotFinished(ballotsCast: 1, participants: 3))) {
            try await room.votes.result(of: id, for: teacher, from: room.address)
        }
        room.clock.advance(by: .milliseconds(1))
        let closesAt = try #require(opened.vote.closesAt)
        #expect(try await room.votes.vote(id, for: teacher, from: room.address).view.state == .finished(.timeUp, at: closesAt))
        let ben = try await room.person("ben")
        await #expect(throws: ServiceError.conflict(.voteFinished)) { try await room.vote(id, 0, by: ben) }
        let result = try await room.votes.result(of: id, for: ana, from: room.address)
        #expect(result.tally == [0, 1, 0])
        #expect(result.winners == [1])
        #expect(result.yourBallot?.option == 1)
    }

    @Test("a vote finishes with its last participant's ballot; later ballots are refused")
    func finishedByCount() async throws {
        let room = try await Room()
        let teacher = try await room.person("teacher")
        let ana = try await room.person("ana"), ben = try await room.person("ben"), cy = try await room.person("cyd")
        let id = try await room.open(by: teacher, participants: 2, duration: "60m").vote.id
        let first = try await room.vote(id, 0, by: ana)
        #expect(first.view.state == .open && first.view.vote.ballotsCast == 1)
        room.clock.advance(by: .seconds(30))
        let last = try await room.vote(id, 2, by: ben)
        #expect(last.view.state == .finished(.allVoted, at: room.clock.now))
        await #expect(throws: ServiceError.conflict(.voteFinished)) { try await room.vote(id, 1, by: cy) }
        #expect(try await room.votes.vote(id, for: teacher, from: room.address).view.vote.ballotsCast == 2)
    }

    @Test("each ballot on an open vote tells its initiator how many have voted, never who or what, and nobody else; the last tells the finish instead")
    func progressToInitiator() async throws {
        let room = try await Room()
        let teacher = try await room.person("teacher")
        let ana = try await room.person("ana"), ben = try await room.person("ben"), cy = try await room.person("cyd")
        let vote = try await room.open(by: teacher, participants: 3, duration: "60m").vote
        try await room.vote(vote.id, 0, by: ana)
        try await room.vote(vote.id, 1, by: ben)
        let progress = try await room.events(of: teacher, withProgress: true).filter { $0.type == .voteProgress }
        #expect(progress.map(\.payload) == [1, 2].map { cast in
            .voteProgress(VoteCountNotice(vote: vote.id, subject: vote.subject.rawValue, ballotsCast: cast, participants: 3))
        })
        for voter in [ana, ben, cy] { #expect(try await room.events(of: voter).isEmpty) }
        try await room.vote(vote.id, 2, by: cy)
        let types = try await room.events(of: teacher, withProgress: true).map(\.type)
        #expect(types == [.voteProgress, .voteProgress, .voteFinished])

        // The initiator's own ballot is no news to them.
        let own = try await room.open(by: teacher, participants: 2, duration: "60m").vote
        try await room.vote(own.id, 0, by: teacher)
        #expect(try await room.events(of: teacher, withProgress: true).filter { $0.type == .voteProgress }.count == 2)
    }

    @Test("a permanent vote has no closing time and stays open until every participant has voted")
    func permanent() async throws {
        let room = try await Room()
        let teacher = try await room.person("teacher"), ana = try await room.person("ana")
        let opened = try await room.open(by: teacher, participants: 2, duration: "permanent")
        #expect(opened.vote.closesAt == nil)
        try await room.vote(opened.vote.id, 0, by: ana)
        room.clock.advance(by: .seconds(400 * 86_400))
        #expect(try await room.votes.vote(opened.vote.id, for: teacher, from: room.address).view.state == .open)
        #expect(try await room.votes.announceFinishes() == 0)
        try await room.vote(opened.vote.id, 0, by: teacher)
        #expect(try await room.votes.vote(opened.vote.id, for: teacher, from: room.address).view.state == .finished(.allVoted, at: room.clock.now))
    }

    @Test("the place is the one given, else my current position; neither, or only a stale one, is a clear error")
    func place() async throws {
        let room = try await Room()
        let teacher = try await room.person("teacher")
        let message = "is required: you share no current position to hold the vote at"
        let missing = ServiceError.invalid([ValidationError(field: "lat", message: message), ValidationError(field: "lon", message: message)])
        await #expect(throws: missing) { try await room.open(by: teacher, at: nil) }
        _ = try await room.services.friends.sharePosition(teacher, at: Spot.library, accuracy: nil, status: nil)
        let here = try await room.open(by: teacher, at: nil)
        #expect(here.vote.location == Spot.library)
        let given = try await room.open(by: teacher, at: Spot.hallOfScience)
        #expect(given.vote.location == Spot.hallOfScience)
        #expect(given.vote.label == "Around Hall of Science")
        room.clock.advance(by: .seconds(24 * 3600 + 1))
        await #expect(throws: missing) { try await room.open(by: teacher, at: nil) }
    }

    @Test("in privacy mode a vote needs a place given: one opened where the initiator is would show where they are")
    func privacyModeNeedsAPlace() async throws {
        let room = try await Room()
        let teacher = try await room.person("teacher")
        _ = try await room.services.friends.sharePosition(teacher, at: Spot.library, accuracy: nil, status: nil)
        _ = try await room.services.accounts.update(teacher, AccountChanges(privacyMode: true), from: room.address)
        let message = "is required while privacy mode is on: a vote opened where you are would show everyone where you are"
        await #expect(throws: ServiceError.invalid([ValidationError(field: "lat", message: message), ValidationError(field: "lon", message: message)])) {
            try await room.open(by: teacher, at: nil)
        }
        #expect(try await room.votes.nearby(around: Spot.library, radius: .standard, limit: .standard).isEmpty, "nothing was opened")
        let given = try await room.open(by: teacher, at: Spot.hallOfScience)
        #expect(given.vote.location == Spot.hallOfScience)
    }

    @Test("vote ids that name no vote are limited per person and per address, counted exactly under concurrency")
    func unknownLookups() async throws {
        let room = try await Room()
        let teacher = try await room.person("teacher"), scanner = try await room.person("scanner")
        let id = try await room.open(by: teacher).vote.id
        // 40 guesses at once from one person: 20 are looked up and miss, 20 are refused before the store.
        let outcomes = await withTaskGroup(of: ServiceError?.self) { group in
            for _ in 0..<40 {
                group.addTask {
                    do {
                        _ = try await room.votes.vote(.random(), for: scanner, from: room.address)
                        return nil
                    } catch { return error as? ServiceError }
                }
            }
            return await group.reduce(into: [ServiceError?]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 == .notFound(.vote) }.count == 20)
        #expect(outcomes.filter { if case .rateLimited(_, .voteLookups) = $0 { true } else { false } }.count == 20)
        // Now even a real id is refused to the scanner (the answer says nothing of it), not to others.
        await #expect(throws: ServiceError.rateLimited(retryAfter: .seconds(3600), .voteLookups)) {
            try await room.votes.vote(id, for: scanner, from: room.address)
        }
        #expect(try await room.votes.vote(id, for: teacher, from: room.address).view.vote.id == id)
        // Known ids never count: the teacher reads her vote as often as she likes.
        for _ in 0..<50 { _ = try await room.votes.vote(id, for: teacher, from: room.address) }
        room.clock.advance(by: .seconds(3600))
        #expect(try await room.votes.vote(id, for: scanner, from: room.address).view.vote.id == id)

        // Per address, over every account: 100 misses an hour, and one more per account that had none.
        var people: [Identity] = []
        for index in 0..<6 { people.append(try await room.person("person\(index)")) }
        var misses = 0
        for person in people {
            for _ in 0..<20 {
                do { _ = try await room.votes.vote(.random(), for: person, from: room.address) } catch ServiceError.notFound(.vote) {
                    misses += 1
                } catch {}
            }
        }
        #expect(misses == 101, "the address's 100, and the first probe of the sixth account, which had not missed")
        // The address has used its allowance: those who missed are refused even a real id, elsewhere they are not.
        await #expect(throws: ServiceError.rateLimited(retryAfter: .seconds(3600), .voteLookupsFromAddress)) {
            try await room.votes.vote(id, for: people[5], from: room.address)
        }
        #expect(try await room.votes.vote(id, for: people[5], from: ClientAddress("203.0.113.9")).view.vote.id == id)
        // Someone behind the same address who never missed still reads and votes.
        #expect(try await room.votes.vote(id, for: teacher, from: room.address).view.vote.id == id)
        // A fresh account gets one probe, which counts; its second is refused.
        let fresh = try await room.person("fresh")
        await #expect(throws: ServiceError.notFound(.vote)) { try await room.votes.vote(.random(), for: fresh, from: room.address) }
        await #expect(throws: ServiceError.rateLimited(retryAfter: .seconds(3600), .voteLookupsFromAddress)) {
            try await room.votes.vote(id, for: fresh, from: room.address)
        }
    }

    @Test("one ballot per person: a second is refused and not counted, whatever its option")
    func oneBallotEach() async throws {
        let room = try await Room()
        let teacher = try await room.person("teacher"), ana = try await room.person("ana")
        let id = try await room.open(by: teacher).vote.id
        try await room.vote(id, 0, by: ana)
        await #expect(throws: ServiceError.conflict(.alreadyVoted)) { try await room.vote(id, 1, by: ana) }
        await #expect(throws: ServiceError.conflict(.alreadyVoted)) { try await room.vote(id, 1, by: ana, password: "000000") }
        #expect(try await room.votes.vote(id, for: teacher, from: room.address).view.vote.ballotsCast == 1)
        await #expect(throws: ServiceError.invalid([ValidationError(field: "option", message: "must be an index into the vote's options, 0 to 2")])) {
            try await room.vote(id, 3, by: teacher)
        }
        await #expect(throws: ServiceError.notFound(.vote)) { try await room.vote(.random(), 0, by: teacher) }
    }

    @Test("wrong passwords count down the tries left, 4, 3, 2, 1; the fifth locks this person out of this vote for 15 minutes, the right one too; then it works")
    func lockout() async throws {
        let room = try await Room()
        let teacher = try await room.person("teacher"), ana = try await room.person("ana"), ben = try await room.person("ben")
        let id = try await room.open(by: teacher, duration: "60m").vote.id
        let other = try await room.open(by: teacher, duration: "60m").vote.id
        for left in [4, 3, 2, 1] {
            await #expect(throws: ServiceError.wrongVotePassword(triesLeft: left)) { try await room.vote(id, 0, by: ana, password: "111111") }
        }
        #expect(room.clock.sleeps == [.seconds(1), .seconds(2)], "failures 3 and 4 are answered late")
        let locked = ServiceError.rateLimited(retryAfter: .seconds(900), .votePasswordAttempts)
        await #expect(throws: locked, "the fifth wrong password is answered with the lock and its wait") {
            try await room.vote(id, 0, by: ana, password: "111111")
        }
        await #expect(throws: locked) { try await room.vote(id, 0, by: ana) }
        // Only this person and this vote: others vote, and she votes elsewhere.
        try await room.vote(id, 1, by: ben)
        try await room.vote(other, 1, by: ana)
        room.clock.advance(by: .seconds(900) - .milliseconds(1))
        await #expect(throws: ServiceError.rateLimited(retryAfter: .milliseconds(1), .votePasswordAttempts)) {
            try await room.vote(id, 0, by: ana)
        }
        room.clock.advance(by: .milliseconds(1))
        let receipt = try await room.vote(id, 2, by: ana)
        #expect(receipt.ballot.option == 2)
        #expect(try await room.votes.vote(id, for: teacher, from: room.address).view.vote.ballotsCast == 2, "refused tries were never counted")
    }

    @Test("five wrong passwords of one voter at once are each told a different count, 4, 3, 2, 1 tries left and the lock")
    func concurrentTriesLeft() async throws {
        let room = try await Room()
        let teacher = try await room.person("teacher"), ana = try await room.person("ana")
        let id = try await room.open(by: teacher, duration: "60m").vote.id
        let answers = await withTaskGroup(of: ServiceError?.self) { group in
            for _ in 0..<5 {
                group.addTask {
                    do { _ = try await room.vote(id, 0, by: ana, password: "111111") } catch let error as ServiceError { return error } catch {}
                    return nil
                }
            }
            return await group.reduce(into: [ServiceError?]()) { $0.append($1) }
        }
        let left = answers.compactMap { answer -> Int? in
            if case .wrongVotePassword(let left) = answer { return left }
            return nil
        }
        #expect(left.sorted() == [1, 2, 3, 4])
        #expect(answers.filter { $0 == .rateLimited(retryAfter: .seconds(900), .votePasswordAttempts) }.count == 1, "\(answers)")
    }

    @Test("a lock on a timed vote that ends in 5 minutes lasts until its end at the latest, and then the answer is that the vote has ended")
    func lockEndsWithTheVote() async throws {
        let room = try await Room()
        let teacher = try await room.person("teacher"), ana = try await room.person("ana")
        let opened = try await room.open(by: teacher, duration: "15m").vote
        room.clock.advance(by: .seconds(10 * 60))
        for _ in 0..<4 { _ = await #expect(throws: ServiceError.self) { try await room.vote(opened.id, 0, by: ana, password: "111111") } }
        let closesAt = try #require(opened.closesAt)
        let untilEnd = closesAt - room.clock.now
        #expect(untilEnd <= .seconds(5 * 60) && untilEnd > .zero, "the slowed answers took 3 s of the 5 minutes left")
        let lock = ServiceError.rateLimited(retryAfter: untilEnd, .votePasswordAttemptsUntilVoteEnds)
        await #expect(throws: lock, "the fifth wrong password locks until the vote ends, not for 15 minutes") {
            try await room.vote(opened.id, 0, by: ana, password: "111111")
        }
        room.clock.advance(by: .seconds(60))
        await #expect(throws: ServiceError.rateLimited(retryAfter: untilEnd - .seconds(60), .votePasswordAttemptsUntilVoteEnds)) {
            try await room.vote(opened.id, 0, by: ana)
        }
        #expect(lock.message.hasSuffix("you have no tries left before it ends, in \(untilEnd.wholeSecondsRoundedUp) s."))
        room.clock.advance(by: untilEnd)
        await #expect(throws: ServiceError.conflict(.voteFinished), "after its end the vote has ended, whatever the lock") {
            try await room.vote(opened.id, 0, by: ana)
        }
    }

    @Test("a lock set before a vote is extended ends at the vote's end as it stood, and the voter then tries again")
    func lockBeforeAnExtension() async throws {
        let room = try await Room()
        let teacher = try await room.person("teacher"), ana = try await room.person("ana")
        let opened = try await room.open(by: teacher, duration: "5m").vote
        for _ in 0..<5 { _ = await #expect(throws: ServiceError.self) { try await room.vote(opened.id, 0, by: ana, password: "111111") } }
        _ = try await room.votes.change(opened.id, .extend(.minutes(15)), by: teacher, from: room.address)
        let oldEnd = try #require(opened.closesAt)
        await #expect(throws: ServiceError.rateLimited(retryAfter: oldEnd - room.clock.now, .votePasswordAttempts)) {
            try await room.vote(opened.id, 0, by: ana)
        }
        room.clock.advance(by: oldEnd - room.clock.now)
        #expect(try await room.vote(opened.id, 1, by: ana).ballot.option == 1)
    }

    @Test("a permanent vote keeps the whole lock")
    func permanentVoteLock() async throws {
        let room = try await Room()
        let teacher = try await room.person("teacher"), ana = try await room.person("ana")
        let id = try await room.open(by: teacher, duration: "permanent").vote.id
        for _ in 0..<4 { _ = await #expect(throws: ServiceError.self) { try await room.vote(id, 0, by: ana, password: "111111") } }
        await #expect(throws: ServiceError.rateLimited(retryAfter: .seconds(900), .votePasswordAttempts)) {
            try await room.vote(id, 0, by: ana, password: "111111")
        }
    }

    @Test("a malformed password is a clear error that costs no try")
    func malformedPassword() async throws {
        let room = try await Room()
        let teacher = try await room.person("teacher"), ana = try await room.person("ana")
        let id = try await room.open(by: teacher).vote.id
        for _ in 0..<8 {
            await #expect(throws: ServiceError.invalid([ValidationError(field: "password", message: "must be exactly 6 digits 0-9")])) {
                try await room.vote(id, 0, by: ana, password: "48291")
            }
        }
        try await room.vote(id, 0, by: ana)
    }

    @Test("the result: tally, tied winners, participants by name unless anonymous, and only the caller's own choice")
    func result() async throws {
        let room = try await Room()
        let teacher = try await room.person("teacher", first: "Tess", last: "Ward")
        let ana = try await room.person("ana", first: "Ana", last: "Lima"), ben = try await room.person("ben", first: "Ben", last: "Ito")
        let named = try await room.open(by: teacher, participants: 3).vote.id
        let anonymous = try await room.open(by: teacher, participants: 2, anonymous: true).vote.id
        try await room.vote(named, 0, by: ana)
        try await room.vote(named, 2, by: ben)
        try await room.vote(named, 2, by: teacher)
        try await room.vote(anonymous, 0, by: ana)
        try await room.vote(anonymous, 1, by: ben)

        let forAna = try await room.votes.result(of: named, for: ana, from: room.address)
        #expect(forAna.tally == [1, 0, 2] && forAna.winners == [2] && forAna.ballotsCounted == 3)
        #expect(forAna.voters?.map(\.name) == ["Ana Lima", "Ben Ito", "Tess Ward"])
        #expect(forAna.voters?.allSatisfy(\.counted) == true)
        #expect(forAna.yourBallot?.option == 0)
        #expect(try await room.votes.result(of: named, for: ben, from: room.address).yourBallot?.option == 2)
        let cy = try await room.person("cyd")
        await #expect(throws: ServiceError.forbidden("Only the initiator of this vote and those who voted in it see its result.")) {
            try await room.votes.result(of: named, for: cy, from: room.address)
        }

        let tie = try await room.votes.result(of: anonymous, for: teacher, from: room.address)
        #expect(tie.tally == [1, 1, 0] && tie.winners == [0, 1])
        #expect(tie.voters == nil, "an anonymous vote names no one")
        #expect(tie.yourBallot == nil, "the initiator did not vote here and sees no one's choice")
    }

    @Test("a duplicate name at the end: settling, the initiator voids and restores, the result is published once with each voter's own ballot, everyone gets one end event")
    func settling() async throws {
        let room = try await Room()
        let teacher = try await room.person("teacher")
        let ana = try await room.person("ana", first: "Ana", last: "Lima")
        let anaSince = room.clock.now
        room.clock.advance(by: .seconds(40 * 86_400))
        let impostor = try await room.person("ana2", first: "ana", last: "LIMA")
        let ben = try await room.person("ben", first: "Ben", last: "Ito")
        let id = try await room.open(by: teacher, participants: 3).vote.id
        try await room.vote(id, 0, by: ana)
        room.clock.advance(by: .seconds(5))
        let second = try await room.vote(id, 1, by: impostor)
        #expect(second.view.state == .open, "a name conflict changes nothing while the vote is open")
        #expect(try await room.votes.conflicts(in: id, by: teacher, from: room.address).first?.ballots.count == 2,
                "the initiator may look while it is open")
        let impostorBallot = second.ballot.id
        for counted in [false, true] {
            await #expect(throws: ServiceError.conflict(.voteOpen)) {
                try await room.votes.setCounted(counted, ballot: impostorBallot, in: id, by: teacher, from: room.address)
            }
        }
        await #expect(throws: ServiceError.conflict(.voteOpen)) { try await room.votes.change(id, .publish, by: teacher, from: room.address) }
        #expect(try await room.events(of: teacher).isEmpty, "nothing is told before the end")

        room.clock.advance(by: .seconds(5))
        let ended = room.clock.now
        let last = try await room.vote(id, 1, by: ben)
        let until = ended + .seconds(24 * 3600)
        #expect(last.view.state == .settling(.allVoted, endedAt: ended, until: until))
        let told = try await room.events(of: teacher)
        #expect(told.map(\.type) == [.voteConflict], "the initiator is told once, when settling begins")
        guard case .voteConflict(let notice)? = told.first?.payload else { throw StoreError.database("no vote_conflict told") }
        #expect(notice.conflicts == [NameCount(name: "Ana Lima", ballots: 2)])
        #expect(notice.settlingUntil == until)
        for voter in [ana, impostor, ben] { #expect(try await room.events(of: voter).isEmpty, "voters wait for the result") }
        for person in [teacher, ana, ben] {
            await #expect(throws: ServiceError.conflict(.voteSettling(until: until))) {
                try await room.votes.result(of: id, for: person, from: room.address)
            }
        }
        #expect(try await room.votes.nearby(around: Spot.hallOfScience, radius: .standard, limit: .standard).isEmpty)

        let conflicts = try await room.votes.conflicts(in: id, by: teacher, from: room.address)
        #expect(conflicts.map(\.name) == ["Ana Lima"])
        #expect(conflicts.first?.ballots.map(\.voter.id) == [ana.userID, impostor.userID])
        #expect(conflicts.first?.ballots.map(\.voter.username.rawValue) == ["ana", "ana2"], "usernames tell the two apart")
        #expect(conflicts.first?.ballots.map(\.voterSince) == [anaSince, anaSince + .seconds(40 * 86_400)],
                "an account made just before the vote stands out")
        await #expect(throws: ServiceError.forbidden("Only the initiator of this vote settles, changes or ends it.")) {
            try await room.votes.conflicts(in: id, by: ana, from: room.address)
        }
        let anaBallot = try #require(conflicts.first?.ballots.first?.id)
        let benBallot = try #require(try await room.store.ballot(of: id, by: ben.userID)?.id)
        await #expect(throws: ServiceError.conflict(.notInNameConflict)) {
            try await room.votes.setCounted(false, ballot: benBallot, in: id, by: teacher, from: room.address)
        }
        await #expect(throws: ServiceError.forbidden("Only the initiator of this vote settles, changes or ends it.")) {
            try await room.votes.setCounted(false, ballot: impostorBallot, in: id, by: ana, from: room.address)
        }
        #expect(try await room.votes.setCounted(false, ballot: anaBallot, in: id, by: teacher, from: room.address).counted == false)
        await #expect(throws: ServiceError.conflict(.lastCountedOfName)) {
            try await room.votes.setCounted(false, ballot: impostorBallot, in: id, by: teacher, from: room.address)
        }
        #expect(try await room.votes.setCounted(true, ballot: anaBallot, in: id, by: teacher, from: room.address).counted, "undo")
        #expect(try await room.votes.setCounted(false, ballot: impostorBallot, in: id, by: teacher, from: room.address).counted == false)
        await #expect(throws: ServiceError.forbidden("Only the initiator of this vote settles, changes or ends it.")) {
            try await room.votes.change(id, .publish, by: ben, from: room.address)
        }

        room.clock.advance(by: .seconds(60))
        let published = try await room.votes.change(id, .publish, by: teacher, from: room.address)
        #expect(published.state == .finished(.allVoted, at: room.clock.now))
        #expect(published.settlement == Settlement(by: .initiator, at: room.clock.now))
        for person in [teacher, ana, impostor, ben] {
            let finished = try await room.events(of: person).filter { $0.type == .voteFinished }
            #expect(finished.count == 1, "one end event each")
            guard case .voteFinished(let notice)? = finished.first?.payload else {
                Issue.record("no result in the event")
                continue
            }
            let result = notice.outcome
            #expect(result.ballotsVoided == 1)
            #expect(result.options == ["Pizza", "Tacos", "Pho"] && result.tally == [1, 1, 0])
            guard let own = result.yourBallot else {
                #expect(person.userID == teacher.userID, "the initiator did not vote")
                continue
            }
            #expect(own.counted == (person.userID != impostor.userID))
        }
        let forImpostor = try await room.votes.result(of: id, for: impostor, from: room.address)
        #expect(forImpostor.yourBallot?.counted == false && forImpostor.yourBallot?.option == 1)
        #expect(forImpostor.tally == [1, 1, 0] && forImpostor.winners == [0, 1] && forImpostor.ballotsCounted == 2)
        #expect(forImpostor.voters?.map(\.name) == ["Ana Lima", "Ben Ito", "ana LIMA"])
        #expect(forImpostor.voters?.map(\.counted) == [true, true, false], "the voided ballot is named as not counted")
        #expect(try await room.votes.announceFinishes() == 0, "nothing is told twice")
        for change in [VoteChange.publish, .cancel] {
            await #expect(throws: ServiceError.conflict(.resultFinal)) { try await room.votes.change(id, change, by: teacher, from: room.address) }
        }
        await #expect(throws: ServiceError.conflict(.resultFinal)) {
            try await room.votes.setCounted(true, ballot: impostorBallot, in: id, by: teacher, from: room.address)
        }

        let anonymous = try await room.open(by: teacher, anonymous: true).vote.id
        await #expect(throws: ServiceError.conflict(.anonymousVote)) {
            try await room.votes.conflicts(in: anonymous, by: teacher, from: room.address)
        }
    }

    @Test("settling ends by itself after the vote's settling time with the ballots as they stand, and the result says so")
    func settlingRunsOut() async throws {
        var settings = ServiceSettings.standard
        settings.votes.settlingTime = .seconds(3600)
        let room = try await Room(settings: settings)
        let teacher = try await room.person("teacher")
        let ana = try await room.person("ana", first: "Ana", last: "Lima"), impostor = try await room.person("ana2", first: "Ana", last: "Lima")
        let opened = try await room.open(by: teacher, duration: "5m")
        let id = opened.vote.id
        #expect(opened.vote.settlingTime == .seconds(3600), "fixed when the vote opens")
        try await room.vote(id, 0, by: ana)
        let impostorBallot = try await room.vote(id, 1, by: impostor).ballot.id
        room.clock.advance(by: .seconds(300))
        let closesAt = try #require(opened.vote.closesAt)
        #expect(try await room.votes.announceFinishes() == 1)
        #expect(try await room.events(of: teacher).map(\.type) == [.voteConflict])
        _ = try await room.votes.setCounted(false, ballot: impostorBallot, in: id, by: teacher, from: room.address)

        room.clock.advance(by: .seconds(3600) - .milliseconds(1))
        #expect(try await room.votes.announceFinishes() == 0)
        #expect(try await room.votes.vote(id, for: ana, from: room.address).view.state
                == .settling(.timeUp, endedAt: closesAt, until: closesAt + .seconds(3600)))
        room.clock.advance(by: .milliseconds(1))
        let end = closesAt + .seconds(3600)
        #expect(try await room.votes.vote(id, for: ana, from: room.address).view.state == .finished(.timeUp, at: end),
                "finished for every reader at that instant, announced or not")
        #expect(try await room.votes.announceFinishes() == 1)
        let result = try await room.votes.result(of: id, for: ana, from: room.address)
        #expect(result.view.settlement == Settlement(by: .time, at: end))
        #expect(result.tally == [1, 0, 0] && result.ballotsCounted == 1, "the void made in settling stands")
        for person in [teacher, ana, impostor] {
            #expect(try await room.events(of: person).filter { $0.type == .voteFinished }.count == 1)
        }
        await #expect(throws: ServiceError.conflict(.resultFinal)) {
            try await room.votes.setCounted(true, ballot: impostorBallot, in: id, by: teacher, from: room.address)
        }
    }

    @Test("the initiator closes a vote now: it finishes with the ballots cast so far, or settles first when names clash")
    func close() async throws {
        let room = try await Room()
        let teacher = try await room.person("teacher"), ana = try await room.person("ana"), ben = try await room.person("ben")
        let id = try await room.open(by: teacher, participants: 30, duration: "permanent").vote.id
        try await room.vote(id, 2, by: ana)
        await #expect(throws: ServiceError.forbidden("Only the initiator of this vote settles, changes or ends it.")) {
            try await room.votes.change(id, .close, by: ana, from: room.address)
        }
        room.clock.advance(by: .seconds(30))
        let closed = try await room.votes.change(id, .close, by: teacher, from: room.address)
        #expect(closed.state == .finished(.closed, at: room.clock.now), "a permanent vote with no-shows can end")
        await #expect(throws: ServiceError.conflict(.voteFinished)) { try await room.vote(id, 0, by: ben) }
        for change in [VoteChange.close, .extend(.minutes(5))] {
            await #expect(throws: ServiceError.conflict(.voteFinished)) { try await room.votes.change(id, change, by: teacher, from: room.address) }
        }
        #expect(try await room.votes.result(of: id, for: ana, from: room.address).tally == [0, 0, 1])
        for person in [teacher, ana] {
            let events = try await room.events(of: person)
            guard case .voteFinished(let notice)? = events.first?.payload else {
                Issue.record("no vote_finished told")
                continue
            }
            #expect(events.count == 1 && notice.reason == .closed)
        }
        #expect(try await room.events(of: ben).isEmpty)

        let ana2 = try await room.person("ana2", first: "Ana", last: "Test")
        let clash = try await room.open(by: teacher, participants: 30).vote.id
        try await room.vote(clash, 0, by: ana)
        try await room.vote(clash, 1, by: ana2)
        let settling = try await room.votes.change(clash, .close, by: teacher, from: room.address)
        #expect(settling.state == .settling(.closed, endedAt: room.clock.now, until: room.clock.now + .seconds(24 * 3600)))
    }

    @Test("the initiator cancels a vote, open or settling: no result, everyone in it told once; nothing changes it after")
    func cancel() async throws {
        let room = try await Room()
        let teacher = try await room.person("teacher"), ana = try await room.person("ana"), ben = try await room.person("ben")
        let id = try await room.open(by: teacher).vote.id
        try await room.vote(id, 1, by: ana)
        await #expect(throws: ServiceError.forbidden("Only the initiator of this vote settles, changes or ends it.")) {
            try await room.votes.change(id, .cancel, by: ana, from: room.address)
        }
        let cancelled = try await room.votes.change(id, .cancel, by: teacher, from: room.address)
        #expect(cancelled.state == .cancelled(at: room.clock.now))
        for person in [teacher, ana] { #expect(try await room.events(of: person).map(\.type) == [.voteCancelled]) }
        #expect(try await room.events(of: ben).isEmpty)
        await #expect(throws: ServiceError.conflict(.voteCancelled)) { try await room.vote(id, 0, by: ben) }
        await #expect(throws: ServiceError.conflict(.voteCancelled)) { try await room.votes.result(of: id, for: ana, from: room.address) }
        for change in [VoteChange.cancel, .publish, .close, .extend(.minutes(5))] {
            await #expect(throws: ServiceError.conflict(.voteCancelled)) { try await room.votes.change(id, change, by: teacher, from: room.address) }
        }
        room.clock.advance(by: .seconds(3600))
        #expect(try await room.votes.announceFinishes() == 0, "a cancelled vote is not announced again when its time runs out")

        let ana2 = try await room.person("ana2", first: "Ana", last: "Test")
        let clash = try await room.open(by: teacher, participants: 2).vote.id
        try await room.vote(clash, 0, by: ana)
        try await room.vote(clash, 1, by: ana2)
        let settling = try await room.votes.vote(clash, for: teacher, from: room.address).view.state
        guard case .settling = settling else {
            Issue.record("expected settling, got \(settling)")
            return
        }
        #expect(try await room.votes.change(clash, .cancel, by: teacher, from: room.address).state == .cancelled(at: room.clock.now))
        #expect(try await room.events(of: ana2).map(\.type) == [.voteCancelled], "no result ever comes")
    }

    @Test("a timed vote is extended once by an allowed duration, while open; a permanent one not at all")
    func extend() async throws {
        let room = try await Room()
        let teacher = try await room.person("teacher"), ana = try await room.person("ana")
        let opened = try await room.open(by: teacher, duration: "5m").vote
        room.clock.advance(by: .seconds(240))
        let extended = try await room.votes.change(opened.id, .extend(.minutes(15)), by: teacher, from: room.address)
        #expect(extended.vote.closesAt == opened.createdAt + .seconds(20 * 60) && extended.vote.extendedBy == .minutes(15))
        await #expect(throws: ServiceError.conflict(.alreadyExtended)) {
            try await room.votes.change(opened.id, .extend(.minutes(5)), by: teacher, from: room.address)
        }
        room.clock.advance(by: .seconds(600))
        #expect(try await room.vote(opened.id, 0, by: ana).view.state == .open, "a ballot at minute 14 counts")
        room.clock.advance(by: .seconds(360))
        #expect(try await room.votes.vote(opened.id, for: ana, from: room.address).view.state
                == .finished(.timeUp, at: opened.createdAt + .seconds(20 * 60)))

        let permanent = try await room.open(by: teacher, duration: "permanent").vote.id
        await #expect(throws: ServiceError.conflict(.permanentVote)) {
            try await room.votes.change(permanent, .extend(.minutes(5)), by: teacher, from: room.address)
        }
        let timed = try await room.open(by: teacher, duration: "5m").vote.id
        await #expect(throws: ServiceError.invalid("duration", "must be one of 5m, 15m, 30m, 60m: an extension is a length of time")) {
            try await room.votes.change(timed, .extend(.permanent), by: teacher, from: room.address)
        }
        await #expect(throws: ServiceError.forbidden("Only the initiator of this vote settles, changes or ends it.")) {
            try await room.votes.change(timed, .extend(.minutes(5)), by: ana, from: room.address)
        }
    }

    @Test("subject and options change until the first ballot, never after, so every ballot answers one question")
    func edit() async throws {
        let room = try await Room()
        let teacher = try await room.person("teacher"), ana = try await room.person("ana")
        let id = try await room.open(by: teacher).vote.id
        let subject = try VoteSubject("Dinner after the lab?")
        let edited = try await room.votes.change(id, .edit(subject: subject, options: nil), by: teacher, from: room.address)
        #expect(edited.vote.subject == subject && edited.vote.options.texts == ["Pizza", "Tacos", "Pho"])
        let options = try VoteOptions(["Rice", "Noodles"])
        #expect(try await room.votes.change(id, .edit(subject: nil, options: options), by: teacher, from: room.address).vote.options == options)
        await #expect(throws: ServiceError.forbidden("Only the initiator of this vote settles, changes or ends it.")) {
            try await room.votes.change(id, .edit(subject: subject, options: nil), by: ana, from: room.address)
        }
        #expect(try await room.votes.nearby(around: Spot.hallOfScience, radius: .standard, limit: .standard).first?.view.vote.options == options,
                "the list shows the edit")
        try await room.vote(id, 1, by: ana)
        await #expect(throws: ServiceError.conflict(.ballotsAlreadyCast)) {
            try await room.votes.change(id, .edit(subject: subject, options: nil), by: teacher, from: room.address)
        }
        #expect(try await room.votes.vote(id, for: teacher, from: room.address).view.vote.options == options, "the ballot answered the edited question")
    }

    @Test("an initiator voids no ballot while the vote is open, and in settling only ballots under a name another ballot shares")
    func isolatingAVoterIsRefused() async throws {
        let room = try await Room()
        let tess = try await room.person("tess", first: "Tess", last: "Ward")
        let ana = try await room.person("ana", first: "Ana", last: "Lima")
        let ben = try await room.person("ben", first: "Ben", last: "Ito")
        let target = try await room.person("cyd", first: "Cyd", last: "Moss")
        // Made for the occasion, named like a voter Tess wants to remove from the tally.
        let fakeAna = try await room.person("ana-lima", first: "Ana", last: "Lima")
        let id = try await room.open(by: tess, participants: 4).vote.id
        try await room.vote(id, 0, by: ana)
        try await room.vote(id, 1, by: ben)
        try await room.vote(id, 2, by: target)
        #expect(try await room.votes.conflicts(in: id, by: tess, from: room.address).isEmpty)
        let benBallot = try #require(try await room.store.ballot(of: id, by: ben.userID)?.id)
        let targetBallot = try #require(try await room.store.ballot(of: id, by: target.userID)?.id)
        for ballot in [benBallot, targetBallot] {
            await #expect(throws: ServiceError.conflict(.voteOpen)) {
                try await room.votes.setCounted(false, ballot: ballot, in: id, by: tess, from: room.address)
            }
        }
        try await room.vote(id, 0, by: fakeAna)  // the fourth ballot ends the vote, in a name conflict
        guard case .settling = try await room.votes.vote(id, for: tess, from: room.address).view.state else {
            Issue.record("the vote should settle")
            return
        }
        for ballot in [benBallot, targetBallot] {
            await #expect(throws: ServiceError.conflict(.notInNameConflict)) {
                try await room.votes.setCounted(false, ballot: ballot, in: id, by: tess, from: room.address)
            }
        }
        _ = try await room.votes.change(id, .publish, by: tess, from: room.address)
        let result = try await room.votes.result(of: id, for: tess, from: room.address)
        #expect(result.ballotsCounted == 4, "Ben's and the target's ballots stay counted: the target's is one of several")
    }

    @Test("finishes are announced once to every voter and the initiator, by count at once and by time on the next round")
    func announcements() async throws {
        let room = try await Room()
        let teacher = try await room.person("teacher"), ana = try await room.person("ana"), ben = try await room.person("ben")
        let full = try await room.open(by: teacher, participants: 2, duration: "60m").vote.id
        let timed = try await room.open(by: teacher, participants: 5, duration: "5m").vote.id
        try await room.vote(timed, 0, by: ana)
        try await room.vote(full, 0, by: ana)
        try await room.vote(full, 1, by: ben)
        #expect(try await room.votes.announceFinishes() == 0, "the full vote was announced with its last ballot")
        room.clock.advance(by: .seconds(300))
        #expect(try await room.votes.announceFinishes() == 1)
        #expect(try await room.votes.announceFinishes() == 0)

        var received: [[String]] = []
        for person in [teacher, ana, ben] {
            let events = try await room.events(of: person)
            #expect(events.allSatisfy { $0.type == .voteFinished })
            received.append(events.compactMap { if case .voteFinished(let notice) = $0.payload { notice.vote.rawValue } else { nil } })
        }
        #expect(received[0] == [full.rawValue, timed.rawValue], "the initiator hears of both")
        #expect(received[1] == [full.rawValue, timed.rawValue], "a voter in both hears of both")
        #expect(received[2] == [full.rawValue], "a voter in one hears of that one")
    }

    @Test("history lists initiated and attended votes newest first, with state and progress")
    func history() async throws {
        let room = try await Room()
        let teacher = try await room.person("teacher"), ana = try await room.person("ana")
        let first = try await room.open(by: teacher, participants: 1).vote.id
        room.clock.advance(by: .seconds(60))
        let second = try await room.open(by: ana, participants: 2).vote.id
        try await room.vote(first, 0, by: ana)
        try await room.vote(second, 0, by: ana)

        let mine = try await room.votes.history(of: ana, role: nil, limit: .standard)
        #expect(mine.map(\.view.vote.id) == [second, first])
        #expect(mine.map(\.roles) == [[.initiated, .attended], [.attended]])
        #expect(mine.map(\.view.vote.ballotsCast) == [1, 1])
        #expect(mine[1].view.state == .finished(.allVoted, at: room.clock.now))
        #expect(try await room.votes.history(of: ana, role: .initiated, limit: .standard).map(\.view.vote.id) == [second])
        #expect(try await room.votes.history(of: teacher, role: .attended, limit: .standard).isEmpty)
    }

    @Test("opening votes is limited per person: thirty an hour")
    func openingLimit() async throws {
        let room = try await Room()
        let teacher = try await room.person("teacher")
        for _ in 0..<30 { _ = try await room.open(by: teacher) }
        await #expect(throws: ServiceError.rateLimited(retryAfter: .seconds(3600), .voteCreations)) { try await room.open(by: teacher) }
        room.clock.advance(by: .seconds(3600))
        _ = try await room.open(by: teacher)
    }

    @Test("nearby lists open public votes only, nearest first, with distance")
    func nearby() async throws {
        let room = try await Room()
        let teacher = try await room.person("teacher"), ana = try await room.person("ana")
        let here = try await room.open(by: teacher, at: Spot.hallOfScience).vote.id
        let there = try await room.open(by: teacher, at: Spot.library).vote.id
        _ = try await room.open(by: teacher, visibility: .private, at: Spot.hallOfScience)
        let done = try await room.open(by: teacher, participants: 1, at: Spot.hallOfScience).vote.id
        try await room.vote(done, 0, by: ana)
        _ = try await room.open(by: teacher, at: Spot.pyramid)  // about 1.1 km from the library: outside 500 m

        let found = try await room.votes.nearby(around: Spot.library, radius: try SearchRadius(meters: 500), limit: .standard)
        #expect(found.map(\.view.vote.id) == [there, here])
        #expect(found.first?.distance == Distance(meters: 0))
        #expect(found.last?.distance == haversineDistance(from: Spot.library, to: Spot.hallOfScience))
        #expect(found.allSatisfy { $0.view.initiatorName == "Teacher Test" })
        room.clock.advance(by: .seconds(15 * 60))
        #expect(try await room.votes.nearby(around: Spot.library, radius: .standard, limit: .standard).isEmpty)
    }
}

@Suite("Settling name conflicts")
struct SettlingRuleTests {
    private static func ballot(_ name: String, counted: Bool = true) -> Ballot {
        Ballot(
            id: .random(), vote: VoteID("K7M3QX")!, voter: .random(), voterName: name, option: 0,
            castAt: Timestamp(millisecondsSince1970: 0), counted: counted)
    }

    @Test("only ballots that share a name are voided or restored, and one ballot of each name stays counted")
    func settlingRule() throws {
        let ana = Self.ballot("Ana Lima"), anaAgain = Self.ballot("ANA lima"), ben = Self.ballot("Ben Ito")
        let ballots = [ana, anaAgain, ben]
        #expect(throws: ServiceError.conflict(.notInNameConflict)) { try Ballot.checkSettling(ben.id, counted: false, among: ballots) }
        #expect(throws: ServiceError.conflict(.notInNameConflict)) { try Ballot.checkSettling(ben.id, counted: true, among: ballots) }
        #expect(throws: ServiceError.notFound(.ballot)) { try Ballot.checkSettling(.random(), counted: false, among: ballots) }
        try Ballot.checkSettling(ana.id, counted: false, among: ballots)
        var voided = anaAgain
        voided.counted = false
        let afterOne = [ana, voided, ben]
        #expect(throws: ServiceError.conflict(.lastCountedOfName)) { try Ballot.checkSettling(ana.id, counted: false, among: afterOne) }
        try Ballot.checkSettling(voided.id, counted: true, among: afterOne)
        try Ballot.checkSettling(voided.id, counted: false, among: afterOne)
        try Ballot.checkSettling(ana.id, counted: true, among: afterOne)
    }
}
