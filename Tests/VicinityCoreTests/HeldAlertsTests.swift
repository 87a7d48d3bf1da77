import GeoCore
import GeoTestSupport
import Testing
import VicinityCore

/// One step of a walk both worlds take alike.
private enum WalkStep {
    case pimMoves(Coordinate, accuracy: Double?)
    case nokMoves(Coordinate)
    case pimPrivacy(Bool)
    case pimShares(ShareLevel)
    /// Chai starts watching Pim at the Hall of Science, half-way.
    case chaiWatches
    /// Longer than the quiet period.
    case pause
}

/// What a walk told each person (when, and what: the alerts one move sets off come in no set order), and where
/// their alerts were left.
private struct WalkOutcome: Equatable {
    var told: [String: [String]] = [:]
    /// Each alert a person set, by its kind and radius, with whether it was left inside.
    var inside: [String: [String]] = [:]
}

/// Takes the same walk in a world whose moves read alerts from the record and in one that holds them in memory.
private func walk<S: Stores>(_ world: TestWorld<S>, _ steps: [(WalkStep, settles: Bool)]) async throws -> (WalkOutcome, vouched: Int) {
    let pim = try await world.person("pim"), nok = try await world.person("nok"), chai = try await world.person("chai")
    try await world.befriend(pim, nok)
    try await world.befriend(pim, chai)
    let services = world.services
    for watcher in [nok, chai] { _ = try await services.alerts.allow(watcher.userID, by: pim) }
    _ = try await services.friends.sharePosition(nok, at: Spot.hallOfScience, accuracy: nil, status: nil)
    _ = try await services.alerts.set(.place(try PlaceID("csulb-lib")), radius: nil, on: pim.userID, by: nok)
    _ = try await services.alerts.set(
        .point(destination(from: Spot.library, distance: 150, bearing: 0)), radius: try AlertRadius(meters: 60), on: pim.userID, by: nok)
    _ = try await services.alerts.set(.nearby, radius: try AlertRadius(meters: 150), on: pim.userID, by: nok)
    _ = try await services.alerts.set(.nearby, radius: try AlertRadius(meters: 200), on: nok.userID, by: pim)
    var vouched = 0
    for (step, settles) in steps {
        world.clock.advance(by: .seconds(30))
        switch step {
        case .pimMoves(let coordinate, let accuracy):
            if world.stores.heldAlerts(of: pim.userID) != nil { vouched += 1 }
            _ = try await services.friends.sharePosition(pim, at: coordinate, accuracy: try accuracy.map { try Accuracy(meters: $0) }, status: nil)
        case .nokMoves(let coordinate):
            _ = try await services.friends.sharePosition(nok, at: coordinate, accuracy: nil, status: nil)
        case .pimPrivacy(let on):
            _ = try await services.accounts.update(pim, AccountChanges(privacyMode: on), from: ClientAddress(nil))
        case .pimShares(let level):
            _ = try await services.friends.setSharing(level, with: nok.userID, of: pim)
        case .chaiWatches:
            _ = try await services.alerts.set(.place(try PlaceID("csulb-hsci")), radius: nil, on: pim.userID, by: chai)
        case .pause:
            world.clock.advance(by: AlertRules.standard.quietPeriod)
        }
        // The change follower's read, which settles what this process wrote; skipped now and then, so that some
        // moves find their person unsettled.
        if settles { try await world.stores.follow([], at: world.clock.now) }
    }
    var outcome = WalkOutcome()
    for (name, person) in [("pim", pim), ("nok", nok), ("chai", chai)] {
        outcome.told[name] = try await world.store.events(for: person.userID, after: nil, since: Timestamp(millisecondsSince1970: 0), limit: 10_000)
            .filter { [.friendArrived, .friendLeft, .friendNearby].contains($0.type) }
            .map { "\($0.createdAt.millisecondsSince1970) \($0.type)" }.sorted()
        outcome.inside[name] = try await services.alerts.alerts(of: person)
            .map { "\($0.alert.target.kindName) \($0.alert.radius.distance.meters) \(String(describing: $0.alert.inside))" }.sorted()
    }
    return (outcome, vouched)
}

