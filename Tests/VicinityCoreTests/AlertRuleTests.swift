import GeoCore
import GeoTestSupport
import Testing
import VicinityCore

/// Watched and watcher, friends, over `World` (an in-memory store and a manual clock): Pim moves, Nok watches.
private struct Watching {
    let world: World
    let pim: Identity
    let nok: Identity

    init(settings: ServiceSettings = .standard) async throws {
        world = try await World(settings: settings)
        pim = try await world.person("pim")
        nok = try await world.person("nok")
        try await world.befriend(pim, nok)
    }

    var services: Services<InMemoryStore> { world.services }

    /// Pim moves to `metres` due east of the Library (from Data/csulb-buildings.csv).
    func pimMoves(_ metres: Double, accuracy: Double? = nil, after seconds: Int64 = 30) async throws {
        world.clock.advance(by: .seconds(seconds))
        _ = try await services.friends.sharePosition(
            pim, at: destination(from: Spot.library, distance: metres, bearing: 90), accuracy: try accuracy.map { try Accuracy(meters: $0) },
            status: nil)
    }

    func pimMoves(to coordinate: Coordinate, after seconds: Int64 = 30) async throws {
        world.clock.advance(by: .seconds(seconds))
        _ = try await services.friends.sharePosition(pim, at: coordinate, accuracy: nil, status: nil)
    }

    /// The alert events Nok has been told so far, oldest first.
    func told() async throws -> [EventType] {
        try await world.store.events(for: nok.userID, after: nil, since: Timestamp(millisecondsSince1970: 0), limit: 1000)
            .map(\.type).filter { [.friendArrived, .friendLeft, .friendNearby].contains($0) }
    }
}

@Suite("Alerts")
struct AlertRuleTests {
    @Test("an arrival tells once, jitter at the edge does not flap, leaving needs the margin, and the quiet period holds back a quick return")
    func arriveJitterLeaveQuiet() async throws {
        let w = try await Watching()
        _ = try await w.services.alerts.allow(w.nok.userID, by: w.pim)
        let set = try await w.services.alerts.set(.place(PlaceID("csulb-lib")), radius: try AlertRadius(meters: 100), on: w.pim.userID, by: w.nok)
        #expect(set.placeName == "Library")
        try await w.pimMoves(400)
        #expect(try await w.told().isEmpty, "the first reading only sets where Pim is")
        try await w.pimMoves(90)
        #expect(try await w.told() == [.friendArrived])
        for metres in [110.0, 95, 124, 99, 120] { try await w.pimMoves(metres) }
        #expect(try await w.told() == [.friendArrived], "within radius plus 25 m nothing changes")
        // A fix that says it is good to 60 m needs 160 m to leave.
        try await w.pimMoves(150, accuracy: 60, after: 700)
        #expect(try await w.told() == [.friendArrived])
        try await w.pimMoves(126)
        #expect(try await w.told() == [.friendArrived, .friendLeft])
        // Back within a minute: inside again, but the quiet period since the last alert holds the news back.
        try await w.pimMoves(50, after: 60)
        #expect(try await w.told() == [.friendArrived, .friendLeft])
        try await w.pimMoves(500, after: 600)
        #expect(try await w.told() == [.friendArrived, .friendLeft, .friendLeft], "the quiet period passed: the leaving is told")
        let events = try await w.world.store.events(for: w.nok.userID, after: nil, since: Timestamp(millisecondsSince1970: 0), limit: 10)
        guard case .friendArrived(let notice)? = events.first(where: { $0.type == .friendArrived })?.payload else {
            Issue.record("no arrival")
            return
        }
        #expect(notice == AlertNotice(alert: set.alert.id, friend: notice.friend, placeName: "Library", radius: .meters(100)))
        #expect(notice.friend.id == w.pim.userID)
    }

    @Test("an alert set while the friend is away tells of their very next arrival; one set while they are there, of their leaving")
    func setWhereTheFriendIs() async throws {
        let w = try await Watching()
        _ = try await w.services.alerts.allow(w.nok.userID, by: w.pim)
        try await w.pimMoves(400)
        let away = try await w.services.alerts.set(.point(Spot.library), radius: nil, on: w.pim.userID, by: w.nok)
        #expect(away.alert.inside == false)
        try await w.pimMoves(to: Spot.hallOfScience)
        _ = try await w.services.alerts.set(.point(Spot.hallOfScience), radius: nil, on: w.pim.userID, by: w.nok)
        try await w.pimMoves(20)
        #expect(Set(try await w.told()) == [.friendArrived, .friendLeft])
        #expect(try await w.told().count == 2)
    }

