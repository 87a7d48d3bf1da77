import GeoCore
import Synchronization
import Testing
import VicinityCore
import VicinitySQL

/// A store's plans run only once let through: holds a group commit's first group in the store, so the writes
/// after it are known to wait for the next. Every plan let through runs in the real store.
final class HeldRunner: SQLPlanRunner {
    let store: any SQLPlanRunner
    private let state = Mutex((held: true, waiters: [CheckedContinuation<Void, Never>](), runs: 0))
    private let failure = Mutex<(any Error & Sendable)?>(nil)

    init(_ store: any SQLPlanRunner) { self.store = store }

    /// Plans run so far, held ones included.
    var runs: Int { state.withLock { $0.runs } }

    /// Lets the held plans go; with `failure`, they fail with it instead of running.
    func release(failing failure: (any Error & Sendable)? = nil) {
        self.failure.withLock { $0 = failure }
        let waiters = state.withLock { state in
            state.held = false
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func run<Result: Sendable>(_ plan: SQLPlan<Result>, access: SQLAccess) async throws -> Result {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let held = state.withLock { state in
                state.runs += 1
                if state.held { state.waiters.append(waiter) }
                return state.held
            }
            if !held { waiter.resume() }
        }
        if let failure = failure.withLock({ $0 }) { throw failure }
        return try await store.run(plan, access: access)
    }

    func forEach<Record: SQLRecord>(
        _ type: Record.Type, where condition: SQLCondition, batch: Int, _ body: @Sendable ([Record]) throws -> Void
    ) async throws {
        try await store.forEach(type, where: condition, batch: batch, body)
    }
}

@Suite("Group commit of moves")
struct GroupCommitTests {
    @Test("forty people moving five times each, at once, through two stores, leave each one's last move in both",
          arguments: StoreKind.available)
    func manyMovesAtOnce(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        var people: [Account] = []
        for index in 0..<40 {
            let person = try account("mover\(index)")
            try await store.createAccount(person, passwordHash: someHash)
            people.append(person)
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, person) in people.enumerated() {
                let target = subject.store(for: index)
                group.addTask {
                    for step in 0..<5 { try await target.setPosition(try Self.move(person.id, step: step, of: index)) }
                }
            }
            try await group.waitForAll()
        }
        for (index, person) in people.enumerated() {
            let last = try Self.move(person.id, step: 4, of: index)
            #expect(try await store.position(of: person.id) == last)
            #expect(try await subject.peer.position(of: person.id) == last)
        }
    }

    @Test("writes that wait for a group go in one, a person twice keeps the later, and one the store refuses fails alone",
          arguments: StoreKind.available.filter { $0 != .inMemory })
    func groupsAndRefusals(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind)
        defer { withExtendedLifetime(subject) {} }
        let store = try #require(subject.store as? any SQLRecordStore)
        var people: [Account] = []
        for index in 0..<20 {
            let person = try account("grouped\(index)")
            try await store.createAccount(person, passwordHash: someHash)
            people.append(person)
        }
        // One group at a time, its first held in the store while the others line up behind it.
        let commits = GroupCommit.moves(largest: 256, concurrent: 1)
        let runner = HeldRunner(store)
        let nobody = UserID.random()  // no account: the record refuses a position of theirs
        let firstMove = try Self.move(people[0].id, step: 0, of: 0)
        let first = Task { try await commits.write(Move(position: firstMove, alerts: []), via: runner) }
        try await Self.waitUntil { runner.runs == 1 }
        // The refused write among the others; people[1] twice, the later last.
        var lined: [(UserID, SharedPosition)] = []
        for (index, person) in people.enumerated().dropFirst() { lined.append((person.id, try Self.move(person.id, step: 1, of: index))) }
        lined.append((nobody, try Self.move(nobody, step: 1, of: 99)))
        lined.append((people[1].id, try Self.move(people[1].id, step: 2, of: 1)))
        var outcomes: [Task<Bool, Never>] = []
        for (count, (_, position)) in lined.enumerated() {
            outcomes.append(Task {
                do {
                    return try await commits.write(Move(position: position, alerts: []), via: runner).isEmpty
                } catch {
                    return false
                }
            })
            try await Self.waitUntil { commits.waiting == count + 1 }
        }
        runner.release()
        _ = try await first.value
        var succeeded: [UserID] = []
        for (task, (person, _)) in zip(outcomes, lined) where await task.value { succeeded.append(person) }
        #expect(Set(succeeded) == Set(people.dropFirst().map(\.id)), "every write but the refused one succeeded")
        #expect(succeeded.count == lined.count - 1)
        #expect(try await store.position(of: nobody) == nil)
        #expect(try await store.position(of: people[1].id) == Self.move(people[1].id, step: 2, of: 1), "the later of two moves stays")
        for (index, person) in people.enumerated().dropFirst(2) {
            #expect(try await store.position(of: person.id) == Self.move(person.id, step: 1, of: index))
        }
        // The held group, the refused group, then each of the refused group's writes alone.
        #expect(runner.runs == 2 + lined.count)

        // Without a refusal, the writes waiting go as one group, a person twice in it included.
        let second = GroupCommit.moves(largest: 256, concurrent: 1)
        let secondRunner = HeldRunner(store)
        let heldMove = try Self.move(people[0].id, step: 3, of: 0)
        let held = Task { try await second.write(Move(position: heldMove, alerts: []), via: secondRunner) }
        try await Self.waitUntil { secondRunner.runs == 1 }
        var moves: [Task<Set<AlertID>, any Error>] = []
        let wanted = try people.enumerated().map { try Self.move($1.id, step: 4, of: $0) } + [Self.move(people[2].id, step: 5, of: 2)]
        for (count, position) in wanted.enumerated() {
            moves.append(Task { try await second.write(Move(position: position, alerts: []), via: secondRunner) })
            try await Self.waitUntil { second.waiting == count + 1 }
        }
        secondRunner.release()
        _ = try await held.value
        for move in moves { #expect(try await move.value.isEmpty) }
        #expect(secondRunner.runs == 2, "the held group and one more")
        #expect(try await store.position(of: people[2].id) == Self.move(people[2].id, step: 5, of: 2))
        #expect(try await store.position(of: people[7].id) == Self.move(people[7].id, step: 4, of: 7))
    }

