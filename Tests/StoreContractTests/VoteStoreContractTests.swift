import Foundation
import GRDB
import GeoCore
import GeoTestSupport
import Logging
import Testing
import VicinityCore
@testable import VicinitySpatiaLite

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
            case .noSuchVote: false
            }
        })
        let ballots = try await store.ballots(of: vote.id)
        #expect(ballots.count == 30)
        #expect(Set(ballots.map(\.voter)) == Set(cast.map(\.0)))
        let after = try #require(try await store.vote(id: vote.id))
        #expect(after.ballotsCast == 30)
        #expect(after.state(at: epoch + .seconds(61)) == .finished(.allVoted, at: epoch + .seconds(60)))
    }

    @Test("a ballot is refused when its voter voted, when time is up and when the vote is complete; same names are counted",
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
        guard case .cast(let first, 1) = try await store.castBallot(makeBallot(vote, by: ana, option: 2)) else {
            Issue.record("the first ballot was not cast alone under its name")
            return
        }
        #expect(first.ballotsCast == 1 && first.completedAt == nil)
        #expect(try await store.castBallot(makeBallot(vote, by: ana, option: 1)) == .alreadyVoted)
        guard case .cast(_, 2) = try await store.castBallot(makeBallot(vote, by: otherAna, option: 0, at: epoch + .seconds(61))) else {
            Issue.record("\"ÁNA lima\" reads as \"Ana Lima\": two ballots under one name")
            return
        }
        // The vote closes at five minutes: a ballot at that instant is late.
        #expect(try await store.castBallot(makeBallot(vote, by: ben, at: epoch + .seconds(300))) == .finished)
        #expect(try await store.ballot(of: vote.id, by: ana.id)?.option == 2)
        #expect(try await store.ballot(of: vote.id, by: ben.id) == nil)
        #expect(try await store.ballots(of: vote.id).map(\.voter) == [ana.id, otherAna.id], "in the order cast")
    }

    @Test("voiding and restoring work while the vote is open and are refused once it is finished",
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

        let now = epoch + .seconds(120)
        guard case .changed(let voided) = try await store.setCounted(false, ballot: ballot.id, of: vote.id, at: now) else {
            Issue.record("voiding was refused")
            return
        }
        #expect(voided.counted == false && voided.option == 1 && voided.voter == ana.id)
        #expect(try await store.ballots(of: vote.id).map(\.counted) == [false])
        guard case .changed(let restored) = try await store.setCounted(true, ballot: ballot.id, of: vote.id, at: now) else {
            Issue.record("restoring was refused")
            return
        }
        #expect(restored.counted)
        #expect(try await store.setCounted(false, ballot: .random(), of: vote.id, at: now) == .noSuchBallot)
        #expect(try await store.setCounted(false, ballot: ballot.id, of: .random(), at: now) == .noSuchBallot)
        #expect(try await store.setCounted(false, ballot: ballot.id, of: vote.id, at: epoch + .seconds(300)) == .voteFinished)
        #expect(try await store.ballots(of: vote.id).map(\.counted) == [true], "a refused change changes nothing")
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

        #expect(try await store.claimFinishAnnouncements(at: epoch + .seconds(60), limit: 10).isEmpty)
        _ = try await store.castBallot(makeBallot(single, by: ben, at: epoch + .seconds(90)))
        #expect(try await store.claimFinishAnnouncements(at: epoch + .seconds(100), limit: 10).map(\.id) == [single.id])
        #expect(try await store.claimFinishAnnouncements(at: epoch + .seconds(100), limit: 10).isEmpty, "claimed once")
        let late = epoch + .seconds(20 * 60)
        #expect(try await store.claimFinishAnnouncements(at: late, limit: 1).map(\.id) == [five.id], "oldest finish first")
        #expect(try await store.claimFinishAnnouncements(at: late, limit: 10).map(\.id) == [fifteen.id])
        #expect(try await store.claimFinishAnnouncements(at: late + .seconds(365 * 86_400), limit: 10).isEmpty, "permanent votes wait for their count")
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
                group.addTask { try await claimer.claimFinishAnnouncements(at: epoch + .seconds(600), limit: 7).map(\.id) }
            }
            return try await group.reduce(into: [VoteID]()) { $0 += $1 }
        }
        let rest = try await store.claimFinishAnnouncements(at: epoch + .seconds(600), limit: 100).map(\.id)
        #expect((claimed + rest).count == 40)
        #expect(Set(claimed + rest) == ids)
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
