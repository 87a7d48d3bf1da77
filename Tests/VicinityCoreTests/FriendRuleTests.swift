import Foundation
import GeoCore
import GeoTestSupport
import Synchronization
import Testing
import VicinityCore

/// A small world: services over an in-memory store with a manual clock, and helpers to make people.
typealias World = TestWorld<InMemoryStore>

/// The same world with places, positions and alerts held in memory in front of the store, as the server runs.
typealias HeldWorld = TestWorld<IndexedStores<InMemoryStore>>

struct TestWorld<S: Stores> {
    let clock = ManualClock()
    let store = InMemoryStore()
    let stores: S
    let services: Services<S>

    /// The world over `stores`, made from the store that holds its two places.
    private init(settings: ServiceSettings, stores: (InMemoryStore, ManualClock) async throws -> S) async throws {
        let hall = try Place(id: PlaceID("csulb-hsci"), name: "Hall of Science", category: "academic", coordinate: Spot.hallOfScience)
        let library = try Place(id: PlaceID("csulb-lib"), name: "Library", category: "academic", coordinate: Spot.library)
        _ = try await store.upsert([hall, library])
        self.stores = try await stores(store, clock)
        services = Services(stores: self.stores, clock: clock, hasher: hasher, settings: settings)
    }

    func person(_ username: String) async throws -> Identity {
        let request = SignUp(
            username: try Username(username), password: try Password("correct horse battery"),
            firstName: try PersonName(username.capitalized, field: "first_name"), lastName: try PersonName("Test", field: "last_name"),
            email: nil)
        _ = try await services.accounts.signUp(request, from: ClientAddress(nil))
        let signedIn = try await services.accounts.signIn(login: username, password: "correct horse battery", from: ClientAddress(nil))
        return try await services.accounts.authenticate(token: signedIn.token.text)
    }

    /// Runs `body` with the change follower running, as the server runs it: it hands recorded events to the
    /// open streams.
    func following(_ body: () async throws -> Void) async throws {
        try await services.follower.prepare()
        let follower = Task { await services.follower.run { error in Issue.record("the follower failed: \(error)") } }
        defer { follower.cancel() }
        try await body()
    }

    func befriend(_ a: Identity, _ b: Identity) async throws {
        guard case .pending(let view) = try await services.friends.sendRequest(from: a, to: b.userID) else {
            Issue.record("expected a pending request")
            return
        }
        _ = try await services.friends.accept(view.request.id, by: b)
    }
}

extension TestWorld where S == InMemoryStore {
    init(settings: ServiceSettings = .standard) async throws {
        try await self.init(settings: settings) { store, _ in store }
    }
}

extension TestWorld where S == IndexedStores<InMemoryStore> {
    init(settings: ServiceSettings = .standard) async throws {
        // Every follower read settles what it can, so that each step of a test sees the same memory; sessions,
        // accounts and friendships are held, as over PostgreSQL.
        try await self.init(settings: settings) { store, clock in
            try await IndexedStores(record: store, at: clock.now, held: HeldAccounts<InMemoryStore>.standardCapacity, alertRereads: .zero)
        }
    }
}

@Suite("The privacy rule")
struct PrivacyRuleTests {
    @Test("who sees a position: the owner and friends it is shared with; privacy mode hides; strangers see nothing")
    func matrix() throws {
        let now = Timestamp(millisecondsSince1970: 1_795_338_000_000)
        let rules = PositionRules.standard
        let fresh = SharedPosition(
            userID: .random(), coordinate: Spot.library, accuracy: nil, status: nil, label: "Around Library", onCampus: nil,
            closestPlace: nil, updatedAt: now - .seconds(60))
        var old = fresh
        old.updatedAt = now - rules.currentFor - .milliseconds(1)
        var gone = fresh
        gone.updatedAt = now - rules.maximumAge - .milliseconds(1)

        func seen(_ position: SharedPosition?, privacy: Bool, _ relation: Relation) -> Presence {
            let result = PrivacyRule.visible(position, ownerPrivacyMode: privacy, relation: relation, at: now, rules: rules)
            #expect((result.position != nil) == [.current, .lastSeen].contains(result.presence))
            return result.presence
        }
        #expect(seen(fresh, privacy: false, .owner) == .current)
        #expect(seen(old, privacy: false, .owner) == .lastSeen)
        #expect(seen(gone, privacy: false, .owner) == .none, "past its age a position is gone, also to its owner")
        #expect(seen(gone, privacy: false, .friend(share: .exact)) == .none)
        #expect(seen(fresh, privacy: true, .owner) == .current, "privacy mode hides from friends, not from oneself")
        #expect(seen(nil, privacy: false, .owner) == .none)
        #expect(seen(fresh, privacy: false, .friend(share: .exact)) == .current)
        #expect(seen(old, privacy: false, .friend(share: .exact)) == .lastSeen)
        #expect(seen(fresh, privacy: true, .friend(share: .exact)) == .hidden)
        #expect(seen(nil, privacy: true, .friend(share: .exact)) == .hidden, "hidden says nothing of whether a position exists")
        #expect(seen(fresh, privacy: false, .friend(share: .none)) == .none)
        #expect(seen(nil, privacy: false, .friend(share: .exact)) == .none)
        for privacy in [false, true] {
            #expect(seen(fresh, privacy: privacy, .stranger) == .none)
        }
    }