    @Test("two moves in one group changing one alert: the first to come moves it and tells, the later finds it moved; each learns its own",
          arguments: StoreKind.available.filter { $0 != .inMemory })
    func alertChangesInOneGroup(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind)
        defer { withExtendedLifetime(subject) {} }
        let store = try #require(subject.store as? any SQLRecordStore)
        let anna = try account("anna"), ben = try account("ben"), cleo = try account("cleo")
        for person in [anna, ben, cleo] { try await store.createAccount(person, passwordHash: someHash) }
        try await store.befriend(anna.id, ben.id)
        try await store.befriend(anna.id, cleo.id)
        let onBen = Alert(id: .random(), watcher: anna.id, watched: ben.id, target: .nearby, radius: try AlertRadius(meters: 150), createdAt: epoch)
        let onCleo = Alert(id: .random(), watcher: anna.id, watched: cleo.id, target: .nearby, radius: try AlertRadius(meters: 150), createdAt: epoch)
        for alert in [onBen, onCleo] { #expect(try await store.addAlert(alert, limit: 10) == .added(alert)) }
        let told = epoch + .seconds(1)
        func arrival(_ alert: Alert, of friend: Account) -> AlertChange {
            let notice = AlertNotice(alert: alert.id, friend: friend.summary, placeName: nil, radius: alert.radius.distance)
            return AlertChange(alert: alert, to: true, toldAt: told, telling: .alert(.friendArrived, to: anna.id, notice, at: told))
        }

        let commits = GroupCommit.moves(largest: 256, concurrent: 1)
        let runner = HeldRunner(store)
        let opening = try Self.move(cleo.id, step: 0, of: 2)
        let held = Task { try await commits.write(Move(position: opening, alerts: []), via: runner) }
        try await Self.waitUntil { runner.runs == 1 }
        // Ben's move and Anna's both work out Ben's arrival; Cleo's is hers alone.
        let lined = [
            Move(position: try Self.move(ben.id, step: 1, of: 1), alerts: [arrival(onBen, of: ben)]),
            Move(position: try Self.move(anna.id, step: 1, of: 0), alerts: [arrival(onBen, of: ben), arrival(onCleo, of: cleo)]),
        ]
        var outcomes: [Task<Set<AlertID>, any Error>] = []
        for (count, move) in lined.enumerated() {
            outcomes.append(Task { try await commits.write(move, via: runner) })
            try await Self.waitUntil { commits.waiting == count + 1 }
        }
        runner.release()
        #expect(try await held.value.isEmpty)
        #expect(try await outcomes[0].value == [onBen.id], "the first to come moved Ben's alert")
        #expect(try await outcomes[1].value == [onCleo.id], "the later found Ben's moved, and moved Cleo's")
        #expect(runner.runs == 2, "the two went as one group")
        let events = try await store.events(for: anna.id, after: nil, since: epoch, limit: 100).filter { $0.type == .friendArrived }
        #expect(events.count == 2, "each arrival told once")
        #expect(try await store.alerts(involving: anna.id).allSatisfy { $0.inside == true && $0.toldAt == told })
        #expect(try await store.position(of: anna.id) == lined[1].position)
    }

    @Test("writes waiting behind a group the store finds unavailable fail with it at once, without a wait of their own",
          arguments: StoreKind.available.filter { $0 != .inMemory })
    func unavailableFailsTheWaiting(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind)
        defer { withExtendedLifetime(subject) {} }
        let store = try #require(subject.store as? any SQLRecordStore)
        let commits = GroupCommit.moves(largest: 256, concurrent: 1)
        let runner = HeldRunner(store)
        var moves: [Task<Set<AlertID>, any Error>] = []
        for index in 0..<5 {
            let move = Move(position: try Self.move(UserID.random(), step: 0, of: index), alerts: [])
            moves.append(Task { try await commits.write(move, via: runner) })
            if index == 0 { try await Self.waitUntil { runner.runs == 1 } } else { try await Self.waitUntil { commits.waiting == index } }
        }
        runner.release(failing: StoreError.unavailable("stopped for the test"))
        for move in moves {
            await #expect(throws: StoreError.self) { try await move.value }
        }
        #expect(runner.runs == 1, "only the held group went to the store")
        #expect(commits.waiting == 0)
    }

    /// A move of `person` (the `index`th) at its `step`: Hall of Science nudged north per step and east per person.
    static func move(_ person: UserID, step: Int, of index: Int) throws -> SharedPosition {
        SharedPosition(
            userID: person,
            coordinate: try Coordinate(latitude: hallOfScience.latitude + Double(step) * 1e-4, longitude: hallOfScience.longitude + Double(index) * 1e-4),
            accuracy: try Accuracy(meters: Double(5 + step)), status: nil, label: "Around Hall of Science", onCampus: true,
            closestPlace: try PlaceID("csulb-hsci"), updatedAt: epoch + .seconds(Int64(step)))
    }

    /// Waits, yielding, until `condition` holds: what it waits for happens without a clock, so no timeout here.
    static func waitUntil(_ condition: () -> Bool) async throws {
        while !condition() { try await Task.sleep(for: .milliseconds(1)) }
    }
}
