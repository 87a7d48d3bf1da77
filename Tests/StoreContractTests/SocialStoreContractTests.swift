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

typealias SocialStore = AccountStore & PositionStore & FriendStore & EventStore & VoteStore & OutboxStore & PushStore

/// A store of each kind for the social and vote contracts: the same suites hold the SpatiaLite and PostGIS
/// stores to the in-memory one. `peer` is a second store on the same data, opened separately, as another
/// process would (the same store where there is no other: in memory); races run half their writers on it.
final class SocialSubject: Sendable {
    let store: any SocialStore
    let peer: any SocialStore
    let file: TemporaryFile?
    let postGIS: PostGISSchema?

    init(_ kind: StoreKind) async throws {
        switch kind {
        case .inMemory:
            store = InMemoryStore()
            peer = store
            file = nil
            postGIS = nil
        case .spatiaLite:
            let file = TemporaryFile()
            store = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"))
            peer = try SpatiaLiteStore(path: file.path, logger: Logger(label: "peer"))
            self.file = file
            postGIS = nil
        case .postGIS:
            let schema = try await PostGISSchema()
            store = schema.store
            peer = schema.peer
            file = nil
            postGIS = schema
        }
    }

    /// The store a racer at `index` writes through: every other one goes through the peer.
    func store(for index: Int) -> any SocialStore { index % 2 == 0 ? store : peer }

    deinit {
        try? (peer as? SpatiaLiteStore)?.close()
        try? (store as? SpatiaLiteStore)?.close()
    }
}

let epoch = Timestamp(millisecondsSince1970: 1_795_338_000_000)

func account(_ username: String, first: String = "Test", last: String? = nil, at time: Timestamp = epoch) throws -> Account {
    Account(
        id: .random(), username: try Username(username), firstName: try PersonName(first, field: "first_name"),
        lastName: try PersonName(last ?? username, field: "last_name"), email: nil, privacyMode: false, createdAt: time)
}

extension AccountStore {
    /// An account alone, with its password's hash: what most tests of other stores need of one.
    func createAccount(_ account: Account, passwordHash: PasswordHash) async throws {
        try await createAccount(StoredAccount(account: account, passwordHash: passwordHash), code: nil, message: nil)
    }
}

extension FriendStore {
    /// Makes two people friends as the store's own rule does: a request, and the other asking back.
    func befriend(_ a: UserID, _ b: UserID, at time: Timestamp = epoch) async throws {
        _ = try await sendFriendRequest(FriendRequest(id: .random(), from: a, to: b, createdAt: time))
        _ = try await sendFriendRequest(FriendRequest(id: .random(), from: b, to: a, createdAt: time))
    }
}

/// A poke to `recipient` from a sender who need not have an account (an event keeps what it tells), told apart
/// from other pokes by its time.
func poke(to recipient: UserID, number: Int = 0, from sender: Account? = nil) throws -> EventDraft {
    .poke(to: recipient, from: try (sender ?? account("sender")).summary, at: epoch + .milliseconds(Int64(number)))
}

/// A bcrypt-shaped hash, as the schema demands; no test here checks a password.
let someHash = PasswordHash(encoded: "$2b$04$abcdefghijklmnopqrstuuJ7o2nQ4bq8Yd1Vd8F1z1Xv6m0q6lG2m")

/// CSULB's Hall of Science, from Data/csulb-buildings.csv.
let hallOfScience: Coordinate = {
    do { return try Coordinate(latitude: 33.779842, longitude: -118.112526) } catch { preconditionFailure("\(error)") }
}()

@Suite("Account, position, friend and event store contract")
struct SocialStoreContractTests {
    @Test("accounts: usernames unique ignoring case, found by key, updated with names, privacy and password",
          arguments: StoreKind.available)
    func accounts(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let alice = try account("Alice", first: "Alice", last: "Ng")
        try await store.createAccount(alice, passwordHash: someHash)
        await #expect(throws: ServiceError.conflict(.usernameTaken)) {
            try await store.createAccount(try account("aLiCe"), passwordHash: someHash)
        }
        #expect(try await store.account(id: alice.id) == alice)
        #expect(try await store.credentials(usernameKey: "alice")?.account == alice)
        #expect(try await store.storedAccount(id: alice.id) == StoredAccount(account: alice, passwordHash: someHash))
        #expect(try await store.credentials(usernameKey: "alice")?.passwordHash == someHash)
        #expect(try await store.credentials(usernameKey: "Alice") == nil, "keys are lower case")
        #expect(try await store.accountCount() == 1)
        #expect(try await store.accounts(ids: [alice.id, .random(), alice.id]) == [alice])