/// Pim and Nok, friends, Nok holding a nearby alert on Pim, and memory loaded from the record, read again at every
/// refresh.
private func nokWatchingPim() async throws -> (World, pim: UserID, nok: UserID, Alert, HeldAlerts<InMemoryStore>) {
    let world = try await World()
    let pim = try await world.person("pim"), nok = try await world.person("nok")
    try await world.befriend(pim, nok)
    let alert = Alert(id: .random(), watcher: nok.userID, watched: pim.userID, target: .nearby, radius: .standard, createdAt: world.clock.now)
    #expect(try await world.store.addAlert(alert, limit: 10) == .added(alert))
    return (world, pim.userID, nok.userID, alert, try await HeldAlerts(record: world.store, rereadEvery: .zero))
}

/// `change` as worked out from memory's copy of its alert as it is now, as `AlertService.changes(moving:)` works
/// changes out.
private func fromMemory(_ change: AlertChange, _ held: HeldAlerts<InMemoryStore>, of person: UserID) -> AlertChange {
    var change = change
    change.heldVersion = held.alerts(of: person)?.versions[change.alert]
    return change
}

@Suite("Alerts held in memory")
struct HeldAlertsTests {
    @Test("a long random walk tells the same with the alerts held in memory as read from the record, privacy and sharing changing on the way")
    func sameAsTheRecord() async throws {
        var generator = SeededGenerator(seed: 34)
        var steps: [(WalkStep, settles: Bool)] = []
        for index in 0..<1200 {
            let roll = Double.random(in: 0..<1, using: &generator)
            let around = destination(
                from: Spot.library, distance: .random(in: 0...350, using: &generator), bearing: .random(in: 0..<360, using: &generator))
            let step: WalkStep =
                index == 600 ? .chaiWatches
                : roll < 0.6 ? .pimMoves(around, accuracy: [nil, 10, 40].randomElement(using: &generator) ?? nil)
                : roll < 0.75 ? .nokMoves(around)
                : roll < 0.8 ? .pimPrivacy(Bool.random(using: &generator))
                : roll < 0.9 ? .pimShares([ShareLevel.exact, .building, .none].randomElement(using: &generator) ?? .exact)
                : .pause
            steps.append((step, settles: Double.random(in: 0..<1, using: &generator) < 0.8))
        }
        let (fromRecord, _) = try await walk(try await World(), steps)
        let (fromMemory, vouched) = try await walk(try await HeldWorld(), steps)
        #expect(fromMemory == fromRecord)
        let moves = steps.filter { if case .pimMoves = $0.0 { true } else { false } }.count
        #expect(vouched > moves / 2, "memory vouched for \(vouched) of Pim's \(moves) moves")
        let told = fromRecord.told.values.map(\.count).reduce(0, +)
        #expect(told >= 30, "the walk tells enough to compare: \(told)")
    }

    @Test("a friend sharing buildings only sets off a nearby alert from the building's point where their own fix would not")
    func buildingPointCounts() async throws {
        let world = try await HeldWorld()
        let pim = try await world.person("pim"), nok = try await world.person("nok")
        try await world.befriend(pim, nok)
        let services = world.services
        // Nok 140 m west of the Library; Pim 95 m east of it, "Around Library": 235 m from Nok, but shown to Nok at
        // the Library's point, 140 m away, within Nok's 150 m.
        _ = try await services.friends.sharePosition(nok, at: destination(from: Spot.library, distance: 140, bearing: 270), accuracy: nil, status: nil)
        _ = try await services.friends.sharePosition(pim, at: destination(from: Spot.library, distance: 600, bearing: 90), accuracy: nil, status: nil)
        _ = try await services.alerts.set(.nearby, radius: try AlertRadius(meters: 150), on: pim.userID, by: nok)
        _ = try await services.alerts.set(.nearby, radius: try AlertRadius(meters: 100), on: nok.userID, by: pim)
        _ = try await services.friends.setSharing(.building, with: nok.userID, of: pim)
        try await world.stores.follow([], at: world.clock.now)
        #expect(world.stores.heldAlerts(of: pim.userID)?.alerts.count == 2, "memory vouches for Pim's alerts")
        world.clock.advance(by: .seconds(30))
        _ = try await services.friends.sharePosition(pim, at: destination(from: Spot.library, distance: 95, bearing: 90), accuracy: nil, status: nil)
        let told = try await world.store.events(for: nok.userID, after: nil, since: Timestamp(millisecondsSince1970: 0), limit: 100)
        #expect(told.map(\.type).filter { $0 == .friendNearby }.count == 1)
    }

