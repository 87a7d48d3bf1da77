import Foundation
import GRDB
import GeoCore
import GeoTestSupport
import Logging
import Synchronization
import Testing
import VicinityCore
@testable import VicinitySpatiaLite
import VicinitySQL

/// A vote with the given settings, held at `location`, opened at `epoch` unless told otherwise.
func makeVote(
    by initiator: UserID, at location: Coordinate = hallOfScience, participants: Int = 30,
    duration: VoteDuration = .minutes(15), visibility: VoteVisibility = .public, anonymous: Bool = false,
    opened: Timestamp = epoch, options: [String] = ["Pizza", "Tacos", "Pho"]
) throws -> Vote {
    Vote(
        id: .random(), initiator: initiator, subject: try VoteSubject("Lunch after the lab?"),
        options: try VoteOptions(options), participants: try ParticipantCount(participants), duration: duration,
        visibility: visibility, anonymous: anonymous, location: location, label: "Around Hall of Science",
        createdAt: opened)
}

extension VoteStore {
    /// Casts a ballot answering the question its vote now asks (the one `makeVote` asks when there is no such
    /// vote), as the service does after checking the option against it.
    func castBallot(_ ballot: Ballot) async throws -> BallotOutcome {
        let question = try await vote(id: ballot.vote)?.question
            ?? VoteQuestion(subject: try VoteSubject("Lunch after the lab?"), options: try VoteOptions(["Pizza", "Tacos", "Pho"]))
        return try await castBallot(ballot, answering: question)
    }
}

extension VoteStore {
    /// Claims the announcements due at `now` and records no event for them: the claim alone, as the tests of
    /// claims look at it.
    func claimAnnouncements(at now: Timestamp, limit: Int) async throws -> [Vote] {
        try await announce(at: now, limit: limit) { _, _ in [] }.votes
    }
}

func makeBallot(_ vote: Vote, by voter: Account, option: Int = 0, at time: Timestamp = epoch + .seconds(60)) -> Ballot {
    Ballot(
        id: .random(), vote: vote.id, voter: voter.id, voterName: voter.summary.displayName, option: option, castAt: time)
}

@Suite("Vote store contract")
struct VoteStoreContractTests {
    @Test("votes are created once per id and read back whole, with their password hash for ballots",
          arguments: StoreKind.available)
    func createAndRead(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let ana = try account("ana")
        try await store.createAccount(ana, passwordHash: someHash)
        let timed = try makeVote(by: ana.id, anonymous: true)
        let permanent = try makeVote(by: ana.id, duration: .permanent, visibility: .private, options: ["Sí", "No", "Tal vez 🤔"])
        #expect(try await store.createVote(timed, passwordHash: someHash))
        #expect(try await store.createVote(permanent, passwordHash: someHash))
        var clash = try makeVote(by: ana.id)
        clash.id = timed.id
        #expect(try await store.createVote(clash, passwordHash: someHash) == false, "an id is never given twice")
        #expect(try await store.vote(id: timed.id) == timed)
        #expect(try await store.vote(id: permanent.id) == permanent)
        #expect(permanent.closesAt == nil)
        #expect(timed.closesAt == epoch + .seconds(15 * 60))
        let forBallot = try await store.voteForBallot(id: timed.id)
        #expect(forBallot?.vote == timed)
        #expect(forBallot?.passwordHash == someHash)
        #expect(try await store.vote(id: .random()) == nil)
    }