    @Test("a position is current up to its window, exactly that age included, then last seen up to its maximum age, then gone; by default 15 minutes and a day")
    func staleness() {
        let now = Timestamp(millisecondsSince1970: 1_795_338_000_000)
        var position = SharedPosition(
            userID: .random(), coordinate: Spot.library, accuracy: nil, status: nil, label: "", onCampus: nil,
            closestPlace: nil, updatedAt: now - .seconds(900))
        let rules = PositionRules.standard
        #expect(rules.currentFor == .seconds(900) && rules.maximumAge == .seconds(86_400))
        #expect(rules.isCurrent(position, at: now))
        position.updatedAt = position.updatedAt - .milliseconds(1)
        #expect(!rules.isCurrent(position, at: now) && rules.isKept(position, at: now))
        position.updatedAt = now - .seconds(86_400)
        #expect(rules.isKept(position, at: now))
        position.updatedAt = position.updatedAt - .milliseconds(1)
        #expect(!rules.isKept(position, at: now))
    }
}

@Suite("Friend service, with a clock the tests move")
struct FriendServiceTests {
    @Test("friends carry the label, distance and bearing from my current position; hidden and stale ones as the rule says")
    func friendList() async throws {
        let world = try await World()
        let me = try await world.person("myself")
        let near = try await world.person("near")
        let hider = try await world.person("hider")
        let ghost = try await world.person("ghost")
        let stale = try await world.person("stale")
        for friend in [near, hider, ghost, stale] { try await world.befriend(me, friend) }

        _ = try await world.services.friends.sharePosition(stale, at: Spot.pyramid, accuracy: nil, status: nil)
        world.clock.advance(by: PositionRules.standard.currentFor + .seconds(1))
        _ = try await world.services.friends.sharePosition(me, at: Spot.hallOfScience, accuracy: nil, status: nil)
        let status = try StatusText("In the library")
        _ = try await world.services.friends.sharePosition(near, at: Spot.library, accuracy: try Accuracy(meters: 8), status: status)
        _ = try await world.services.friends.sharePosition(hider, at: Spot.studentUnion, accuracy: nil, status: nil)
        _ = try await world.services.friends.setSharing(.none, with: me.userID, of: hider)
        _ = try await world.services.friends.sharePosition(ghost, at: Spot.studentUnion, accuracy: nil, status: nil)
        _ = try await world.services.accounts.update(ghost, AccountChanges(privacyMode: true), from: ClientAddress(nil))

        let friends = try await world.services.friends.friends(of: me)
        let byName = Dictionary(uniqueKeysWithValues: friends.map { ($0.friend.username.rawValue, $0) })
        #expect(friends.map(\.friend.username.rawValue) == ["ghost", "hider", "near", "stale"])

        let nearView = try #require(byName["near"])
        #expect(nearView.presence == .current)
        #expect(nearView.position?.label == "Around Library")
        #expect(nearView.position?.status == status)
        #expect(nearView.distance == haversineDistance(from: Spot.hallOfScience, to: Spot.library))
        #expect(nearView.bearing == initialBearing(from: Spot.hallOfScience, to: Spot.library))

        #expect(byName["hider"]?.presence == Presence.none)
        #expect(byName["hider"]?.position == nil && byName["hider"]?.distance == nil)
        #expect(byName["ghost"]?.presence == .hidden)
        #expect(byName["ghost"]?.position == nil && byName["ghost"]?.distance == nil)
        #expect(byName["stale"]?.presence == .lastSeen)
        #expect(byName["stale"]?.position?.coordinate == Spot.pyramid)

        // Nearby lists only current, visible positions within the radius, nearest first.
        let nearby = try await world.services.friends.nearbyFriends(of: me, around: nil, radius: .standard, limit: .standard)
        #expect(nearby.map(\.friend.username.rawValue) == ["near"])
        await #expect(throws: ServiceError.notFound(.friendPosition)) {
            try await world.services.friends.direction(to: hider.userID, of: me, from: nil)
        }
        await #expect(throws: ServiceError.notFound(.friendPosition)) {
            try await world.services.friends.direction(to: ghost.userID, of: me, from: nil)
        }
        let toStale = try await world.services.friends.direction(to: stale.userID, of: me, from: nil)
        #expect(toStale.presence == .lastSeen)
        #expect(toStale.distance == haversineDistance(from: Spot.hallOfScience, to: Spot.pyramid))

        // A day on, the stale position is gone: nothing tells it from no position at all.
        world.clock.advance(by: PositionRules.standard.maximumAge)
        let later = try await world.services.friends.friends(of: me)
        #expect(later.first { $0.friend.username.rawValue == "stale" }?.presence == Presence.none)
        await #expect(throws: ServiceError.notFound(.friendPosition)) {
            try await world.services.friends.direction(to: stale.userID, of: me, from: Spot.hallOfScience)
        }
    }

    @Test("a move is told to the listening friends who may see it, as their friend list shows it, and to nobody else")
    func movesReachOnlyThoseWhoMaySee() async throws {
        let world = try await World()
        let mover = try await world.person("mover")
        let friend = try await world.person("friend")
        let hiddenFrom = try await world.person("hiddenfrom")
        let away = try await world.person("away")
        let stranger = try await world.person("stranger")
        let hider = try await world.person("hider")
        for other in [friend, hiddenFrom, away, hider] { try await world.befriend(mover, other) }
        _ = try await world.services.friends.setSharing(.none, with: hiddenFrom.userID, of: mover)
        // Hiding one's own position from the mover hides nothing of the mover's.
        _ = try await world.services.friends.setSharing(.none, with: mover.userID, of: hider)
        _ = try await world.services.friends.sharePosition(friend, at: Spot.hallOfScience, accuracy: nil, status: nil)
        _ = try await world.services.friends.sharePosition(mover, at: Spot.library, accuracy: nil, status: try StatusText("Reading"))
        let everyone: Set<UserID> = [friend.userID, hiddenFrom.userID, hider.userID, stranger.userID]
        let friends = world.services.friends

        // Only the mover's friends are asked about; `away` is one who may see the move but has no stream here.
        let asked = Mutex<Set<UserID>>([])
        let seen = try await friends.moved(mover.userID) { candidates in
            asked.withLock { $0 = candidates }
            return candidates.intersection(everyone)
        }
        #expect(asked.withLock { $0 } == [friend.userID, hiddenFrom.userID, away.userID, hider.userID])
        #expect(Set(seen.map(\.viewer)) == [friend.userID, hider.userID])
        let toFriend = try #require(seen.first { $0.viewer == friend.userID }?.view)
        #expect(toFriend == (try await friends.friend(mover.userID, of: friend)))
        #expect(toFriend.distance == haversineDistance(from: Spot.hallOfScience, to: Spot.library))
        #expect(seen.first { $0.viewer == hider.userID }?.view == (try await friends.friend(mover.userID, of: hider)))

        // In privacy mode the friend sees `hidden`, which no move changes: nothing is told.
        _ = try await world.services.accounts.update(mover, AccountChanges(privacyMode: true), from: ClientAddress(nil))
        _ = try await world.services.friends.sharePosition(mover, at: Spot.pyramid, accuracy: nil, status: nil)
        #expect(try await friends.moved(mover.userID) { $0.intersection(everyone) }.isEmpty)

        // A position past its window is where the mover was, not is: lists show it as last seen, and no
        // notice tells of it as a move.
        _ = try await world.services.accounts.update(mover, AccountChanges(privacyMode: false), from: ClientAddress(nil))
        world.clock.advance(by: PositionRules.standard.currentFor + .seconds(1))
        #expect(try await friends.friend(mover.userID, of: friend).presence == .lastSeen)
        #expect(try await friends.moved(mover.userID) { $0.intersection(everyone) }.isEmpty)
    }

    @Test("a move's notices read the mover's privacy mode and sharing as the record has them now, past what this front holds")
    func noticesReadPastHeldCopies() async throws {
        let world = try await HeldWorld()
        let mover = try await world.person("mover"), friend = try await world.person("friend")
        try await world.befriend(mover, friend)
        let friends = world.services.friends
        _ = try await friends.sharePosition(friend, at: Spot.hallOfScience, accuracy: nil, status: nil)
        _ = try await friends.sharePosition(mover, at: Spot.library, accuracy: nil, status: nil)
        let listening: (Set<UserID>) -> Set<UserID> = { $0 }
        // The friend's list and a first notice: this front now holds the mover's account and both friendships.
        #expect(try await friends.friend(mover.userID, of: friend).presence == .current)
        #expect(try await friends.moved(mover.userID, seenBy: listening).map(\.viewer) == [friend.userID])

        // Another front turns the mover's privacy mode on, and its feed has not been read here: the list still
        // shows what this front holds, but a notice of a move taken now tells nothing.
        var stored = try #require(try await world.store.storedAccount(id: mover.userID))
        stored.account.privacyMode = true
        #expect(try await world.store.updateAccount(stored, ending: .none))
        #expect(try await friends.friend(mover.userID, of: friend).presence == .current, "held until the feed says")
        #expect(try await friends.moved(mover.userID, seenBy: listening).isEmpty)

        // The same for sharing: privacy mode off again, the mover shares nothing with the friend, through the record.
        stored.account.privacyMode = false
        #expect(try await world.store.updateAccount(stored, ending: .none))
        #expect(try await world.store.setSharing(.none, until: nil, from: mover.userID, to: friend.userID) != nil)
        #expect(try await friends.moved(mover.userID, seenBy: listening).isEmpty)
    }

    @Test("a friend shown buildings only sees the building's point and label and the time the mover came there, and hears of a move only when it changes the area")
    func buildingLevelSharing() async throws {
        let world = try await World()
        let mover = try await world.person("mover")
        let coarse = try await world.person("coarse")
        let exact = try await world.person("exact")
        for other in [coarse, exact] { try await world.befriend(mover, other) }
        let friends = world.services.friends
        _ = try await friends.setSharing(.building, with: coarse.userID, of: mover)
        _ = try await friends.sharePosition(coarse, at: Spot.hallOfScience, accuracy: nil, status: nil)
        let listening: (Set<UserID>) -> Set<UserID> = { $0 }
        func told() async throws -> [UserID: FriendView] {
            Dictionary(uniqueKeysWithValues: try await friends.moved(mover.userID, seenBy: listening).map { ($0.viewer, $0.view) })
        }

        // 40 m east of the Library: around it. The coarse friend sees the Library's own point, measured from there.
        let arrived = world.clock.now
        let nearLibrary = destination(from: Spot.library, distance: 40, bearing: 90)
        _ = try await friends.sharePosition(mover, at: nearLibrary, accuracy: try Accuracy(meters: 5), status: try StatusText("Reading"))
        let seen = try await friends.friend(mover.userID, of: coarse)
        #expect(seen.position?.coordinate == Spot.library)
        #expect(seen.position?.label == "Around Library")
        #expect(seen.position?.accuracy == nil)
        #expect(seen.position?.status?.rawValue == "Reading")
        #expect(seen.precision == .building)
        #expect(seen.distance == haversineDistance(from: Spot.hallOfScience, to: Spot.library))
        #expect(seen.bearing == initialBearing(from: Spot.hallOfScience, to: Spot.library))
        #expect(try await friends.friend(mover.userID, of: exact).position?.coordinate == nearLibrary)
        #expect(try await friends.friend(mover.userID, of: exact).precision == .exact)
        var notices = try await told()
        #expect(notices[coarse.userID] == seen, "coming into an area is told, as the list shows it")
        #expect(notices[exact.userID]?.position?.coordinate == nearLibrary)

        // A move within the area: the exact friend hears of it; the coarse friend is told nothing, and still
        // reads the time the mover came, not the time of the fix.
        world.clock.advance(by: .seconds(60))
        _ = try await friends.sharePosition(mover, at: destination(from: Spot.library, distance: 30, bearing: 200), accuracy: nil, status: nil)
        notices = try await told()
        #expect(notices[coarse.userID] == nil)
        #expect(notices[exact.userID] != nil)
        let still = try await friends.friend(mover.userID, of: coarse)
        #expect(still.position?.updatedAt == arrived)
        #expect(still.position?.coordinate == Spot.library)
        #expect(still.presence == .current)

        // Another building: told, at its point.
        world.clock.advance(by: .seconds(60))
        _ = try await friends.sharePosition(mover, at: destination(from: Spot.hallOfScience, distance: 20, bearing: 0), accuracy: nil, status: nil)
        notices = try await told()
        #expect(notices[coarse.userID]?.position?.coordinate == Spot.hallOfScience)
        #expect(notices[coarse.userID]?.position?.updatedAt == world.clock.now)

        // Farther than any landmark: no building says where the mover is, so the coarse friend sees nothing,
        // as of someone with no position.
        _ = try await friends.sharePosition(mover, at: destination(from: Spot.library, distance: 5000, bearing: 0), accuracy: nil, status: nil)
        let far = try await friends.friend(mover.userID, of: coarse)
        #expect(far.presence == .none && far.position == nil && far.distance == nil && far.precision == nil)
        #expect(try await friends.nearbyFriends(of: coarse, around: nil, radius: try SearchRadius(meters: 50_000), limit: .standard).isEmpty)
        await #expect(throws: ServiceError.notFound(.friendPosition)) {
            try await friends.direction(to: mover.userID, of: coarse, from: nil)
        }
    }

    @Test("privacy mode, a sharing level and stopping sharing tell exactly the friends whose view changed, naming the person and nothing else")
    func visibilityChangesAreTold() async throws {
        let world = try await World()
        let mover = try await world.person("mover")
        let exact = try await world.person("exact")
        let unshared = try await world.person("unshared")
        let coarse = try await world.person("coarse")
        let stranger = try await world.person("stranger")
        for other in [exact, unshared, coarse] { try await world.befriend(mover, other) }
        let friends = world.services.friends
        _ = try await friends.setSharing(.none, with: unshared.userID, of: mover)
        _ = try await friends.setSharing(.building, with: coarse.userID, of: mover)
        _ = try await friends.sharePosition(mover, at: Spot.library, accuracy: nil, status: nil)
        let summary = try #require(try await world.store.summaries(of: [mover.userID])[mover.userID])
        var seen: [UserID: Int] = [:]
        /// The friend_visibility events each person got since the last look.
        func told() async throws -> Set<UserID> {
            var who: Set<UserID> = []
            for person in [mover, exact, unshared, coarse, stranger] {
                let events = try await world.store.events(for: person.userID, after: nil, since: Timestamp(millisecondsSince1970: 0), limit: 100)
                    .filter { $0.type == .friendVisibility }
                #expect(events.allSatisfy { $0.payload == .friendVisibility(friend: summary) })
                if events.count > seen[person.userID, default: 0] { who.insert(person.userID) }
                seen[person.userID] = events.count
            }
            return who
        }
        #expect(try await told().isEmpty, "levels set before any position changed nothing anyone saw")

        _ = try await friends.setSharing(.none, with: exact.userID, of: mover)
        #expect(try await told() == [exact.userID])
        _ = try await friends.setSharing(.none, with: unshared.userID, of: mover)
        #expect(try await told().isEmpty, "the same level again changes nothing")
        _ = try await friends.setSharing(.exact, with: exact.userID, of: mover)
        #expect(try await told() == [exact.userID])

        // Privacy mode shows every friend `hidden`, whatever they saw before; turning it off undoes that.
        _ = try await world.services.accounts.update(mover, AccountChanges(privacyMode: true), from: ClientAddress(nil))
        #expect(try await told() == [exact.userID, unshared.userID, coarse.userID])
        _ = try await world.services.accounts.update(mover, AccountChanges(privacyMode: true), from: ClientAddress(nil))
        #expect(try await told().isEmpty)
        _ = try await world.services.accounts.update(mover, AccountChanges(privacyMode: false), from: ClientAddress(nil))
        #expect(try await told() == [exact.userID, unshared.userID, coarse.userID])

        // Stopping sharing: those who saw a position, and nobody who saw none.
        try await friends.stopSharing(mover)
        #expect(try await told() == [exact.userID, coarse.userID])
        _ = try await friends.setSharing(.exact, with: unshared.userID, of: mover)
        #expect(try await told().isEmpty, "with no position, a level changes nothing seen")
        _ = try await world.services.accounts.update(mover, AccountChanges(firstName: try PersonName("Moved", field: "first_name")), from: ClientAddress(nil))
        #expect(try await told().isEmpty, "other account changes are not about whereabouts")
    }

    @Test("privacy mode toggled in a loop tells a friend sixty times an hour at most, and still applies every time")
    func visibilityNoticesAreCapped() async throws {
        let world = try await World()
        let mover = try await world.person("mover"), friend = try await world.person("friend")
        try await world.befriend(mover, friend)
        for round in 0..<(VisibilityNotices<InMemoryStore>.perHour.limit + 5) {
            _ = try await world.services.accounts.update(mover, AccountChanges(privacyMode: round % 2 == 0), from: ClientAddress(nil))
            #expect(try await world.services.friends.friend(mover.userID, of: friend).presence == (round % 2 == 0 ? .hidden : .none))
        }
        let told = try await world.store.events(for: friend.userID, after: nil, since: Timestamp(millisecondsSince1970: 0), limit: 1000)
            .filter { $0.type == .friendVisibility }
        #expect(told.count == VisibilityNotices<InMemoryStore>.perHour.limit)
    }

    @Test("without a current position of my own, distances are absent and nearby needs a centre")
    func withoutMyPosition() async throws {
        let world = try await World()
        let me = try await world.person("myself")
        let friend = try await world.person("friend")
        try await world.befriend(me, friend)
        _ = try await world.services.friends.sharePosition(friend, at: Spot.library, accuracy: nil, status: nil)
        #expect(try await world.services.friends.friends(of: me).first?.distance == nil)
        await #expect(throws: ServiceError.conflict(.noCurrentPosition)) {
            try await world.services.friends.nearbyFriends(of: me, around: nil, radius: .standard, limit: .standard)
        }
        let around = try await world.services.friends.nearbyFriends(
            of: me, around: Spot.hallOfScience, radius: .standard, limit: .standard)
        #expect(around.map(\.friend.id) == [friend.userID])
        // A position of mine that has gone stale is no "current position" either.
        _ = try await world.services.friends.sharePosition(me, at: Spot.hallOfScience, accuracy: nil, status: nil)
        world.clock.advance(by: PositionRules.standard.currentFor + .seconds(1))
        await #expect(throws: ServiceError.conflict(.noCurrentPosition)) {
            try await world.services.friends.direction(to: friend.userID, of: me, from: nil)
        }
        #expect(try await world.services.friends.myPosition(me).presence == .lastSeen)
    }

    @Test("nearby friends come nearest first, equal distances by id, at most limit")
    func nearbyOrder() async throws {
        let world = try await World()
        let me = try await world.person("myself")
        var friends: [Identity] = []
        for index in 0..<6 {
            let friend = try await world.person("friend\(index)")
            try await world.befriend(me, friend)
            friends.append(friend)
        }
        // Two at the Library (a tie), others around campus, one in Bangkok (Wat Pho), far beyond 1000 m.
        let spots = [Spot.library, Spot.studentUnion, Spot.library, Spot.hallOfScience, Spot.pyramid, Spot.watPho]
        for (friend, spot) in zip(friends, spots) {
            _ = try await world.services.friends.sharePosition(friend, at: spot, accuracy: nil, status: nil)
        }
        var measured: [(id: UserID, distance: Distance)] = []
        for (friend, spot) in zip(friends, spots) {
            let distance = haversineDistance(from: Spot.hallOfScience, to: spot)
            if distance.meters <= 1000 { measured.append((friend.userID, distance)) }
        }
        let bruteForce = measured
            .sorted { a, b in a.distance != b.distance ? a.distance < b.distance : a.id < b.id }
            .map(\.id)
        #expect(bruteForce.count == 5)
        let found = try await world.services.friends.nearbyFriends(
            of: me, around: Spot.hallOfScience, radius: .standard, limit: .standard)
        #expect(found.map(\.friend.id) == bruteForce)
        #expect(found.compactMap(\.distance) == found.compactMap(\.distance).sorted())
        let two = try await world.services.friends.nearbyFriends(
            of: me, around: Spot.hallOfScience, radius: .standard, limit: try ResultLimit(2))
        #expect(two.map(\.friend.id) == Array(bruteForce.prefix(2)))
        let tight = try await world.services.friends.nearbyFriends(
            of: me, around: Spot.library, radius: try SearchRadius(meters: 1), limit: .standard)
        #expect(tight.map(\.friend.id) == [friends[0].userID, friends[2].userID].sorted(), "a tie at 0 m is ordered by id")
    }

    @Test("a request to someone who asked first is the friendship; duplicates and self-requests are refused")
    func requests() async throws {
        let world = try await World()
        let a = try await world.person("anna")
        let b = try await world.person("ben")
        guard case .pending = try await world.services.friends.sendRequest(from: a, to: b.userID) else {
            Issue.record("expected pending")
            return
        }
        await #expect(throws: ServiceError.conflict(.alreadyRequested)) {
            try await world.services.friends.sendRequest(from: a, to: b.userID)
        }
        guard case .accepted(_, let friend) = try await world.services.friends.sendRequest(from: b, to: a.userID) else {
            Issue.record("expected the reverse request to become the friendship")
            return
        }
        #expect(friend.friend.id == a.userID)
        #expect(try await world.services.friends.requests(of: a).incoming.isEmpty)
        #expect(try await world.services.friends.requests(of: a).outgoing.isEmpty)
        await #expect(throws: ServiceError.conflict(.alreadyFriends)) {
            try await world.services.friends.sendRequest(from: a, to: b.userID)
        }
        await #expect(throws: ServiceError.invalid("to", "cannot be yourself")) {
            try await world.services.friends.sendRequest(from: a, to: a.userID)
        }
        await #expect(throws: ServiceError.notFound(.user)) {
            try await world.services.friends.sendRequest(from: a, to: .random())
        }
    }

    @Test("pokes reach friends only, three per friend in ten minutes")
    func pokes() async throws {
        let world = try await World()
        let a = try await world.person("anna")
        let b = try await world.person("ben")
        let stranger = try await world.person("stranger")
        await #expect(throws: ServiceError.notFound(.friend)) { try await world.services.friends.poke(b.userID, by: a) }
        try await world.befriend(a, b)
        for _ in 0..<3 { _ = try await world.services.friends.poke(b.userID, by: a) }
        await #expect(throws: ServiceError.rateLimited(retryAfter: .seconds(600), .pokes)) {
            try await world.services.friends.poke(b.userID, by: a)
        }
        _ = try await world.services.friends.poke(a.userID, by: b)
        world.clock.advance(by: .seconds(600))
        _ = try await world.services.friends.poke(b.userID, by: a)
        await #expect(throws: ServiceError.notFound(.friend)) { try await world.services.friends.poke(b.userID, by: stranger) }
        // Ben received four pokes and a friend request; Anna one poke and the acceptance.
        let events = try await world.store.events(for: b.userID, after: nil, since: Timestamp(millisecondsSince1970: 0), limit: 100)
        #expect(events.map(\.type) == [.friendRequest, .poke, .poke, .poke, .poke])
        #expect(events.allSatisfy { event in
            switch event.payload {
            case .poke(let from), .friendRequest(_, let from): from.id == a.userID || from.id == b.userID
            default: false
            }
        }, "a poke and a request name their sender, and events carry no position at all (EventPayload has none)")
    }

    @Test("people search ranks exact username, prefix, then names; never lists the searcher; marks requests")
    func peopleSearch() async throws {
        let world = try await World()
        let me = try await world.person("annie")
        let ann = try await world.person("ann")
        let anna = try await world.person("anna_k")
        let bob = try await world.person("bob")
        _ = try await world.services.accounts.update(
            bob, AccountChanges(firstName: try PersonName("Ánnabel", field: "first_name")), from: ClientAddress(nil))
        _ = try await world.services.friends.sendRequest(from: me, to: anna.userID)
        let found = try await world.services.friends.people(matching: "ANN", for: me, limit: .standard)
        #expect(found.map(\.person.id) == [ann.userID, anna.userID, bob.userID])
        #expect(found[1].relationship != .none)
        #expect(found[0].relationship == .none)
        #expect(try await world.services.friends.people(matching: "   ", for: me, limit: .standard).isEmpty)
    }
}