    @Test("a privacy setting another process changed, not yet in the feed, is never told past: the record refuses the change worked out from the sight memory held, and the move after the feed tells what the record allows")
    func staleSightRefused() async throws {
        let world = try await HeldWorld()
        let pim = try await world.person("pim"), nok = try await world.person("nok")
        try await world.befriend(pim, nok)
        let services = world.services
        _ = try await services.alerts.allow(nok.userID, by: pim)
        _ = try await services.friends.sharePosition(pim, at: destination(from: Spot.library, distance: 600, bearing: 90), accuracy: nil, status: nil)
        let alert = try await services.alerts.set(.place(try PlaceID("csulb-lib")), radius: nil, on: pim.userID, by: nok).alert
        try await world.stores.follow([], at: world.clock.now)
        #expect(world.stores.heldAlerts(of: pim.userID)?.sights[alert.id]?.watched.privacyMode == false, "memory holds Pim's sight")

        // Another process turns Pim's privacy mode on, straight in the record: memory's sight still shows Pim.
        var hidden = try #require(try await world.store.account(id: pim.userID))
        hidden.privacyMode = true
        #expect(try await world.store.updateAccount(StoredAccount(account: hidden, passwordHash: nil), ending: .none))
        world.clock.advance(by: .seconds(30))
        _ = try await services.friends.sharePosition(pim, at: Spot.library, accuracy: nil, status: nil)
        func told() async throws -> [EventType] {
            try await world.store.events(for: nok.userID, after: nil, since: Timestamp(millisecondsSince1970: 0), limit: 100).map(\.type)
                .filter { $0 == .friendArrived || $0 == .friendLeft }
        }
        #expect(try await told().isEmpty, "the arrival of a friend in privacy mode is not told")
        #expect(try await world.store.alerts(involving: nok.userID).map(\.inside) == [false], "the alert as it was")

        // The same process turns it off again; once the feed has brought both changes, Pim's next move tells.
        hidden.privacyMode = false
        #expect(try await world.store.updateAccount(StoredAccount(account: hidden, passwordHash: nil), ending: .none))
        try await world.stores.follow([.account(pim.userID)], at: world.clock.now)
        world.clock.advance(by: .seconds(30))
        _ = try await services.friends.sharePosition(pim, at: destination(from: Spot.library, distance: 10, bearing: 0), accuracy: nil, status: nil)
        #expect(try await told() == [.friendArrived])
    }