    @Test("open public votes nearby equal brute force: never private or finished ones, nearest first, ties by id, poles and antimeridian included",
          arguments: StoreKind.available)
    func nearbyMatchesBruteForce(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind)
        defer { withExtendedLifetime(subject) {} }
        try await nearbyVotesMatchBruteForce(accounts: subject.store, votes: subject.store)
    }

    @Test("fifty ballots at once against thirty participants: exactly thirty counted, each voter once, the vote complete",
          arguments: StoreKind.available)
    func concurrentBallots(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let initiator = try account("teacher")
        try await store.createAccount(initiator, passwordHash: someHash)
        var voters: [Account] = []
        for index in 0..<50 {
            let voter = try account("student\(index)")
            try await store.createAccount(voter, passwordHash: someHash)
            voters.append(voter)
        }
        let vote = try makeVote(by: initiator.id, participants: 30)
        #expect(try await store.createVote(vote, passwordHash: someHash))
        // Each voter sends two ballots, so that a second ballot races the first too.
        let outcomes = try await withThrowingTaskGroup(of: (UserID, BallotOutcome).self) { group in
            for (index, voter) in voters.enumerated() {
                for attempt in 0..<2 {
                    let writer = subject.store(for: index + attempt)
                    group.addTask { (voter.id, try await writer.castBallot(makeBallot(vote, by: voter, option: (index + attempt) % 3))) }
                }
            }
            return try await group.reduce(into: [(UserID, BallotOutcome)]()) { $0.append($1) }
        }
        let cast = outcomes.filter { if case .cast = $0.1 { true } else { false } }
        #expect(cast.count == 30)
        #expect(Set(cast.map(\.0)).count == 30, "no voter is counted twice")
        #expect(outcomes.allSatisfy { outcome in
            switch outcome.1 {
            case .cast, .alreadyVoted, .finished: true
            case .noSuchVote, .questionChanged: false
            }
        })
        let ballots = try await store.ballots(of: vote.id)
        #expect(ballots.count == 30)
        #expect(Set(ballots.map(\.voter)) == Set(cast.map(\.0)))
        let after = try #require(try await store.vote(id: vote.id))
        #expect(after.ballotsCast == 30)
        #expect(after.state(at: epoch + .seconds(61)) == .finished(.allVoted, at: epoch + .seconds(60)))
    }

    @Test("a ballot is refused when its voter voted, when time is up and when the vote is complete; a second ballot under one name marks a name conflict",
          arguments: StoreKind.available)
    func ballotRules(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let ana = try account("ana", first: "Ana", last: "Lima")
        let otherAna = try account("ana2", first: "ÁNA", last: "lima")
        let ben = try account("ben", first: "Ben", last: "Ito")
        for person in [ana, otherAna, ben] { try await store.createAccount(person, passwordHash: someHash) }
        let vote = try makeVote(by: ben.id, participants: 3, duration: .minutes(5))

        #expect(try await store.castBallot(makeBallot(vote, by: ana)) == .noSuchVote)
        #expect(try await store.createVote(vote, passwordHash: someHash))
        guard case .cast(let first) = try await store.castBallot(makeBallot(vote, by: ana, option: 2)) else {
            Issue.record("the first ballot was refused")
            return
        }
        #expect(first.ballotsCast == 1 && first.completedAt == nil && !first.nameConflict && first.revision == 1)
        #expect(try await store.castBallot(makeBallot(vote, by: ana, option: 1)) == .alreadyVoted)
        guard case .cast(let second) = try await store.castBallot(makeBallot(vote, by: otherAna, option: 0, at: epoch + .seconds(61))) else {
            Issue.record("the second ballot was refused")
            return
        }
        #expect(second.nameConflict, "\"ÁNA lima\" reads as \"Ana Lima\": two ballots under one name")
        #expect(second.revision == 2)
        #expect(try await store.vote(id: vote.id) == second)
        // The vote closes at five minutes: a ballot at that instant is late.
        #expect(try await store.castBallot(makeBallot(vote, by: ben, at: epoch + .seconds(300))) == .finished)
        #expect(try await store.ballot(of: vote.id, by: ana.id)?.option == 2)
        #expect(try await store.ballot(of: vote.id, by: ben.id) == nil)
        #expect(try await store.ballots(of: vote.id).map(\.voter) == [ana.id, otherAna.id], "in the order cast")
    }

    @Test("voiding and restoring pass the rule under the vote's lock: what it refuses changes nothing",
          arguments: StoreKind.available)
    func voidAndRestore(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let ana = try account("ana"), ben = try account("ben")
        for person in [ana, ben] { try await store.createAccount(person, passwordHash: someHash) }
        let vote = try makeVote(by: ben.id, participants: 2, duration: .minutes(5))
        #expect(try await store.createVote(vote, passwordHash: someHash))
        let ballot = makeBallot(vote, by: ana, option: 1)
        _ = try await store.castBallot(ballot)

        let seen = Mutex<[(Vote, [Ballot])]>([])
        let voided = try #require(try await store.setCounted(false, ballot: ballot.id, of: vote.id) { vote, ballots in
            seen.withLock { $0.append((vote, ballots)) }
        })
        #expect(voided.counted == false && voided.option == 1 && voided.voter == ana.id)
        #expect(seen.withLock { $0.map(\.0.id) } == [vote.id])
        #expect(seen.withLock { $0.first?.1 } == [ballot], "the rule sees the ballots as they stood")
        #expect(try await store.ballots(of: vote.id).map(\.counted) == [false])
        let restored = try #require(try await store.setCounted(true, ballot: ballot.id, of: vote.id) { _, _ in })
        #expect(restored.counted)
        #expect(try await store.setCounted(false, ballot: .random(), of: vote.id) { _, _ in } == nil)
        #expect(try await store.setCounted(false, ballot: ballot.id, of: .random()) { _, _ in } == nil)
        await #expect(throws: ServiceError.conflict(.voteOpen)) {
            try await store.setCounted(false, ballot: ballot.id, of: vote.id) { _, _ in throw ServiceError.conflict(.voteOpen) }
        }
        #expect(try await store.ballots(of: vote.id).map(\.counted) == [true], "a refused change changes nothing")
    }

    @Test("an initiator's change is applied under the vote's lock and read back whole; a refused one changes nothing",
          arguments: StoreKind.available)
    func updateVote(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let ana = try account("ana"), ben = try account("ben")
        for person in [ana, ben] { try await store.createAccount(person, passwordHash: someHash) }
        let vote = try makeVote(by: ana.id, participants: 3, duration: .minutes(5))
        #expect(try await store.createVote(vote, passwordHash: someHash))

        let edited = try #require(try await store.updateVote(vote.id) { vote in
            try vote.apply(.edit(subject: try VoteSubject("Dinner?"), options: try VoteOptions(["Rice", "Noodles"])), at: epoch)
        })
        #expect(edited.subject.rawValue == "Dinner?" && edited.options.texts == ["Rice", "Noodles"] && edited.revision == 1)
        let extended = try #require(try await store.updateVote(vote.id) { vote in try vote.apply(.extend(.minutes(15)), at: epoch + .seconds(10)) })
        #expect(extended.closesAt == epoch + .seconds(20 * 60) && extended.extendedBy == .minutes(15))
        #expect(try await store.vote(id: vote.id) == extended)
        // The extension holds in every query: a ballot at minute 10 counts, and the vote is still listed then.
        guard case .cast = try await store.castBallot(makeBallot(vote, by: ben, at: epoch + .seconds(600))) else {
            Issue.record("a ballot within the extension was refused")
            return
        }
        #expect(try await store.openPublicVotes(at: epoch + .seconds(900)).map(\.id) == [vote.id])
        await #expect(throws: ServiceError.conflict(.alreadyExtended)) {
            try await store.updateVote(vote.id) { vote in try vote.apply(.extend(.minutes(5)), at: epoch + .seconds(700)) }
        }
        let closed = try #require(try await store.updateVote(vote.id) { vote in try vote.apply(.close, at: epoch + .seconds(700)) })
        #expect(closed.state(at: epoch + .seconds(700)) == .finished(.closed, at: epoch + .seconds(700)))
        #expect(try await store.castBallot(makeBallot(vote, by: ana, at: epoch + .seconds(650))) == .finished,
                "a ballot stamped before the close but written after it is refused")
        #expect(try await store.openPublicVotes(at: epoch + .seconds(650)).isEmpty)
        #expect(try await store.vote(id: vote.id) == closed)
        #expect(try await store.updateVote(.random()) { _ in } == nil)
        await #expect(throws: StoreError.self, "a change may touch only what an initiator changes") {
            try await store.updateVote(vote.id) { vote in vote.participants = try ParticipantCount(2) }
        }
        #expect(try await store.vote(id: vote.id) == closed)
    }

    @Test("a ballot is refused when the question it answered was edited meanwhile, or when the vote's end was announced before it was written",
          arguments: StoreKind.available)
    func lateBallots(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let ana = try account("ana"), ben = try account("ben")
        for person in [ana, ben] { try await store.createAccount(person, passwordHash: someHash) }
        let vote = try makeVote(by: ana.id, participants: 3, duration: .minutes(5), options: (1...20).map { "Room \($0)" })
        #expect(try await store.createVote(vote, passwordHash: someHash))
        _ = try await store.updateVote(vote.id) { vote in
            try vote.apply(.edit(subject: nil, options: try VoteOptions(["Yes", "No"])), at: epoch + .seconds(10))
        }
        #expect(try await store.castBallot(makeBallot(vote, by: ben, option: 19), answering: vote.question) == .questionChanged,
                "option 19 was read against the twenty rooms, which are gone")
        #expect(try await store.ballots(of: vote.id).isEmpty)
        #expect(try await store.claimAnnouncements(at: epoch + .seconds(300), limit: 10).map(\.id) == [vote.id])
        #expect(try await store.castBallot(makeBallot(vote, by: ben, option: 0, at: epoch + .seconds(299))) == .finished,
                "stamped before the end, written after its announcement: late")
        #expect(try await store.vote(id: vote.id)?.ballotsCast == 0)
    }

    @Test("many initiators' changes and ballots at once on one vote: each change passes against the state before it, none is lost",
          arguments: StoreKind.available)
    func concurrentChanges(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let ana = try account("ana")
        try await store.createAccount(ana, passwordHash: someHash)
        var voters: [Account] = []
        for index in 0..<20 {
            let voter = try account("student\(index)")
            try await store.createAccount(voter, passwordHash: someHash)
            voters.append(voter)
        }
        let vote = try makeVote(by: ana.id, participants: 100, duration: .minutes(5))
        #expect(try await store.createVote(vote, passwordHash: someHash))
        // Sixteen extensions race twenty ballots on several connections: exactly one extension passes.
        let now = epoch + .seconds(30)
        let extensions = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<16 {
                let writer = subject.store(for: index)
                group.addTask {
                    do {
                        _ = try await writer.updateVote(vote.id) { vote in try vote.apply(.extend(.minutes(5)), at: now) }
                        return true
                    } catch ServiceError.conflict(.alreadyExtended) { return false }
                }
            }
            for (index, voter) in voters.enumerated() {
                let writer = subject.store(for: index)
                group.addTask {
                    guard case .cast = try await writer.castBallot(makeBallot(vote, by: voter, at: now)) else { return false }
                    return false
                }
            }
            return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
        }
        #expect(extensions == 1)
        let after = try #require(try await store.vote(id: vote.id))
        #expect(after.ballotsCast == 20 && after.extendedBy == .minutes(5))
        #expect(after.revision == 21, "every change raised the revision once")
    }

    @Test("history: initiated and attended votes, newest first, ties by id, at most the limit", arguments: StoreKind.available)
    func history(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let ana = try account("ana"), ben = try account("ben")
        for person in [ana, ben] { try await store.createAccount(person, passwordHash: someHash) }
        var opened: [Vote] = []
        for minute in [0, 10, 10, 20] {
            let vote = try makeVote(by: ana.id, opened: epoch + .seconds(Int64(minute * 60)))
            #expect(try await store.createVote(vote, passwordHash: someHash))
            opened.append(vote)
        }
        for vote in opened.prefix(3) { _ = try await store.castBallot(makeBallot(vote, by: ben, at: vote.createdAt + .seconds(1))) }
        let newestFirst = opened.sorted { a, b in a.createdAt != b.createdAt ? a.createdAt > b.createdAt : a.id > b.id }
        #expect(try await store.votes(of: ana.id, role: .initiated, limit: 10).map(\.id) == newestFirst.map(\.id))
        #expect(try await store.votes(of: ana.id, role: .initiated, limit: 2).map(\.id) == newestFirst.prefix(2).map(\.id))
        #expect(try await store.votes(of: ben.id, role: .attended, limit: 10).map(\.id) == newestFirst.filter { $0.id != opened[3].id }.map(\.id))
        #expect(try await store.votes(of: ben.id, role: .initiated, limit: 10).isEmpty)
        #expect(try await store.votes(of: ana.id, role: .attended, limit: 10).isEmpty)
    }

    @Test("finishes are claimed once each, oldest first, when complete or timed out; open and permanent votes wait",
          arguments: StoreKind.available)
    func finishClaims(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let ana = try account("ana"), ben = try account("ben")
        for person in [ana, ben] { try await store.createAccount(person, passwordHash: someHash) }
        let five = try makeVote(by: ana.id, duration: .minutes(5))
        let fifteen = try makeVote(by: ana.id, duration: .minutes(15))
        let permanent = try makeVote(by: ana.id, duration: .permanent)
        let single = try makeVote(by: ana.id, participants: 1, duration: .permanent)
        for vote in [five, fifteen, permanent, single] { #expect(try await store.createVote(vote, passwordHash: someHash)) }

        #expect(try await store.claimAnnouncements(at: epoch + .seconds(60), limit: 10).isEmpty)
        _ = try await store.castBallot(makeBallot(single, by: ben, at: epoch + .seconds(90)))
        #expect(try await store.claimAnnouncements(at: epoch + .seconds(100), limit: 10).map(\.id) == [single.id])
        #expect(try await store.claimAnnouncements(at: epoch + .seconds(100), limit: 10).isEmpty, "claimed once")
        let late = epoch + .seconds(20 * 60)
        #expect(try await store.claimAnnouncements(at: late, limit: 1).map(\.id) == [five.id], "oldest finish first")
        #expect(try await store.claimAnnouncements(at: late, limit: 10).map(\.id) == [fifteen.id])
        #expect(try await store.claimAnnouncements(at: late + .seconds(365 * 86_400), limit: 10).isEmpty, "permanent votes wait for their count")
    }

    @Test("a settling vote is claimed twice, at the start of settling and at its end; cancelled and closed votes once; each as the vote then stands",
          arguments: StoreKind.available)
    func settlingClaims(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let ana = try account("ana", first: "Ana", last: "Lima"), otherAna = try account("ana2", first: "ana", last: "LIMA")
        let teacher = try account("teacher")
        for person in [ana, otherAna, teacher] { try await store.createAccount(person, passwordHash: someHash) }
        let hour = Duration.seconds(3600)
        var settled = try makeVote(by: teacher.id, participants: 2, duration: .minutes(60))
        settled.settlingTime = hour
        var lapsed = try makeVote(by: teacher.id, participants: 2, duration: .minutes(5))
        lapsed.settlingTime = hour
        let cancelled = try makeVote(by: teacher.id, duration: .permanent)
        let closed = try makeVote(by: teacher.id, duration: .permanent)
        for vote in [settled, lapsed, cancelled, closed] { #expect(try await store.createVote(vote, passwordHash: someHash)) }
        #expect(try await store.vote(id: settled.id)?.settlingTime == hour, "the settling time is kept with the vote")
        for vote in [settled, lapsed] {
            _ = try await store.castBallot(makeBallot(vote, by: ana, at: epoch + .seconds(60)))
            _ = try await store.castBallot(makeBallot(vote, by: otherAna, at: epoch + .seconds(70)))
        }
        // `lapsed` was 2 of 2 too: both end at 70 s with a name conflict. Then the teacher cancels and closes.
        _ = try await store.updateVote(cancelled.id) { vote in try vote.apply(.cancel, at: epoch + .seconds(80)) }
        _ = try await store.updateVote(closed.id) { vote in try vote.apply(.close, at: epoch + .seconds(90)) }

        let first = try await store.claimAnnouncements(at: epoch + .seconds(100), limit: 10)
        #expect(Set(first.map(\.id)) == [settled.id, lapsed.id, cancelled.id, closed.id])
        let states = Dictionary(uniqueKeysWithValues: first.map { ($0.id, $0.state(at: epoch + .seconds(100))) })
        #expect(states[settled.id] == .settling(.allVoted, endedAt: epoch + .seconds(70), until: epoch + .seconds(70) + hour))
        #expect(states[cancelled.id] == .cancelled(at: epoch + .seconds(80)))
        #expect(states[closed.id] == .finished(.closed, at: epoch + .seconds(90)))
        #expect(try await store.claimAnnouncements(at: epoch + .seconds(200), limit: 10).isEmpty, "settling is told once")

        _ = try await store.updateVote(settled.id) { vote in try vote.apply(.publish, at: epoch + .seconds(300)) }
        #expect(try await store.claimAnnouncements(at: epoch + .seconds(300), limit: 10).map(\.id) == [settled.id], "published: told at once")
        let end = epoch + .seconds(70) + hour
        #expect(try await store.claimAnnouncements(at: end - .milliseconds(1), limit: 10).isEmpty)
        let lapsedClaim = try await store.claimAnnouncements(at: end, limit: 10)
        #expect(lapsedClaim.map(\.id) == [lapsed.id])
        #expect(lapsedClaim.first?.state(at: end) == .finished(.allVoted, at: end), "settling ran out")
        #expect(try await store.claimAnnouncements(at: end + hour, limit: 10).isEmpty, "nothing is told twice")
    }

    @Test("a vote whose settling ended unseen is told once, as finished", arguments: StoreKind.available)
    func settlingEndedUnseen(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let ana = try account("ana", first: "Ana", last: "Lima"), otherAna = try account("ana2", first: "Ana", last: "Lima")
        let teacher = try account("teacher")
        for person in [ana, otherAna, teacher] { try await store.createAccount(person, passwordHash: someHash) }
        let vote = try makeVote(by: teacher.id, participants: 2, duration: .minutes(5))
        #expect(try await store.createVote(vote, passwordHash: someHash))
        _ = try await store.castBallot(makeBallot(vote, by: ana, at: epoch + .seconds(60)))
        _ = try await store.castBallot(makeBallot(vote, by: otherAna, at: epoch + .seconds(70)))
        let late = epoch + .seconds(70) + vote.settlingTime + .seconds(1)
        let claimed = try await store.claimAnnouncements(at: late, limit: 10)
        #expect(claimed.map(\.id) == [vote.id])
        #expect(claimed.first?.state(at: late) == .finished(.allVoted, at: epoch + .seconds(70) + vote.settlingTime))
        #expect(try await store.claimAnnouncements(at: late, limit: 10).isEmpty)
    }

    @Test("concurrent claims announce each finish exactly once", arguments: StoreKind.available)
    func concurrentClaims(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let ana = try account("ana")
        try await store.createAccount(ana, passwordHash: someHash)
        var ids: Set<VoteID> = []
        for _ in 0..<40 {
            let vote = try makeVote(by: ana.id, duration: .minutes(5))
            #expect(try await store.createVote(vote, passwordHash: someHash))
            ids.insert(vote.id)
        }
        let claimed = try await withThrowingTaskGroup(of: [VoteID].self) { group in
            for index in 0..<8 {
                let claimer = subject.store(for: index)
                group.addTask { try await claimer.claimAnnouncements(at: epoch + .seconds(600), limit: 7).map(\.id) }
            }
            return try await group.reduce(into: [VoteID]()) { $0 += $1 }
        }
        let rest = try await store.claimAnnouncements(at: epoch + .seconds(600), limit: 100).map(\.id)
        #expect((claimed + rest).count == 40)
        #expect(Set(claimed + rest) == ids)
    }

    @Test("a SpatiaLite file made before vote endings: an open vote with ballots under one name settles when it ends, a finished one keeps its published result")
    func upgradeBeforeVoteEndings() async throws {
        let file = TemporaryFile()
        let now = Timestamp(Date())
        let (open, finished) = (VoteID.random(), VoteID.random())
        do {
            var configuration = Configuration()
            configuration.prepareDatabase { db in try SpatiaLiteConnection.initialise(db) }
            let pool = try DatabasePool(path: file.path, configuration: configuration)
            try Schema.migrator.migrate(pool, upTo: "v6 change feed")
            try await pool.write { db in
                let people = [("aaaaaaaaaaaaaaaaaaaa", "tess", "Tess"), ("bbbbbbbbbbbbbbbbbbbb", "ana", "Ana"), ("cccccccccccccccccccc", "ana2", "Ana")]
                for (id, username, first) in people {
                    try db.execute(
                        sql: """
                            INSERT INTO account (id, username, username_key, first_name, last_name, name_key, password_hash, created_at)
                            VALUES (?, ?, ?, ?, 'Lima', '', ?, 0)
                            """,
                        arguments: [id, username, username, first, someHash.encoded])
                }
                for (vote, completed) in [(open, nil), (finished, now.millisecondsSince1970 - 1000)] as [(VoteID, Int64?)] {
                    try db.execute(
                        sql: """
                            INSERT INTO vote (id, initiator_id, subject, options, participants, password_hash, duration_minutes,
                                              visibility, anonymous, lat, lon, label, created_at, closes_at, ballots_cast,
                                              completed_at, finish_announced, geom)
                            VALUES (?1, 'aaaaaaaaaaaaaaaaaaaa', 'Lunch?', '["Pizza","Tacos"]', ?2, ?3, NULL, 'public', 0,
                                    33.779842, -118.112526, 'Around Hall of Science', ?4, NULL, 2, ?5, ?6,
                                    MakePoint(-118.112526, 33.779842, 4326))
                            """,
                        arguments: [vote.rawValue, completed == nil ? 3 : 2, someHash.encoded, now.millisecondsSince1970 - 60_000,
                                    completed, completed != nil])
                    for (index, voter) in ["bbbbbbbbbbbbbbbbbbbb", "cccccccccccccccccccc"].enumerated() {
                        try db.execute(
                            sql: """
                                INSERT INTO ballot (id, vote_id, voter_id, voter_name, name_key, option_index, cast_at, counted)
                                VALUES (?, ?, ?, 'Ana Lima', ?, ?, ?, 1)
                                """,
                            arguments: [String(repeating: "\(index)", count: 19) + (vote == open ? "a" : "b"), vote.rawValue, voter,
                                        Ballot.nameKey("Ana Lima"), index, now.millisecondsSince1970 - 30_000])
                    }
                }
            }
            try pool.close()
        }
        let store = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"))
        defer { try? store.close() }
        let upgradedOpen = try #require(try await store.vote(id: open))
        #expect(upgradedOpen.nameConflict && upgradedOpen.settlingTime == .seconds(24 * 3600) && upgradedOpen.state(at: now) == .open)
        let closed = try #require(try await store.updateVote(open) { vote in try vote.apply(.close, at: now) })
        #expect(closed.state(at: now) == .settling(.closed, endedAt: now, until: now + .seconds(24 * 3600)))
        let upgradedFinished = try #require(try await store.vote(id: finished))
        #expect(!upgradedFinished.nameConflict, "its result was published before settling existed")
        #expect(upgradedFinished.state(at: now) == .finished(.allVoted, at: now - .seconds(1)))
        #expect(try await store.claimAnnouncements(at: now, limit: 10).map(\.id) == [open], "the finished vote was announced already")
        #expect(try await store.integrityProblems() == [])
    }

    @Test("votes are points in a SpatiaLite R*Tree, survive reopening, and the file's indexes stay healthy")
    func spatialIndexAndReopen() async throws {
        let file = TemporaryFile()
        let ana = try account("ana")
        let vote = try makeVote(by: ana.id)
        do {
            let store = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"))
            try await store.createAccount(ana, passwordHash: someHash)
            #expect(try await store.createVote(vote, passwordHash: someHash))
            _ = try await store.castBallot(makeBallot(vote, by: ana, option: 2))
            try store.close()
        }
        let store = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"))
        defer { try? store.close() }
        #expect(try await store.vote(id: vote.id)?.ballotsCast == 1)
        #expect(try await store.ballot(of: vote.id, by: ana.id)?.option == 2)
        #expect(try await store.integrityProblems().isEmpty)
        let found = try await store.pool.read { db in
            try String.fetchAll(db, sql: """
                SELECT id FROM vote WHERE rowid IN (
                    SELECT pkid FROM idx_vote_geom WHERE xmin <= -118.11 AND xmax >= -118.12 AND ymin <= 33.79 AND ymax >= 33.77)
                """)
        }
        #expect(found == [vote.id.rawValue])
    }
}

/// The oracle: every vote measured with haversine, filtered and sorted in the plainest way.
enum BruteForceVotes {
    static func nearby(_ votes: [Vote], centre: Coordinate, radius: Distance, at now: Timestamp, limit: Int) -> [VoteID] {
        var hits: [(id: VoteID, meters: Double)] = []
        for vote in votes where vote.visibility == .public && vote.isOpen(at: now) {
            let meters = haversineDistance(from: centre, to: vote.location).meters
            if meters <= radius.meters { hits.append((vote.id, meters)) }
        }
        hits.sort { a, b in a.meters != b.meters ? a.meters < b.meters : a.id < b.id }
        return hits.prefix(limit).map(\.id)
    }
}

/// The nearby-votes contract for any vote store, with the accounts its votes belong to: votes at every third
/// scattered fixture point (clusters anywhere, the antimeridian, both poles), some private, some finished by
/// time or by their one ballot, queried 600 times against brute force.
func nearbyVotesMatchBruteForce(accounts: any AccountStore, votes store: any VoteStore) async throws {
    let ana = try account("ana")
    try await accounts.createAccount(ana, passwordHash: someHash)
    let voter = try account("ben")
    try await accounts.createAccount(voter, passwordHash: someHash)
    var generator = SeededGenerator(seed: 8)
    var votes: [Vote] = []
    // Every third scattered fixture point: clusters anywhere, at the antimeridian and at both poles.
    for (index, place) in Fixture.scattered.enumerated() where index % 3 == 0 {
        let duration: VoteDuration = [.minutes(5), .minutes(60), .permanent][(index / 3) % 3]
        let vote = try makeVote(
            by: ana.id, at: place.coordinate, participants: index % 7 == 0 ? 1 : 30, duration: duration,
            visibility: index % 4 == 0 ? .private : .public,
            opened: epoch - .seconds(Int64.random(in: 0...3600, using: &generator)))
        #expect(try await store.createVote(vote, passwordHash: someHash))
        votes.append(vote)
    }
    // A single-participant vote that gets its ballot is complete, so finished whatever its time.
    for vote in votes where vote.participants.value == 1 {
        guard case .cast = try await store.castBallot(makeBallot(vote, by: voter, at: vote.createdAt)) else {
            Issue.record("the one ballot of \(vote.id) was refused")
            continue
        }
    }
    // One ballot on every fifth vote that stays open: its ballot count changes, and answers must show it.
    for (offset, vote) in votes.enumerated() where vote.participants.value > 1 && offset % 5 == 0 {
        guard case .cast = try await store.castBallot(makeBallot(vote, by: voter, at: vote.createdAt)) else {
            Issue.record("the ballot of \(vote.id) was refused")
            continue
        }
    }
    let stored = try await withThrowingTaskGroup(of: Vote?.self) { group in
        for vote in votes { group.addTask { try await store.vote(id: vote.id) } }
        return try await group.reduce(into: [Vote]()) { if let vote = $1 { $0.append(vote) } }
    }
    #expect(stored.count == votes.count)
    #expect(stored.contains { !$0.isOpen(at: epoch) && $0.visibility == .public }, "the fixture has finished public votes")
    #expect(stored.contains { $0.isOpen(at: epoch) && $0.visibility == .private }, "the fixture has open private votes")
    #expect(stored.contains { $0.isOpen(at: epoch) && $0.visibility == .public && $0.ballotsCast == 1 }, "and open public votes with a ballot")

    for index in 0..<600 {
        let centre = index % 2 == 0
            ? votes[Int.random(in: 0..<votes.count, using: &generator)].location
            : randomCentre(using: &generator, kind: index)
        let radius = Distance(meters: [100.0, 1000, 10_000, 50_000][index % 4] * Double.random(in: 0.05...1, using: &generator))
        let limit = [1, 5, 20, 500][index % 4]
        let now = epoch + .seconds([0, 400, 3000][index % 3])
        let found = try await store.openPublicVotes(near: centre, within: radius, at: now, limit: limit)
        let expected = BruteForceVotes.nearby(stored, centre: centre, radius: radius, at: now, limit: limit)
        #expect(found.map(\.id) == expected, "query \(index) at \(centre), \(radius.meters) m")
        // Whole votes as the record holds them, ballot counts included.
        #expect(found == expected.compactMap { id in stored.first { $0.id == id } })
    }
    #expect(try await store.openPublicVotes(near: hallOfScience, within: Distance(meters: 1), at: epoch, limit: 20).isEmpty)
}