@Suite("Events, with a clock the tests move")
struct EventRuleTests {
    @Test("a stream replays what came after Last-Event-ID within the retention window, then goes live, each event once")
    func replayThenLive() async throws {
        let world = try await World()
        let a = try await world.person("anna")
        let b = try await world.person("ben")
        try await world.befriend(a, b)
        let first = try await world.services.friends.poke(b.userID, by: a)
        world.clock.advance(by: .seconds(24 * 3600))
        let second = try await world.services.friends.poke(b.userID, by: a)
        world.clock.advance(by: .seconds(1))
        try await world.following {
            let stream = try await world.services.events.openStream(for: b, after: EventID(0), renewedEvery: .seconds(25))
            var iterator = stream.deliveries.makeAsyncIterator()
            // The friend request and the first poke are older than a day: gone. The second poke is replayed.
            #expect(try await iterator.next()?.event?.id == second.eventID)
            let third = try await world.services.friends.poke(b.userID, by: a)
            #expect(try await iterator.next()?.event?.id == third.eventID)
        }
        #expect(first.eventID < second.eventID)
    }

    @Test("a new stream without Last-Event-ID starts from now; more streams than allowed end the oldest, whose lease is not renewed")
    func streamCap() async throws {
        var settings = ServiceSettings()
        settings.events.maximumStreamsPerUser = 2
        let world = try await World(settings: settings)
        let a = try await world.person("anna")
        let b = try await world.person("ben")
        try await world.befriend(a, b)
        _ = try await world.services.friends.poke(b.userID, by: a)
        let events = world.services.events
        let beat = Duration.seconds(25)
        try await world.following {
            let oldest = try await events.openStream(for: b, after: nil, renewedEvery: beat)
            world.clock.advance(by: .seconds(1))
            let middle = try await events.openStream(for: b, after: nil, renewedEvery: beat)
            world.clock.advance(by: .seconds(1))
            let newest = try await events.openStream(for: b, after: nil, renewedEvery: beat)
            #expect(events.hub.openStreams == 2)
            var ended = oldest.deliveries.makeAsyncIterator()
            #expect(try await ended.next() == nil)
            #expect(try await events.keepStream(oldest.lease, of: b, renewedEvery: beat) == false)
            #expect(try await events.keepStream(middle.lease, of: b, renewedEvery: beat))
            let poke = try await world.services.friends.poke(b.userID, by: a)
            var second = middle.deliveries.makeAsyncIterator()
            var third = newest.deliveries.makeAsyncIterator()
            #expect(try await second.next()?.event?.id == poke.eventID)
            #expect(try await third.next()?.event?.id == poke.eventID)
        }
    }