    @Test("memory holds every alert, answers nothing for a person whose alerts this process changed until read again, and learns others' changes from the feed")
    func settling() async throws {
        let (world, pim, nok, first, held) = try await nokWatchingPim()
        let store = world.store, clock = world.clock
        #expect(held.alerts(of: pim)?.alerts == [first] && held.alerts(of: nok)?.alerts == [first], "loaded, under both people")
        #expect(try #require(held.alerts(of: try await world.person("cyra").userID)).alerts.isEmpty, "someone with no alerts has none")

        #expect(try await store.advance(first, from: nil, to: true, toldAt: nil, telling: nil))
        held.unsettle([pim, nok])
        #expect(held.alerts(of: pim)?.alerts == nil && held.alerts(of: nok)?.alerts == nil, "unsettled by this process's own write")
        try await held.refresh([])
        var moved = first
        moved.inside = true
        #expect(held.alerts(of: pim)?.alerts == [moved] && held.alerts(of: nok)?.alerts == [moved], "settled by a read begun after the write")

        // Another process removes the alert: memory keeps it until the feed names its people.
        #expect(try await store.removeAlert(first.id, watcher: nok))
        #expect(held.alerts(of: pim)?.alerts == [moved])
        try await held.refresh([pim])
        #expect(held.alerts(of: pim)?.alerts == [] && held.alerts(of: nok)?.alerts == [], "gone for both, though the change named one")

        let second = Alert(id: .random(), watcher: pim, watched: nok, target: .nearby, radius: .standard, createdAt: clock.now)
        #expect(try await store.addAlert(second, limit: 10) == .added(second))
        try await held.reload()
        #expect(held.alerts(of: nok)?.alerts == [second], "a reload reads everything again")
    }

    @Test("this process's own move puts the new state in memory and keeps both people settled; a state memory did not expect or an unsettled person sends them to the record; a change the record refused leaves memory as it was")
    func ownMovesSettled() async throws {
        let (world, pim, nok, alert, held) = try await nokWatchingPim()
        let store = world.store, clock = world.clock

        let arrival = fromMemory(AlertChange(alert: alert, to: true, toldAt: clock.now, telling: nil), held, of: pim)
        #expect(try await store.advance([arrival]) == [alert.id])
        held.advanced([arrival], moved: [alert.id])
        var inside = alert
        inside.inside = true
        inside.toldAt = clock.now
        #expect(held.alerts(of: pim)?.alerts == [inside] && held.alerts(of: nok)?.alerts == [inside], "both settled, at the state the record holds")
        #expect(try await store.alerts(involvingAny: [pim]) == [inside])

        // Worked out from a state memory does not hold (another process's write the feed has not brought yet).
        let unexpected = fromMemory(AlertChange(alert: alert, from: false, to: true, toldAt: nil, telling: nil), held, of: pim)
        held.advanced([unexpected], moved: [alert.id])
        #expect(held.alerts(of: pim)?.alerts == nil && held.alerts(of: nok)?.alerts == nil)
        try await held.refresh([])
        #expect(held.alerts(of: pim)?.alerts == [inside], "read again from the record")

        // The record refused the change: someone else moved the alert on first.
        // Memory stays as it was: the feed brings the write that moved it.
        let refused = AlertChange(alert: inside, to: false, toldAt: nil, telling: nil)
        held.advanced([refused], moved: [])
        #expect(held.alerts(of: pim)?.alerts == [inside] && held.alerts(of: nok)?.alerts == [inside])

        // While Pim is unsettled a read may be under way: memory takes nothing in place, even what it expected.
        held.unsettle([pim])
        let leaving = fromMemory(AlertChange(alert: inside, to: false, toldAt: inside.toldAt, telling: nil), held, of: nok)
        #expect(try await store.advance([leaving]) == [alert.id])
        held.advanced([leaving], moved: [alert.id])
        #expect(held.alerts(of: nok)?.alerts == nil)
        try await held.refresh([])
        var left = inside
        left.inside = false
        #expect(held.alerts(of: pim)?.alerts == [left] && held.alerts(of: nok)?.alerts == [left])
    }