        var changed = alice
        changed.lastName = try PersonName("Nguyễn", field: "last_name")
        changed.email = try Email("Alice@csulb.edu")
        changed.pendingEmail = try Email("alice.ng@student.csulb.edu")
        changed.privacyMode = true
        changed.disabled = true
        #expect(try await store.updateAccount(StoredAccount(account: changed, passwordHash: nil), ending: .none))
        #expect(try await store.storedAccount(id: alice.id) == StoredAccount(account: changed, passwordHash: nil))
        #expect(try await store.credentials(emailKey: "alice@csulb.edu")?.account == changed, "a verified address signs in ignoring case")
        #expect(try await store.credentials(emailKey: "alice.ng@student.csulb.edu") == nil, "an address waiting for its code does not")
        #expect(try await store.updateAccount(StoredAccount(account: try account("nobody"), passwordHash: someHash), ending: .none) == false)
        // A verified address is one account's, ignoring case, however the accounts race for it.
        let bob = try account("bob")
        try await store.createAccount(bob, passwordHash: someHash)
        var impostor = bob
        impostor.email = try Email("ALICE@csulb.edu")
        await #expect(throws: ServiceError.conflict(.emailTaken)) {
            try await store.updateAccount(StoredAccount(account: impostor, passwordHash: someHash), ending: .none)
        }
        #expect(try await store.account(id: bob.id) == bob, "a refused change changes nothing")
        // Name search reads the folded name: accents and case are ignored.
        #expect(try await store.accountsMatching("nguyen").map(\.id) == [alice.id])
        #expect(try await store.accountsMatching("ali").map(\.id) == [alice.id])
        #expect(try await store.accountsMatching("%").isEmpty, "LIKE wildcards are plain text")
        #expect(try await store.accountsMatching("zz").isEmpty)
    }

    @Test("sessions: found by digest, removed one by one, on expiry, and on a password change except the one kept",
          arguments: StoreKind.available)
    func sessions(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let alice = try account("alice")
        try await store.createAccount(alice, passwordHash: someHash)
        let tokens = (0..<3).map { _ in SessionToken.random() }
        for (index, token) in tokens.enumerated() {
            try await store.createSession(Session(
                digest: token.digest, userID: alice.id, createdAt: epoch, expiresAt: epoch + .seconds(Int64(60 * (index + 1)))))
        }
        #expect(try await store.session(tokens[0].digest)?.userID == alice.id)
        #expect(try await store.session(SessionToken.random().digest) == nil)
        #expect(try await store.deleteSessions(expiredBefore: epoch + .seconds(61)) == 1)
        #expect(try await store.session(tokens[0].digest) == nil)
        #expect(try await store.session(tokens[1].digest) != nil)
        let newHash = PasswordHash(encoded: "$2b$04$zzzzzzzzzzzzzzzzzzzzzuJ7o2nQ4bq8Yd1Vd8F1z1Xv6m0q6lG2m")
        #expect(try await store.updateAccount(StoredAccount(account: alice, passwordHash: newHash), ending: .allBut(tokens[2].digest)))
        #expect(try await store.session(tokens[1].digest) == nil)
        #expect(try await store.session(tokens[2].digest) != nil)
        #expect(try await store.storedAccount(id: alice.id)?.passwordHash == newHash)
        let byCode = SessionToken.random()
        try await store.createSession(Session(
            digest: byCode.digest, userID: alice.id, createdAt: epoch, expiresAt: epoch + .seconds(600), byCode: true))
        #expect(try await store.session(byCode.digest)?.byCode == true, "a session keeps whether a code opened it")
        #expect(try await store.updateAccount(StoredAccount(account: alice, passwordHash: newHash), ending: .all))
        #expect(try await store.session(tokens[2].digest) == nil, "disabling ends every session")
        #expect(try await store.session(byCode.digest) == nil, "the code's session too")
        try await store.deleteSession(tokens[2].digest)
    }

    @Test("positions: one per user, replaced, read singly or in bulk, deleted", arguments: StoreKind.available)
    func positions(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let alice = try account("alice"), bob = try account("bob")
        for person in [alice, bob] { try await store.createAccount(person, passwordHash: someHash) }
        var position = SharedPosition(
            userID: alice.id, coordinate: hallOfScience, accuracy: try Accuracy(meters: 12.5), status: try StatusText("Lab 🔬"),
            label: "Around Hall of Science", onCampus: nil, closestPlace: try PlaceID("csulb-hsci"), updatedAt: epoch)
        try await store.setPosition(position)
        #expect(try await store.position(of: alice.id) == position)
        position.coordinate = try Coordinate(latitude: -89.999, longitude: 180)
        position.status = nil
        position.accuracy = nil
        position.onCampus = false
        position.updatedAt = epoch + .seconds(5)
        try await store.setPosition(position)
        #expect(try await store.position(of: alice.id) == position)
        #expect(try await store.positions(of: [alice.id, bob.id]) == [position])
        #expect(try await store.deletePosition(of: alice.id))
        #expect(try await store.deletePosition(of: alice.id) == false)
        #expect(try await store.position(of: alice.id) == nil)
    }

    @Test("friend requests: sent, duplicated, crossed into a friendship, accepted, declined and cancelled only by their parties",
          arguments: StoreKind.available)
    func friendRequests(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let a = try account("anna"), b = try account("ben"), c = try account("cleo")
        for person in [a, b, c] { try await store.createAccount(person, passwordHash: someHash) }
        let ab = FriendRequest(id: .random(), from: a.id, to: b.id, createdAt: epoch)
        #expect(try await store.sendFriendRequest(ab) == .sent(ab))
        let again = FriendRequest(id: .random(), from: a.id, to: b.id, createdAt: epoch + .seconds(1))
        #expect(try await store.sendFriendRequest(again) == .alreadyRequested(ab))
        #expect(try await store.friendRequests(of: b.id) == [ab])
        #expect(try await store.relationships(of: a.id, with: [b.id, c.id]) == [b.id: .requestSent(ab.id)])
        #expect(try await store.relationships(of: b.id, with: [a.id]) == [a.id: .requestReceived(ab.id)])

        // Only the recipient accepts; a third party can neither accept nor withdraw.
        #expect(try await store.acceptFriendRequest(ab.id, recipient: a.id, at: epoch) == nil)
        #expect(try await store.acceptFriendRequest(ab.id, recipient: c.id, at: epoch) == nil)
        #expect(try await store.deleteFriendRequest(ab.id, participant: c.id) == nil)

        let crossed = FriendRequest(id: .random(), from: b.id, to: a.id, createdAt: epoch + .seconds(2))
        #expect(try await store.sendFriendRequest(crossed) == .becameFriends(accepted: ab, since: epoch + .seconds(2)))
        #expect(try await store.friendRequests(of: a.id).isEmpty)
        #expect(try await store.friendship(of: a.id, with: b.id)
            == Friendship(friend: b.id, since: epoch + .seconds(2), shareWithFriend: .exact, friendShareWithMe: .exact))
        #expect(try await store.sendFriendRequest(FriendRequest(id: .random(), from: b.id, to: a.id, createdAt: epoch)) == .alreadyFriends)

        let ca = FriendRequest(id: .random(), from: c.id, to: a.id, createdAt: epoch + .seconds(3))
        _ = try await store.sendFriendRequest(ca)
        #expect(try await store.deleteFriendRequest(ca.id, participant: a.id) == ca, "declined")
        _ = try await store.sendFriendRequest(ca)
        #expect(try await store.deleteFriendRequest(ca.id, participant: c.id) == ca, "cancelled")
        _ = try await store.sendFriendRequest(ca)
        #expect(try await store.acceptFriendRequest(ca.id, recipient: a.id, at: epoch + .seconds(4)) == ca)
        #expect(Set(try await store.friendships(of: a.id).map(\.friend)) == [b.id, c.id])
        #expect(try await store.relationships(of: a.id, with: [b.id, c.id]) == [b.id: .friend, c.id: .friend])
    }

    @Test("a request, a request asked back and an accept commit with their events, or, when the events fail, not at all",
          arguments: StoreKind.available)
    func friendChangesWithTheirEvents(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let a = try account("anna"), b = try account("ben"), c = try account("cleo")
        for person in [a, b, c] { try await store.createAccount(person, passwordHash: someHash) }
        struct Refused: Error {}
        func events(of user: UserID) async throws -> [Event] {
            try await store.events(for: user, after: nil, since: epoch, limit: 10)
        }

        // Making the events fails: the request is not recorded either.
        let ab = FriendRequest(id: .random(), from: a.id, to: b.id, createdAt: epoch)
        await #expect(throws: Refused.self) { try await store.sendFriendRequest(ab) { _ in throw Refused() } }
        #expect(try await store.friendRequests(of: b.id).isEmpty)
        #expect(try await events(of: b.id).isEmpty)

        // Recorded with its event, which the outcome named.
        let sent = try await store.sendFriendRequest(ab) { outcome in
            guard case .sent(let request) = outcome else { return [] }
            return [.friendRequest(request, from: a.summary)]
        }
        #expect(sent == .sent(ab))
        #expect(try await store.friendRequests(of: b.id) == [ab])
        #expect(try await events(of: b.id).map(\.payload) == [.friendRequest(ab.id, from: a.summary)])

        // An accept whose events fail leaves the request pending and no friendship; then it goes through.
        await #expect(throws: Refused.self) {
            try await store.acceptFriendRequest(ab.id, recipient: b.id, at: epoch + .seconds(1)) { _ in throw Refused() }
        }
        #expect(try await store.friendRequests(of: b.id) == [ab])
        #expect(try await store.friendship(of: a.id, with: b.id) == nil)
        let accepted = try await store.acceptFriendRequest(ab.id, recipient: b.id, at: epoch + .seconds(1)) { request in
            [.friendAccepted(to: request.from, friend: b.summary, at: epoch + .seconds(1))]
        }
        #expect(accepted == ab)
        #expect(try await store.friendship(of: a.id, with: b.id) != nil)
        #expect(try await events(of: a.id).map(\.payload) == [.friendAccepted(friend: b.summary)])

        // Asked back: the friendship and the first asker's event together, or neither.
        let ca = FriendRequest(id: .random(), from: c.id, to: a.id, createdAt: epoch + .seconds(2))
        _ = try await store.sendFriendRequest(ca)
        let ac = FriendRequest(id: .random(), from: a.id, to: c.id, createdAt: epoch + .seconds(3))
        await #expect(throws: Refused.self) { try await store.sendFriendRequest(ac) { _ in throw Refused() } }
        #expect(try await store.friendship(of: a.id, with: c.id) == nil)
        #expect(try await store.friendRequests(of: a.id) == [ca])
        let crossed = try await store.sendFriendRequest(ac) { outcome in
            guard case .becameFriends(_, let since) = outcome else { return [] }
            return [.friendAccepted(to: c.id, friend: a.summary, at: since)]
        }
        #expect(crossed == .becameFriends(accepted: ca, since: epoch + .seconds(3)))
        #expect(try await store.friendship(of: c.id, with: a.id) != nil)
        #expect(try await events(of: c.id).map(\.payload) == [.friendAccepted(friend: a.summary)])
    }

    @Test("sharing starts at each one's default and is set per direction; ending a friendship ends both sides",
          arguments: StoreKind.available)
    func sharingAndEnding(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        var a = try account("anna")
        a.defaultShare = .building
        let b = try account("ben")
        for person in [a, b] { try await store.createAccount(person, passwordHash: someHash) }
        _ = try await store.sendFriendRequest(FriendRequest(id: .random(), from: a.id, to: b.id, createdAt: epoch))
        #expect(try await store.setSharing(.none, from: a.id, to: b.id) == nil, "not friends yet")
        _ = try await store.sendFriendRequest(FriendRequest(id: .random(), from: b.id, to: a.id, createdAt: epoch))
        let started = try await store.friendship(of: a.id, with: b.id)
        #expect(started?.shareWithFriend == .building && started?.friendShareWithMe == .exact)
        let hidden = try await store.setSharing(.none, from: a.id, to: b.id)
        #expect(hidden?.shareWithFriend == ShareLevel.none && hidden?.friendShareWithMe == .exact)
        #expect(try await store.friendship(of: b.id, with: a.id)?.friendShareWithMe == ShareLevel.none)
        #expect(try await store.setSharing(.building, from: a.id, to: b.id)?.shareWithFriend == .building)
        #expect(try await store.friendship(of: b.id, with: a.id)?.friendShareWithMe == .building)
        #expect(try await store.endFriendship(of: b.id, with: a.id))
        #expect(try await store.friendship(of: a.id, with: b.id) == nil)
        #expect(try await store.friendships(of: b.id).isEmpty)
        #expect(try await store.endFriendship(of: a.id, with: b.id) == false)
    }

    @Test("fifty pairs asking each other at the same moment end with one friendship each and no request left",
          arguments: StoreKind.available)
    func concurrentMutualRequests(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        var pairs: [(Account, Account)] = []
        for index in 0..<50 {
            let pair = (try account("left\(index)"), try account("right\(index)"))
            try await store.createAccount(pair.0, passwordHash: someHash)
            try await store.createAccount(pair.1, passwordHash: someHash)
            pairs.append(pair)
        }
        let outcomes = try await withThrowingTaskGroup(of: FriendRequestOutcome.self) { group in
            for (left, right) in pairs {
                for (side, (from, to)) in [(left, right), (right, left)].enumerated() {
                    let writer = subject.store(for: side)
                    group.addTask {
                        try await writer.sendFriendRequest(FriendRequest(id: .random(), from: from.id, to: to.id, createdAt: epoch))
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.filter { if case .sent = $0 { true } else { false } }.count == 50)
        #expect(outcomes.filter { if case .becameFriends = $0 { true } else { false } }.count == 50)
        for (left, right) in pairs {
            #expect(try await store.friendships(of: left.id).map(\.friend) == [right.id])
            #expect(try await store.friendships(of: right.id).map(\.friend) == [left.id])
            #expect(try await store.friendRequests(of: left.id).isEmpty)
        }
    }

    @Test("events: numbered upwards across recipients, read after a number and since a time, removed when old",
          arguments: StoreKind.available)
    func events(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let a = try account("anna", first: "ก\"\\ 🙂"), b = try account("ben")
        for person in [a, b] { try await store.createAccount(person, passwordHash: someHash) }
        let drafts = (0..<6).map { index in
            EventDraft.poke(to: index % 2 == 0 ? a.id : b.id, from: a.summary, at: epoch + .seconds(Int64(index)))
        }
        let recorded = try await store.appendEvents(drafts)
        #expect(recorded.map(\.id) == recorded.map(\.id).sorted())
        #expect(Set(recorded.map(\.id)).count == 6)
        let forA = try await store.events(for: a.id, after: nil, since: epoch, limit: 10)
        #expect(forA == recorded.filter { $0.recipient == a.id })
        #expect(try await store.events(for: a.id, after: forA[0].id, since: epoch, limit: 10) == Array(forA.dropFirst()))
        #expect(try await store.events(for: a.id, after: nil, since: epoch + .seconds(3), limit: 10) == [forA[2]])
        #expect(try await store.events(for: a.id, after: nil, since: epoch, limit: 2) == Array(forA.prefix(2)))
        #expect(try await store.deleteEvents(before: epoch + .seconds(4)) == 4)
        // Numbers are never reused after old events go.
        let later = try await store.appendEvents([.friendAccepted(to: a.id, friend: b.summary, at: epoch)])
        #expect(later[0].id > (try #require(recorded.last)).id)
    }

    @Test("a reader following one recipient while eight writers append through two stores never skips an event",
          arguments: StoreKind.available)
    func replayNeverSkips(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let followed = try account("followed"), other = try account("other")
        for person in [followed, other] { try await store.createAccount(person, passwordHash: someHash) }
        let writersDone = Mutex(false)
        async let written: [EventID] = withThrowingTaskGroup(of: [EventID].self) { group in
            for writer in 0..<8 {
                let target = subject.store(for: writer)
                group.addTask {
                    var ids: [EventID] = []
                    for round in 0..<25 {
                        // Some appends also hold an event for another recipient, first or last.
                        let mine = try poke(to: followed.id, number: round)
                        let theirs = try poke(to: other.id)
                        let drafts = [[mine], [mine, theirs], [theirs, mine]][(writer + round) % 3]
                        ids += try await target.appendEvents(drafts).filter { $0.recipient == followed.id }.map(\.id)
                    }
                    return ids
                }
            }
            let all = try await group.reduce(into: [EventID]()) { $0 += $1 }
            writersDone.withLock { $0 = true }
            return all
        }
        var seen: [EventID] = []
        while true {
            let finished = writersDone.withLock { $0 }
            let batch = try await subject.peer.events(for: followed.id, after: seen.last, since: epoch, limit: 1000)
            seen += batch.map(\.id)
            if finished && batch.isEmpty { break }
            await Task.yield()
        }
        let appended = try await written
        #expect(appended.count == 200)
        #expect(seen == appended.sorted(), "the reader saw every event once, in order")
    }
}

@Suite("SpatiaLite file with accounts")
struct SocialSpatiaLiteFileTests {
    @Test("accounts, friendships, positions and events survive reopening, and the file's indexes stay healthy")
    func reopen() async throws {
        let file = TemporaryFile()
        let a = try account("anna"), b = try account("ben")
        do {
            let store = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"))
            for person in [a, b] { try await store.createAccount(person, passwordHash: someHash) }
            try await store.befriend(a.id, b.id)
            try await store.setPosition(SharedPosition(
                userID: a.id, coordinate: hallOfScience, accuracy: nil, status: nil, label: "Around Hall of Science",
                onCampus: nil, closestPlace: nil, updatedAt: epoch))
            _ = try await store.appendEvents([try poke(to: b.id)])
            try store.close()
        }
        let store = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"))
        defer { try? store.close() }
        #expect(try await store.account(id: a.id) == a)
        #expect(try await store.friendship(of: b.id, with: a.id) != nil)
        #expect(try await store.position(of: a.id)?.coordinate == hallOfScience)
        #expect(try await store.events(for: b.id, after: nil, since: epoch, limit: 10).count == 1)
        #expect(try await store.integrityProblems() == [])
    }

    @Test("positions are points in a SpatiaLite R*Tree that spatial SQL can query")
    func positionIndex() async throws {
        let file = TemporaryFile()
        let store = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"))
        let a = try account("anna")
        try await store.createAccount(a, passwordHash: someHash)
        try await store.setPosition(SharedPosition(
            userID: a.id, coordinate: hallOfScience, accuracy: nil, status: nil, label: "", onCampus: nil,
            closestPlace: nil, updatedAt: epoch))
        try store.close()
        let queue = try DatabaseQueue(path: file.path)
        let hits = try await queue.read { db in
            try Int.fetchOne(db, sql: """
                SELECT count(*) FROM idx_user_position_geom
                WHERE xmin <= -118.11 AND xmax >= -118.12 AND ymin <= 33.78 AND ymax >= 33.77
                """)
        }
        #expect(hits == 1)
    }
}

@Suite("Upgrading a database made before accounts existed")
struct SchemaUpgradeTests {
    @Test("a database at the places-only schema opens with its places intact and takes accounts and positions")
    func upgradeFromPlacesOnly() async throws {
        let file = TemporaryFile()
        // Build the file as the previous release did: the migrations up to the name search index, then places.
        do {
            var configuration = Configuration()
            configuration.prepareDatabase { db in try SpatiaLiteConnection.initialise(db) }
            let pool = try DatabasePool(path: file.path, configuration: configuration)
            try Schema.migrator.migrate(pool, upTo: "v2 place name search")
            try await pool.write { db in
                try db.execute(sql: """
                    INSERT INTO place (id, name, category, search_text, lat, lon, geom)
                    VALUES ('csulb-hsci', 'Hall of Science', 'academic', 'hall of science', 33.779842, -118.112526,
                            MakePoint(-118.112526, 33.779842, 4326))
                    """)
            }
            try pool.close()
        }
        let store = try SpatiaLiteStore(path: file.path, logger: Logger(label: "test"))
        defer { try? store.close() }
        #expect(try await store.place(id: PlaceID("csulb-hsci"))?.name == "Hall of Science")
        #expect(try await store.search(PlaceSearch(text: "science")).map(\.id.rawValue) == ["csulb-hsci"])
        let alice = try account("alice")
        try await store.createAccount(alice, passwordHash: someHash)
        try await store.setPosition(SharedPosition(
            userID: alice.id, coordinate: hallOfScience, accuracy: nil, status: nil, label: "Around Hall of Science",
            onCampus: nil, closestPlace: try PlaceID("csulb-hsci"), updatedAt: epoch))
        #expect(try await store.position(of: alice.id)?.closestPlace == PlaceID("csulb-hsci"))
        #expect(try await store.integrityProblems() == [])
    }
}
