import Foundation
import GeoCore
import Synchronization
import Testing
import VicinityCore
import VicinityPostGIS
import VicinitySpatiaLite
import VicinitySQL

/// One check of the change feed, run on a store and a second one over the same data (another process, where
/// the kind has one).
protocol FeedCheck {
    func run<Feed: ChangeFeed & SocialStore>(_ store: Feed, _ peer: Feed) async throws
}

extension SocialSubject {
    /// Runs `check` with the subject's stores as the concrete type they are, which the feed's cursor needs.
    func run(_ check: some FeedCheck) async throws {
        if let store = store as? InMemoryStore, let peer = peer as? InMemoryStore {
            try await check.run(store, peer)
        } else if let store = store as? SpatiaLiteStore, let peer = peer as? SpatiaLiteStore {
            try await check.run(store, peer)
        } else if let store = store as? PostGISStore, let peer = peer as? PostGISStore {
            try await check.run(store, peer)
        } else {
            Issue.record("no change feed for \(type(of: store))")
        }
    }
}

/// A position with nothing but a place and a time.
func position(of user: UserID, at coordinate: Coordinate = hallOfScience) -> SharedPosition {
    SharedPosition(
        userID: user, coordinate: coordinate, accuracy: nil, status: nil, label: "Around Hall of Science", onCampus: nil,
        closestPlace: nil, updatedAt: epoch)
}

/// What `body` returns, or nil once `limit` has passed (it is then cancelled): a wait for something the code
/// under test signals, which fails the test rather than holding the suite if the signal never comes.
private func within<Value: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async -> Value) async -> Value? {
    await withTaskGroup(of: Value?.self) { group in
        group.addTask { await body() }
        group.addTask {
            // The deadline's timer, not a wait for the thing itself.
            try? await Task.sleep(for: limit)
            return nil
        }
        defer { group.cancelAll() }
        return await group.next() ?? nil
    }
}

/// A flag raised once by one task and read by others.
private final class Flag: Sendable {
    private let raised = Atomic<Bool>(false)

    func raise() { raised.store(true, ordering: .releasing) }

    var isRaised: Bool { raised.load(ordering: .acquiring) }
}

/// Reads every change from `cursor` on until `done` says the writers have finished and a read after that
/// finds nothing more.
func follow<Feed: ChangeFeed>(_ feed: Feed, from cursor: Feed.ChangeCursor, until done: @Sendable () -> Bool) async throws -> [Change] {
    var cursor = cursor
    var read: [Change] = []
    while true {
        let finished = done()
        guard case .changes(let changes, let next) = try await feed.changes(after: cursor) else {
            Issue.record("the feed expired under a reader that keeps up")
            return read
        }
        read += changes
        cursor = next
        if finished && changes.isEmpty { return read }
        await Task.yield()
    }
}

/// The changes after `cursor`, moving the cursor past them; none, with the test failed, when the feed expired.
func changesSince<Feed: ChangeFeed>(_ cursor: inout Feed.ChangeCursor, in feed: Feed) async throws -> [Change] {
    guard case .changes(let changes, let next) = try await feed.changes(after: cursor) else {
        Issue.record("the feed expired")
        return []
    }
    cursor = next
    return changes
}