    @Test("nothing is told of a friend in privacy mode, sharing none, with a stale fix, or at building level finer than the building; a revoked permission ends the alert")
    func hiddenFriendsSetOffNothing() async throws {
        let w = try await Watching()
        _ = try await w.services.alerts.allow(w.nok.userID, by: w.pim)
        _ = try await w.services.alerts.set(.point(Spot.library), radius: try AlertRadius(meters: 60), on: w.pim.userID, by: w.nok)
        try await w.pimMoves(400)

        _ = try await w.services.accounts.update(w.pim, AccountChanges(privacyMode: true), from: ClientAddress(nil))
        try await w.pimMoves(10, after: 700)
        _ = try await w.services.accounts.update(w.pim, AccountChanges(privacyMode: false), from: ClientAddress(nil))
        _ = try await w.services.friends.setSharing(.none, with: w.nok.userID, of: w.pim)
        try await w.pimMoves(400, after: 700)
        try await w.pimMoves(10, after: 700)
        // Building level: the Library's area reaches 100 m, wider than this 60 m alert.
        _ = try await w.services.friends.setSharing(.building, with: w.nok.userID, of: w.pim)
        try await w.pimMoves(400, after: 700)
        try await w.pimMoves(10, after: 700)
        #expect(try await w.told().isEmpty)

        // A fix taken twenty minutes ago is no longer current: moving there tells nothing either.
        _ = try await w.services.friends.setSharing(.exact, with: w.nok.userID, of: w.pim)
        try await w.pimMoves(400, after: 700)
        w.world.clock.advance(by: .seconds(700))
        _ = try await w.services.friends.sharePosition(
            w.pim, at: Spot.library, accuracy: nil, status: nil, fixedAt: w.world.clock.now - .seconds(1200))
        #expect(try await w.told().isEmpty)
        try await w.pimMoves(10)
        #expect(try await w.told() == [.friendArrived], "seen exactly and current, the arrival is told")

        try await w.services.alerts.revoke(w.nok.userID, by: w.pim)
        #expect(try await w.services.alerts.alerts(of: w.nok).isEmpty)
        await #expect(throws: ServiceError.conflict(.notAllowedToWatch)) {
            try await w.services.alerts.set(.point(Spot.library), radius: nil, on: w.pim.userID, by: w.nok)
        }
    }

    @Test("a friend sharing buildings only is measured from the building's point, for alerts as wide as the building")
    func buildingLevel() async throws {
        let w = try await Watching()
        _ = try await w.services.alerts.allow(w.nok.userID, by: w.pim)
        _ = try await w.services.friends.setSharing(.building, with: w.nok.userID, of: w.pim)
        // 150 m around the Hall of Science, which is 350 m from the Library: the Library's point is outside it.
        _ = try await w.services.alerts.set(
            .point(Spot.hallOfScience), radius: try AlertRadius(meters: 150), on: w.pim.userID, by: w.nok)
        _ = try await w.services.alerts.set(.point(Spot.library), radius: try AlertRadius(meters: 100), on: w.pim.userID, by: w.nok)
        func counts() async throws -> [EventType: Int] { try await w.told().reduce(into: [:]) { $0[$1, default: 0] += 1 } }
        try await w.pimMoves(to: Spot.hallOfScience)
        try await w.pimMoves(60)
        #expect(try await counts() == [.friendLeft: 1, .friendArrived: 1], "around the Library, shown at its point: left the Hall, at the Library")
        try await w.pimMoves(90, after: 700)
        #expect(try await counts() == [.friendLeft: 1, .friendArrived: 1], "a move within the Library's area changes nothing")
        try await w.pimMoves(to: Spot.hallOfScience, after: 700)
        try await w.pimMoves(90, after: 700)
        #expect(try await counts() == [.friendLeft: 3, .friendArrived: 3])
    }

    @Test("nearby alerts tell only while both have one on the other, each by their own radius, and only of coming near")
    func nearbyIsMutual() async throws {
        let w = try await Watching()
        _ = try await w.services.friends.sharePosition(w.nok, at: Spot.library, accuracy: nil, status: nil)
        _ = try await w.services.alerts.set(.nearby, radius: try AlertRadius(meters: 200), on: w.pim.userID, by: w.nok)
        try await w.pimMoves(1000)
        try await w.pimMoves(100)
        #expect(try await w.told().isEmpty, "Pim has no nearby alert on Nok")
        _ = try await w.services.alerts.set(.nearby, radius: try AlertRadius(meters: 50), on: w.nok.userID, by: w.pim)
        try await w.pimMoves(1000)
        try await w.pimMoves(150)
        #expect(try await w.told() == [.friendNearby])
        let toPim = try await w.world.store.events(for: w.pim.userID, after: nil, since: Timestamp(millisecondsSince1970: 0), limit: 100)
        #expect(!toPim.contains { $0.type == .friendNearby }, "150 m is beyond Pim's own 50 m")
        try await w.pimMoves(1000)
        #expect(try await w.told() == [.friendNearby], "moving apart re-arms, and tells nothing")
        // Nok's own fix grows old: Nok's alert has no current position to measure from.
        try await w.pimMoves(150, after: 900)
        #expect(try await w.told() == [.friendNearby])
    }

    @Test("the watched person sees who may watch and what they watch, and place alerts need a known place")
    func watchersList() async throws {
        let w = try await Watching()
        await #expect(throws: ServiceError.notFound(.alertPlace)) {
            try await w.services.alerts.set(.place(PlaceID("nowhere")), radius: nil, on: w.pim.userID, by: w.nok)
        }
        let allowed = try await w.services.alerts.allow(w.nok.userID, by: w.pim)
        #expect(allowed.isNew)
        #expect(try await w.services.alerts.allow(w.nok.userID, by: w.pim).isNew == false)
        let set = try await w.services.alerts.set(.place(PlaceID("csulb-lib")), radius: nil, on: w.pim.userID, by: w.nok)
        #expect(set.alert.radius == .standard)
        let watchers = try await w.services.alerts.watchers(of: w.pim)
        #expect(watchers.map(\.person.id) == [w.nok.userID])
        #expect(watchers.first?.allowedSince == allowed.permission.since)
        #expect(watchers.first?.alerts.map(\.alert.id) == [set.alert.id])
        #expect(try await w.services.alerts.watchers(of: w.nok).isEmpty)
        let stranger = try await w.world.person("ana")
        await #expect(throws: ServiceError.notFound(.friend)) { try await w.services.alerts.allow(stranger.userID, by: w.pim) }
        await #expect(throws: ServiceError.notFound(.friend)) {
            try await w.services.alerts.set(.nearby, radius: nil, on: stranger.userID, by: w.nok)
        }
    }
}