    @Test("memory takes the state the feed says a move left, whichever process wrote it and whether the note or this process's own write comes first, and stays settled; a note of an alert memory does not hold sends the person watched to the record")
    func movesFollowed() async throws {
        let (world, pim, nok, alert, _) = try await nokWatchingPim()
        let store = world.store, clock = world.clock
        // Read again once now, then not for an hour: who is unsettled shows.
        let held = try await HeldAlerts(record: store, rereadEvery: .seconds(3600))
        held.unsettle([pim])
        try await held.refresh([])
        func note(_ inside: Bool, toldAt: Timestamp?) -> AlertMove {
            AlertMove(watched: pim, alert: alert.id, inside: inside, toldAt: toldAt)
        }
        func both() -> [[Alert]?] { [held.alerts(of: pim)?.alerts, held.alerts(of: nok)?.alerts] }
        #expect(both() == [[alert], [alert]])

        // Another process moves the alert on; the feed's note carries its state.
        let arrival = AlertChange(alert: alert, to: true, toldAt: clock.now, telling: nil)
        #expect(try await store.advance([arrival]) == [alert.id])
        try await held.refresh([], moved: [note(true, toldAt: clock.now)])
        var inside = alert
        inside.inside = true
        inside.toldAt = clock.now
        #expect(both() == [[inside], [inside]], "taken from the note, both settled")

        // This process moves it on, and the feed brings the note back after.
        clock.advance(by: .seconds(60))
        let leaving = fromMemory(AlertChange(alert: inside, to: false, toldAt: clock.now, telling: nil), held, of: pim)
        #expect(try await store.advance([leaving]) == [alert.id])
        held.advanced([leaving], moved: [alert.id])
        try await held.refresh([], moved: [note(false, toldAt: clock.now)])
        var left = inside
        left.inside = false
        left.toldAt = clock.now
        #expect(both() == [[left], [left]])

        // The note comes before this process's own write reaches memory.
        clock.advance(by: .seconds(60))
        let back = AlertChange(alert: left, to: true, toldAt: clock.now, telling: nil)
        #expect(try await store.advance([back]) == [alert.id])
        try await held.refresh([], moved: [note(true, toldAt: clock.now)])
        held.advanced([back], moved: [alert.id])
        var again = left
        again.inside = true
        again.toldAt = clock.now
        #expect(both() == [[again], [again]], "the write finds its state in memory and unsettles nobody")
        #expect(try await store.alerts(involvingAny: [pim]) == [again])

        // An alert memory does not hold.
        try await held.refresh([], moved: [AlertMove(watched: nok, alert: .random(), inside: true, toldAt: nil)])
        #expect(held.alerts(of: nok) == nil && held.alerts(of: pim)?.alerts == [again])
    }

    @Test("a move's change does not put its state back where the feed's notes of it and of a later write came first and left the state the change expected")
    func laterNoteWins() async throws {
        let (world, pim, nok, alert, held) = try await nokWatchingPim()
        let store = world.store
        // Pim is outside, never told: memory and the record agree.
        let outside = fromMemory(AlertChange(alert: alert, to: false, toldAt: nil, telling: nil), held, of: pim)
        #expect(try await store.advance([outside]) == [alert.id])
        held.advanced([outside], moved: [alert.id])
        var out = alert
        out.inside = false
        #expect(held.alerts(of: pim)?.alerts == [out])

        // This process works an arrival out and commits it; before its task puts it in memory, another process
        // moves the alert out again with the same told time, and the feed brings both notes.
        let arrival = fromMemory(AlertChange(alert: out, to: true, toldAt: nil, telling: nil), held, of: pim)
        #expect(try await store.advance([arrival]) == [alert.id])
        var inside = out
        inside.inside = true
        #expect(try await store.advance([AlertChange(alert: inside, to: false, toldAt: nil, telling: nil)]) == [alert.id])
        try await held.refresh([], moved: [
            AlertMove(watched: pim, alert: alert.id, inside: true, toldAt: nil), AlertMove(watched: pim, alert: alert.id, inside: false, toldAt: nil),
        ])
        held.advanced([arrival], moved: [alert.id])
        #expect(held.alerts(of: pim)?.alerts != [inside], "memory never shows the arrival the record no longer holds")
        try await held.refresh([])
        #expect(held.alerts(of: pim)?.alerts == [out] && held.alerts(of: nok)?.alerts == [out])
    }
}