    @Test("a lease not renewed within three beats stops counting and cannot be renewed; a closed one frees its place at once")
    func leaseLifetime() async throws {
        var settings = ServiceSettings()
        settings.events.maximumStreamsPerUser = 1
        let world = try await World(settings: settings)
        let b = try await world.person("ben")
        let events = world.services.events
        let beat = Duration.seconds(25)
        let first = try await events.openStream(for: b, after: nil, renewedEvery: beat)
        world.clock.advance(by: .seconds(74))
        #expect(try await events.keepStream(first.lease, of: b, renewedEvery: beat), "renewed within three beats")
        world.clock.advance(by: .seconds(75))
        #expect(try await events.keepStream(first.lease, of: b, renewedEvery: beat) == false, "three beats without renewal")
        // The expired lease is not pushed out by the next open: it is gone already, and its stream was told.
        let second = try await events.openStream(for: b, after: nil, renewedEvery: beat)
        try await events.closeLease(second.lease)
        #expect(try await events.keepStream(second.lease, of: b, renewedEvery: beat) == false)
        let third = try await events.openStream(for: b, after: nil, renewedEvery: beat)
        #expect(try await events.keepStream(third.lease, of: b, renewedEvery: beat))
    }

    @Test("a stream's lease is not kept once its session has ended")
    func leaseNeedsSession() async throws {
        let world = try await World()
        let b = try await world.person("ben")
        let opened = try await world.services.events.openStream(for: b, after: nil, renewedEvery: .seconds(25))
        try await world.services.accounts.signOut(b)
        #expect(try await world.services.events.keepStream(opened.lease, of: b, renewedEvery: .seconds(25)) == false)
    }

    @Test("a stream that falls more than its buffer behind ends, so that its client reconnects and replays")
    func overflow() async throws {
        let hub = EventHub()
        let user = UserID.random()
        let someone = UserSummary(
            id: .random(), username: try Username("someone"), firstName: try PersonName("Some", field: "first_name"),
            lastName: try PersonName("One", field: "last_name"))
        let stream = hub.subscribe(Identity(userID: user, session: TokenDigest(bytes: [1])), lease: .random())
        let events = (1...(EventHub.bufferedEvents + 1)).map {
            Event(id: EventID(Int64($0)), draft: .friendAccepted(to: user, friend: someone, at: Timestamp(millisecondsSince1970: 0)))
        }
        hub.publish(events)
        var received: [EventID] = []
        for await delivery in stream { received.append(try #require(delivery.event).id) }
        #expect(received == events.prefix(EventHub.bufferedEvents).map(\.id))
        #expect(hub.openStreams == 0)
    }
}