@Suite("The alert rule")
struct AlertStepTests {
    private let now = Timestamp(millisecondsSince1970: 1_795_338_000_000)

    private func alert(inside: Bool?, toldAt: Timestamp? = nil, target: AlertTarget = .nearby) throws -> Alert {
        Alert(
            id: .random(), watcher: .random(), watched: .random(), target: target, radius: try AlertRadius(meters: 100), createdAt: now,
            inside: inside, toldAt: toldAt)
    }

    @Test("at the radius is inside, beyond radius plus margin is outside, and in between the state holds")
    func edges() throws {
        let rules = AlertRules.standard
        func step(_ inside: Bool?, _ metres: Double) throws -> AlertStep? {
            AlertRule.step(try alert(inside: inside), reading: .distance(.meters(metres)), accuracy: nil, at: now, rules: rules)
        }
        #expect(try step(false, 100) == AlertStep(inside: true, told: .friendNearby))
        #expect(try step(false, 100.001) == nil)
        #expect(try step(true, 125) == nil)
        #expect(try step(true, 125.001) == AlertStep(inside: false, told: nil), "nearby alerts tell only of coming near")
        #expect(try step(nil, 110) == AlertStep(inside: false, told: nil), "unknown in the band is outside, untold")
        #expect(try step(nil, 10) == AlertStep(inside: true, told: nil))
    }

    @Test("a campus boundary is entered by containment and left beyond the margin from its edge")
    func boundary() throws {
        let rules = AlertRules.standard
        let campus = try alert(inside: true, target: .campus(PlaceID("csulb")))
        #expect(AlertRule.step(campus, reading: .boundary(contains: false, edge: .meters(20)), accuracy: nil, at: now, rules: rules) == nil)
        #expect(AlertRule.step(campus, reading: .boundary(contains: false, edge: .meters(26)), accuracy: nil, at: now, rules: rules)
            == AlertStep(inside: false, told: .friendLeft))
        #expect(AlertRule.step(campus, reading: .boundary(contains: false, edge: .meters(26)), accuracy: try Accuracy(meters: 40), at: now, rules: rules)
            == nil, "a fix good to 40 m needs 40 m")
    }
}