@Suite("Change feed contract")
struct ChangeFeedContractTests {
    @Test("every position, vote and event written after a cursor is read once, in the order written, and nothing from before it",
          arguments: StoreKind.available)
    func readsWhatWasWritten(kind: StoreKind) async throws {
        struct Check: FeedCheck {
            func run<Feed: ChangeFeed & SocialStore>(_ store: Feed, _ peer: Feed) async throws {
                let ana = try account("ana"), ben = try account("ben")
                for person in [ana, ben] { try await store.createAccount(person, passwordHash: someHash) }
                let here = position(of: ana.id)
                try await store.setPosition(here)
                _ = try await store.appendEvents([try poke(to: ben.id)])

                let cursor = try await peer.changeCursor()
                guard case .changes(let none, _) = try await peer.changes(after: cursor) else {
                    Issue.record("a new cursor expired")
                    return
                }
                #expect(none.isEmpty, "what came before the cursor is not read")

                var moved = here
                moved.userID = ben.id
                try await store.setPosition(moved)
                try await store.setPosition(here)
                #expect(try await store.deletePosition(of: ana.id))
                #expect(try await store.deletePosition(of: ana.id) == false)
                let events = try await store.appendEvents([try poke(to: ana.id), try poke(to: ben.id)])
                let vote = try makeVote(by: ana.id, participants: 2)
                #expect(try await store.createVote(vote, passwordHash: someHash))
                #expect(try await store.createVote(vote, passwordHash: someHash) == false)
                guard case .cast = try await store.castBallot(makeBallot(vote, by: ben)) else {
                    Issue.record("the ballot was not cast")
                    return
                }
                guard case .changes(let changes, let next) = try await peer.changes(after: cursor) else {
                    Issue.record("the feed expired")
                    return
                }
                #expect(changes == [
                    .position(ben.id), .position(ana.id), .position(ana.id),
                    .event(events[0].id, recipient: ana.id), .event(events[1].id, recipient: ben.id),
                    .vote(vote.id), .vote(vote.id),
                ])
                guard case .changes(let again, _) = try await peer.changes(after: next) else {
                    Issue.record("the feed expired")
                    return
                }
                #expect(again.isEmpty, "each change is read once")
            }
        }
        let subject = try await SocialSubject(kind)
        defer { withExtendedLifetime(subject) {} }
        try await subject.run(Check())
    }

    @Test("an alert set, moved on, removed, or ended with its friendship or an account is one change, for the person it watches, and only that; a move names the alert and the state it left",
          arguments: StoreKind.available)
    func alertsAreChanges(kind: StoreKind) async throws {
        struct Check: FeedCheck {
            func run<Feed: ChangeFeed & SocialStore>(_ store: Feed, _ peer: Feed) async throws {
                let ana = try account("ana"), ben = try account("ben"), cy = try account("cyra")
                for person in [ana, ben, cy] { try await store.createAccount(person, passwordHash: someHash) }
                try await store.befriend(ana.id, ben.id)
                try await store.befriend(ana.id, cy.id)
                func nearby(_ watcher: Account, on watched: Account) throws -> Alert {
                    Alert(id: .random(), watcher: watcher.id, watched: watched.id, target: .nearby, radius: try AlertRadius(meters: 200), createdAt: epoch)
                }
                var cursor = try await peer.changeCursor()
                /// The alert changes since the last look: how many for each person.
                func changed() async throws -> [UserID: Int] {
                    try await changesSince(&cursor, in: peer).reduce(into: [:]) { counts, change in
                        switch change {
                        case .alerts(let person): counts[person, default: 0] += 1
                        case .alertMoved(let move): counts[move.watched, default: 0] += 1
                        default: break
                        }
                    }
                }
                /// The alert changes since the last look, as they are.
                func noted() async throws -> [Change] {
                    try await changesSince(&cursor, in: peer).filter { change in
                        switch change {
                        case .alerts, .alertMoved: true
                        default: false
                        }
                    }
                }
                let anaOnBen = try nearby(ana, on: ben), benOnAna = try nearby(ben, on: ana), cyOnAna = try nearby(cy, on: ana)
                for alert in [anaOnBen, benOnAna, cyOnAna] { #expect(try await store.addAlert(alert, limit: 10) == .added(alert)) }
                #expect(try await changed() == [ana.id: 2, ben.id: 1])
                #expect(Set(try await peer.alerts(involvingAny: [ben.id, cy.id])) == [anaOnBen, benOnAna, cyOnAna])
                #expect(Set(try await peer.allAlerts()) == [anaOnBen, benOnAna, cyOnAna])

                #expect(try await store.advance(anaOnBen, from: nil, to: true, toldAt: nil, telling: nil))
                #expect(try await store.advance(anaOnBen, from: nil, to: false, toldAt: nil, telling: nil) == false)
                #expect(try await noted() == [.alertMoved(AlertMove(watched: ben.id, alert: anaOnBen.id, inside: true, toldAt: nil))],
                        "a move that moved nothing is no change")
                let told = Timestamp(millisecondsSince1970: 1_700_000_000_123)
                #expect(try await store.advance(anaOnBen, from: true, to: false, toldAt: told, telling: nil))
                #expect(try await noted() == [.alertMoved(AlertMove(watched: ben.id, alert: anaOnBen.id, inside: false, toldAt: told))])
                try await store.setPosition(position(of: ben.id))
                #expect(try await changed().isEmpty, "a position is no alert change")

                #expect(try await store.removeAlert(benOnAna.id, watcher: ben.id))
                #expect(try await changed() == [ana.id: 1])
                #expect(try await store.endFriendship(of: ben.id, with: ana.id))
                #expect(try await changed() == [ben.id: 1], "the friendship ends Ana's alert on Ben")
                #expect(try await store.deleteAccount(cy.id, at: epoch, cancel: { _ in false }, announcements: { _, _ in [] }))
                #expect(try await changed() == [ana.id: 1], "Cy's alert on Ana ends with Cy")
                #expect(try await peer.allAlerts().isEmpty)
                #expect(try await peer.alerts(involvingAny: []).isEmpty)
            }
        }
        let subject = try await SocialSubject(kind)
        defer { withExtendedLifetime(subject) {} }
        try await subject.run(Check())
    }

    @Test("a session ended by signing out, by a password change, by expiry or with its account is a change for its account; one begun is none",
          arguments: StoreKind.available)
    func sessionEndingsAreChanges(kind: StoreKind) async throws {
        struct Check: FeedCheck {
            func run<Feed: ChangeFeed & SocialStore>(_ store: Feed, _ peer: Feed) async throws {
                let ana = try account("ana"), ben = try account("ben")
                for person in [ana, ben] { try await store.createAccount(person, passwordHash: someHash) }
                var cursor = try await peer.changeCursor()
                func ended() async throws -> [UserID] {
                    try await changesSince(&cursor, in: peer).compactMap { change in
                        if case .sessions(let account) = change { account } else { nil }
                    }
                }
                func session(of person: Account, lasting seconds: Int64 = 600) async throws -> TokenDigest {
                    let digest = SessionToken.random().digest
                    try await store.createSession(Session(digest: digest, userID: person.id, createdAt: epoch, expiresAt: epoch + .seconds(seconds)))
                    return digest
                }
                let first = try await session(of: ana)
                _ = try await session(of: ana)
                let third = try await session(of: ana)
                _ = try await session(of: ben, lasting: 1)
                #expect(try await ended().isEmpty, "signing in is no change")
                try await store.deleteSession(first)
                #expect(try await ended() == [ana.id])
                #expect(try await store.updateAccount(StoredAccount(account: ana, passwordHash: someHash), ending: .allBut(third)))
                #expect(try await ended() == [ana.id], "the password change ended the second")
                #expect(try await store.deleteSessions(expiredBefore: epoch + .seconds(2)) == 1)
                #expect(try await ended() == [ben.id])
                #expect(try await store.deleteAccount(ana.id, at: epoch, cancel: { _ in false }, announcements: { _, _ in [] }))
                #expect(try await ended() == [ana.id])
            }
        }
        let subject = try await SocialSubject(kind)
        defer { withExtendedLifetime(subject) {} }
        try await subject.run(Check())
    }

    @Test("an account changed, verified or deleted is a change for it; a friendship made, shared differently or ended one for both people; a request alone none",
          arguments: StoreKind.available)
    func accountAndFriendshipChanges(kind: StoreKind) async throws {
        struct Check: FeedCheck {
            func run<Feed: ChangeFeed & SocialStore>(_ store: Feed, _ peer: Feed) async throws {
                let ana = try account("ana"), ben = try account("ben"), cy = try account("cyra")
                for person in [ana, ben, cy] { try await store.createAccount(person, passwordHash: someHash) }
                var cursor = try await peer.changeCursor()
                /// The accounts and the people whose friendships changed since the last call, each once.
                func changed() async throws -> (accounts: Set<UserID>, friendships: Set<UserID>) {
                    var found: (accounts: Set<UserID>, friendships: Set<UserID>) = ([], [])
                    for change in try await changesSince(&cursor, in: peer) {
                        switch change {
                        case .account(let user): found.accounts.insert(user)
                        case .friendships(let user): found.friendships.insert(user)
                        default: continue
                        }
                    }
                    return found
                }
                let request = FriendRequest(id: .random(), from: ana.id, to: ben.id, createdAt: epoch)
                _ = try await store.sendFriendRequest(request)
                #expect(try await changed() == ([], []), "a request is no friendship")
                #expect(try await store.acceptFriendRequest(request.id, recipient: ben.id, at: epoch) != nil)
                #expect(try await changed() == ([], [ana.id, ben.id]))
                #expect(try await store.setSharing(.building, until: nil, from: ben.id, to: ana.id) != nil)
                #expect(try await changed() == ([], [ana.id, ben.id]))
                var renamed = ana
                renamed.firstName = try PersonName("Anna", field: "first_name")
                #expect(try await store.updateAccount(StoredAccount(account: renamed, passwordHash: someHash), ending: .none))
                #expect(try await changed() == ([ana.id], []))
                #expect(try await store.endFriendship(of: ben.id, with: ana.id))
                #expect(try await changed() == ([], [ana.id, ben.id]))
                let pair = FriendRequest(id: .random(), from: cy.id, to: ben.id, createdAt: epoch)
                _ = try await store.sendFriendRequest(pair)
                _ = try await store.acceptFriendRequest(pair.id, recipient: ben.id, at: epoch)
                #expect(try await changed() == ([], [ben.id, cy.id]))
                #expect(try await store.deleteAccount(cy.id, at: epoch, cancel: { _ in false }, announcements: { _, _ in [] }))
                #expect(try await changed() == ([cy.id], [ben.id, cy.id]), "deleting an account ends its friendships")
            }
        }
        let subject = try await SocialSubject(kind)
        defer { withExtendedLifetime(subject) {} }
        try await subject.run(Check())
    }

    @Test("a reader following while eight writers write through two stores is given every change once, each recipient's events in order",
          arguments: StoreKind.available)
    func concurrentWritersAreFollowed(kind: StoreKind) async throws {
        struct Check: FeedCheck {
            func run<Feed: ChangeFeed & SocialStore>(_ store: Feed, _ peer: Feed) async throws {
                let people = try (0..<8).map { try account("writer\($0)") }
                let followed = try account("followed")
                for person in people + [followed] { try await store.createAccount(person, passwordHash: someHash) }
                let cursor = try await peer.changeCursor()
                let done = Mutex(false)
                async let written: [EventID] = withThrowingTaskGroup(of: [EventID].self) { group in
                    for (index, person) in people.enumerated() {
                        let target = index % 2 == 0 ? store : peer
                        group.addTask {
                            var events: [EventID] = []
                            for round in 0..<25 {
                                let spot = try Coordinate(latitude: 33.77 + Double(round) * 1e-4, longitude: -118.11)
                                try await target.setPosition(position(of: person.id, at: spot))
                                events += try await target.appendEvents([
                                    try poke(to: followed.id, number: round),
                                ]).map(\.id)
                            }
                            return events
                        }
                    }
                    let all = try await group.reduce(into: [EventID]()) { $0 += $1 }
                    done.withLock { $0 = true }
                    return all
                }
                let read = try await follow(peer, from: cursor) { done.withLock { $0 } }
                let appended = try await written
                let positions = read.compactMap { change -> UserID? in
                    if case .position(let user) = change { user } else { nil }
                }
                let events = read.compactMap { change -> EventID? in
                    if case .event(let id, _) = change { id } else { nil }
                }
                #expect(Dictionary(grouping: positions, by: { $0 }).mapValues(\.count) == Dictionary(uniqueKeysWithValues: people.map { ($0.id, 25) }))
                #expect(appended.count == 200)
                #expect(events == appended.sorted(), "every event once, in the order of its number")
            }
        }
        let subject = try await SocialSubject(kind)
        defer { withExtendedLifetime(subject) {} }
        try await subject.run(Check())
    }

    @Test("a reader behind pruned changes is told to start again, and a new cursor reads on",
          arguments: StoreKind.available)
    func prunedChangesExpire(kind: StoreKind) async throws {
        struct Check: FeedCheck {
            func run<Feed: ChangeFeed & SocialStore>(_ store: Feed, _ peer: Feed) async throws {
                let ana = try account("ana")
                try await store.createAccount(ana, passwordHash: someHash)
                let behind = try await peer.changeCursor()
                try await store.setPosition(position(of: ana.id))
                #expect(try await store.pruneChanges(olderThan: .seconds(3600)) == 0, "nothing is an hour old")
                // Older than an hour from now: everything, once no transaction older than it is open (other
                // tests share the server and keep some open for a while). Nothing tells when another session's
                // transaction ends, so this asks PostgreSQL again after a short pause, for at most a minute.
                var pruned = 0
                let deadline = ContinuousClock.now + .seconds(60)
                while pruned == 0, ContinuousClock.now < deadline {
                    pruned = try await store.pruneChanges(olderThan: .seconds(-3600))
                    if pruned == 0 { try await Task.sleep(for: .milliseconds(20)) }
                }
                #expect(pruned == 1)
                guard case .expired = try await peer.changes(after: behind) else {
                    Issue.record("a reader behind pruned changes was not told")
                    return
                }
                let fresh = try await peer.changeCursor()
                #expect(try await store.deletePosition(of: ana.id))
                guard case .changes(let changes, _) = try await peer.changes(after: fresh) else {
                    Issue.record("a cursor taken after pruning expired")
                    return
                }
                #expect(changes == [.position(ana.id)])
            }
        }
        let subject = try await SocialSubject(kind)
        defer { withExtendedLifetime(subject) {} }
        try await subject.run(Check())
    }

    @Test("a wait for changes ends when the store writes one, long before its timeout", arguments: StoreKind.available)
    func waitEndsOnWrite(kind: StoreKind) async throws {
        struct Check: FeedCheck {
            let acrossStores: Bool
            /// Whether the waiter listens for notices from other processes (PostgreSQL's stores).
            let listens: Bool
            func run<Feed: ChangeFeed & SocialStore>(_ store: Feed, _ peer: Feed) async throws {
                let ana = try account(acrossStores ? "across" : "within")
                try await store.createAccount(ana, passwordHash: someHash)
                let waiter = acrossStores ? peer : store
                // The first wait starts listening, and ends when listening has begun, since that begins with a
                // wake: a notice sent after it is heard. A store that does not listen ends it after a moment.
                try await waiter.waitForChanges(timeout: listens ? .seconds(300) : .milliseconds(1))
                let clock = ContinuousClock()
                let started = clock.now
                async let waited: Void = waiter.waitForChanges(timeout: .seconds(300))
                // One write: its notice ends the wait whether it comes before the wait has begun or after
                // (`ChangeSignal`).
                try await store.setPosition(position(of: ana.id))
                try await waited
                #expect(clock.now - started < .seconds(120), "woken by the write, not the timeout")
            }
        }
        let subject = try await SocialSubject(kind)
        defer { withExtendedLifetime(subject) {} }
        try await subject.run(Check(acrossStores: false, listens: kind == .postGIS))
        // Another process hears of changes only from PostgreSQL; SpatiaLite's readers in other processes read
        // again when their wait times out.
        if kind == .postGIS { try await subject.run(Check(acrossStores: true, listens: true)) }
    }

    @Test("two fronts writing the same people's positions at once both end with what the record holds",
          arguments: StoreKind.available)
    func frontsConverge(kind: StoreKind) async throws {
        struct Check: FeedCheck {
            func run<Feed: ChangeFeed & SocialStore>(_ store: Feed, _ peer: Feed) async throws {
                let people = try (0..<3).map { try account("shared\($0)") }
                for person in people { try await store.createAccount(person, passwordHash: someHash) }
                let fronts = [try await IndexedPositions(record: store), try await IndexedPositions(record: peer)]
                let writesDone = Flag()
                // Each follower tells, once, that it has applied a read begun after the writes were done: its
                // front then holds what it read of the record. A follower that stops ends the telling.
                let (caughtUp, tell) = AsyncStream<Int>.makeStream()
                let followers = [store, peer].enumerated().map { index, feed in
                    Task {
                        defer { tell.finish() }
                        var cursor = try await feed.changeCursor()
                        var told = false
                        while !Task.isCancelled {
                            let afterWrites = writesDone.isRaised
                            guard case .changes(let changes, let next) = try await feed.changes(after: cursor) else { return }
                            cursor = next
                            try await fronts[index].refresh(changes.compactMap { change -> UserID? in
                                if case .position(let user) = change { user } else { nil }
                            })
                            if afterWrites && !told {
                                told = true
                                tell.yield(index)
                            }
                            try await feed.waitForChanges(timeout: .milliseconds(100))
                        }
                    }
                }
                defer { for follower in followers { follower.cancel() } }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for writer in 0..<4 {
                        group.addTask {
                            for round in 0..<30 {
                                let person = people[(writer + round) % people.count]
                                let spot = try Coordinate(latitude: 33.77 + Double(writer * 100 + round) * 1e-5, longitude: -118.11)
                                try await fronts[writer % 2].setPosition(position(of: person.id, at: spot))
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                writesDone.raise()
                let bothFollowed = await within(.seconds(60)) {
                    var followed: Set<Int> = []
                    for await index in caughtUp {
                        followed.insert(index)
                        if followed.count == fronts.count { return true }
                    }
                    return false
                }
                #expect(bothFollowed == true, "both followers read the feed after the writes")
                // A front left behind for good fails here.
                let record = Set(try await store.positions(of: people.map(\.id)))
                for front in fronts {
                    #expect(Set(try await front.positions(of: people.map(\.id))) == record, "each front's memory equals the record once the writes are done")
                }
            }
        }
        let subject = try await SocialSubject(kind)
        defer { withExtendedLifetime(subject) {} }
        try await subject.run(Check())
    }
}
