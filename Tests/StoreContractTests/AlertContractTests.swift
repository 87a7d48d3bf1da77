import GeoCore
import Testing
import VicinityCore

@Suite("Alert store contract")
struct AlertContractTests {
    private func alert(_ watcher: Account, on watched: Account, _ target: AlertTarget, at time: Timestamp = epoch) throws -> Alert {
        Alert(id: .random(), watcher: watcher.id, watched: watched.id, target: target, radius: try AlertRadius(meters: 150), createdAt: time)
    }

    /// Anna and Ben, friends, Anna holding a nearby alert on Ben, never yet in any state, and the notice it tells.
    private func annaWatchingBen(_ kind: StoreKind) async throws -> (SocialSubject, Account, Account, Alert, AlertNotice) {
        let subject = try await SocialSubject(kind), store = subject.store
        let a = try account("anna"), b = try account("ben")
        for person in [a, b] { try await store.createAccount(person, passwordHash: someHash) }
        try await store.befriend(a.id, b.id)
        let added = try alert(a, on: b, .nearby)
        #expect(try await store.addAlert(added, limit: 10) == .added(added))
        return (subject, a, b, added, AlertNotice(alert: added.id, friend: b.summary, placeName: nil, radius: added.radius.distance))
    }

    @Test("the sights of alerts on more people than one read takes are all read, each of the person its alert watches",
          arguments: StoreKind.available)
    func manySights(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let anna = try account("anna")
        try await store.createAccount(anna, passwordHash: someHash)
        var alerts: [Alert] = []
        for index in 0..<250 {
            let friend = try account("friend\(index)")
            try await store.createAccount(friend, passwordHash: someHash)
            try await store.befriend(anna.id, friend.id)
            // Every third friend also watches Anna: her side towards them is read too.
            let watched = try alert(anna, on: friend, .nearby)
            alerts.append(watched)
            if index % 3 == 0 { alerts.append(try alert(friend, on: anna, .nearby)) }
        }
        for added in alerts { #expect(try await store.addAlert(added, limit: 10) == .added(added)) }
        let sights = try await store.alertSights(of: alerts)
        #expect(sights.count == alerts.count)
        #expect(alerts.allSatisfy { sights[$0.id]?.watched.id == $0.watched && sights[$0.id]?.share == .exact })
    }

    @Test("place alerts need the watched person's permission and end with it, with the friendship and with either account; nearby alerts need none",
          arguments: StoreKind.available)
    func permissions(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let a = try account("anna"), b = try account("ben"), c = try account("cleo")
        for person in [a, b, c] { try await store.createAccount(person, passwordHash: someHash) }
        try await store.befriend(a.id, b.id)
        let library = try alert(a, on: b, .place(PlaceID("library")))
        #expect(try await store.addAlert(library, limit: 10) == .notAllowed)
        #expect(try await store.addAlert(try alert(a, on: c, .nearby), limit: 10) == .notFriends)
        #expect(try await store.allowWatching(by: c.id, watcher: a.id, at: epoch) == nil, "strangers cannot be allowed")

        let allowed = try #require(try await store.allowWatching(by: b.id, watcher: a.id, at: epoch + .seconds(1))).permission
        #expect(allowed == WatchPermission(person: b.id, watcher: a.id, since: epoch + .seconds(1)))
        #expect(try await store.allowWatching(by: b.id, watcher: a.id, at: epoch + .seconds(5)) == WatchOutcome(permission: allowed, isNew: false),
                "the first time stands")
        #expect(try await store.addAlert(library, limit: 10) == .added(library))
        let point = try alert(a, on: b, .point(Coordinate(latitude: 33.7776, longitude: -118.1145)))
        let campus = Alert(
            id: .random(), watcher: a.id, watched: b.id, target: .campus(try PlaceID("csulb")), radius: .boundary, createdAt: epoch)
        let nearby = try alert(b, on: a, .nearby)
        for added in [point, campus, nearby] { #expect(try await store.addAlert(added, limit: 10) == .added(added)) }
        #expect(Set(try await store.alerts(involving: a.id)) == [library, point, campus, nearby], "read back as set, both ways")
        let context = try await store.alertContext(of: b.id)
        #expect(Set(context.alerts) == [library, point, campus, nearby])
        #expect(Set(context.sights.keys) == Set([library, point, campus, nearby].map(\.id)), "each alert with its sight")
        #expect([library, point, campus].allSatisfy { context.sights[$0.id]?.watched == b }, "the person watched")
        #expect(context.sights[nearby.id]?.watched == a && context.sights[nearby.id]?.share == .exact && context.sights[nearby.id]?.until == nil)
        #expect(try await store.alertSights(of: [nearby]) == [nearby.id: try #require(context.sights[nearby.id])], "read alone alike")
        #expect(try await store.alertContext(of: c.id).alerts.isEmpty)
        #expect(try await store.watchPermissions(involving: a.id) == [allowed])

        // Taking the permission back ends the alerts that needed it, not the other's nearby alert.
        #expect(try await store.revokeWatching(by: b.id, watcher: a.id))
        #expect(try await store.revokeWatching(by: b.id, watcher: a.id) == false)
        #expect(try await store.alerts(involving: b.id) == [nearby])
        #expect(try await store.removeAlert(nearby.id, watcher: a.id) == false, "only its watcher removes it")
        #expect(try await store.removeAlert(nearby.id, watcher: b.id))
        #expect(try await store.alerts(involving: b.id).isEmpty)

        // The friendship's end ends alerts and permissions with it.
        _ = try await store.allowWatching(by: b.id, watcher: a.id, at: epoch)
        #expect(try await store.addAlert(library, limit: 10) == .added(library))
        #expect(try await store.endFriendship(of: b.id, with: a.id))
        #expect(try await store.alerts(involving: a.id).isEmpty)
        #expect(try await store.watchPermissions(involving: b.id).isEmpty)

        // So does an account's deletion.
        try await store.befriend(a.id, c.id)
        _ = try await store.allowWatching(by: c.id, watcher: a.id, at: epoch)
        _ = try await store.addAlert(try alert(a, on: c, .nearby), limit: 10)
        #expect(try await store.deleteAccount(c.id, at: epoch, cancel: { _ in false }, announcements: { _, _ in [] }))
        #expect(try await store.alerts(involving: a.id).isEmpty)
        #expect(try await store.watchPermissions(involving: a.id).isEmpty)
    }

    @Test("an alert's state changes once however many writers race the same change, and its event is recorded with it",
          arguments: StoreKind.available)
    func advanceOnce(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let a = try account("anna"), b = try account("ben")
        for person in [a, b] { try await store.createAccount(person, passwordHash: someHash) }
        try await store.befriend(a.id, b.id)
        _ = try await store.allowWatching(by: b.id, watcher: a.id, at: epoch)
        var alerts: [Alert] = []
        for index in 0..<10 {
            let added = try alert(a, on: b, .point(Coordinate(latitude: 33.7776, longitude: -118.1145 + Double(index) / 1000)))
            #expect(try await store.addAlert(added, limit: 10) == .added(added))
            alerts.append(added)
        }
        #expect(try await store.addAlert(try alert(a, on: b, .nearby), limit: 10) == .tooMany)
        // Every alert first set without telling; then four writers each try to tell the same arrival.
        for alert in alerts { #expect(try await store.advance(alert, from: nil, to: false, toldAt: nil, telling: nil)) }
        let won = try await withThrowingTaskGroup(of: Bool.self) { group in
            for alert in alerts {
                for racer in 0..<4 {
                    let writer = subject.store(for: racer)
                    let notice = AlertNotice(alert: alert.id, friend: b.summary, placeName: nil, radius: alert.radius.distance)
                    group.addTask {
                        try await writer.advance(
                            alert, from: false, to: true, toldAt: epoch + .seconds(1),
                            telling: .alert(.friendArrived, to: a.id, notice, at: epoch + .seconds(1)))
                    }
                }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(won == alerts.count)
        let told = try await store.events(for: a.id, after: nil, since: epoch, limit: 100).filter { $0.type == .friendArrived }
        #expect(told.count == alerts.count)
        #expect(Set(told.compactMap { if case .friendArrived(let notice) = $0.payload { notice.alert } else { nil } }) == Set(alerts.map(\.id)))
        let stored = try await store.alerts(involving: a.id)
        #expect(stored.allSatisfy { $0.inside == true && $0.toldAt == epoch + .seconds(1) })
        #expect(try await store.advance(alerts[0], from: false, to: true, toldAt: nil, telling: nil) == false, "the state moved on")
    }

    @Test("a change worked out before the alert told and came back to the same state is refused, so that no second arrival is told within the quiet period",
          arguments: StoreKind.available)
    func advanceExpectsWhenItTold(kind: StoreKind) async throws {
        let (subject, a, b, added, notice) = try await annaWatchingBen(kind)
        let store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let arrived = epoch + .seconds(1)
        #expect(try await store.advance(added, from: nil, to: true, toldAt: arrived, telling: .alert(.friendArrived, to: a.id, notice, at: arrived)))
        var inside = added
        inside.inside = true
        inside.toldAt = arrived
        #expect(try await store.advance(inside, from: true, to: false, toldAt: arrived, telling: nil), "left, within the quiet period: not told")

        // Read before the arrival: outside, never told. The state matches again; when it told does not.
        #expect(try await store.advance(
            added, from: false, to: true, toldAt: epoch + .seconds(2),
            telling: .alert(.friendArrived, to: a.id, notice, at: epoch + .seconds(2))) == false)
        let told = try await store.events(for: a.id, after: nil, since: epoch, limit: 100).filter { $0.type == .friendArrived }
        #expect(told.map(\.createdAt) == [arrived])
        #expect(try await store.alerts(involving: a.id).map(\.toldAt) == [arrived])

        var outside = inside
        outside.inside = false
        #expect(try await store.advance(outside, from: false, to: true, toldAt: arrived, telling: nil), "worked out from the record's state")
    }

    @Test("a change is written only while the record still holds the sight it was worked out from: privacy mode, the default level, the level set and its end",
          arguments: StoreKind.available)
    func advanceExpectsTheSight(kind: StoreKind) async throws {
        let (subject, a, b, added, notice) = try await annaWatchingBen(kind)
        let store = subject.store
        defer { withExtendedLifetime(subject) {} }
        func arrival(seen sight: AlertSight, at time: Timestamp) -> AlertChange {
            AlertChange(alert: added, to: true, toldAt: time, telling: .alert(.friendArrived, to: a.id, notice, at: time), sight: sight)
        }
        func sight() async throws -> AlertSight { try #require(try await store.alertSights(of: [added])[added.id]) }

        // Each setting changed after the sight was read refuses the change worked out from it, and tells nothing.
        var seen = try await sight()
        let hour = epoch + .seconds(3600)
        #expect(try await store.setSharing(.building, until: hour, from: b.id, to: a.id) != nil)
        #expect(try await store.advance([arrival(seen: seen, at: epoch)]).isEmpty, "the level set changed")
        seen = try await sight()
        #expect(seen.share == .building && seen.until == hour)
        #expect(try await store.setSharing(.building, until: hour + .seconds(1), from: b.id, to: a.id) != nil)
        #expect(try await store.advance([arrival(seen: seen, at: epoch)]).isEmpty, "its end changed")
        seen = try await sight()
        var hidden = b
        hidden.privacyMode = true
        #expect(try await store.updateAccount(StoredAccount(account: hidden, passwordHash: nil), ending: .none))
        #expect(try await store.advance([arrival(seen: seen, at: epoch)]).isEmpty, "privacy mode turned on")
        seen = try await sight()
        var sharing = hidden
        sharing.defaultShare = .none
        #expect(try await store.updateAccount(StoredAccount(account: sharing, passwordHash: nil), ending: .none))
        #expect(try await store.advance([arrival(seen: seen, at: epoch)]).isEmpty, "the default level changed")
        #expect(try await store.events(for: a.id, after: nil, since: epoch, limit: 100).isEmpty)
        #expect(try await store.alerts(involving: a.id) == [added], "the alert as it was")

        // A name changed since leaves the sight holding; the sight read now is written, with its event.
        seen = try await sight()
        var renamed = sharing
        renamed.firstName = try PersonName("Benjamin", field: "first_name")
        #expect(try await store.updateAccount(StoredAccount(account: renamed, passwordHash: nil), ending: .none))
        #expect(try await store.advance([arrival(seen: seen, at: epoch + .seconds(1))]) == [added.id])
        #expect(try await store.events(for: a.id, after: nil, since: epoch, limit: 100).map(\.type) == [.friendArrived])

    }

    @Test("changes of every kind in one write each move their own alert only as it expects: fresh or told before, leaving untold, an ending share, no sight, a stale sight, a wrong state",
          arguments: StoreKind.available)
    func changesOfEveryShapeInOneWrite(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let anna = try account("anna")
        try await store.createAccount(anna, passwordHash: someHash)
        var friends: [Account] = [], alerts: [Alert] = []
        for index in 0..<6 {
            let friend = try account("friend\(index)")
            try await store.createAccount(friend, passwordHash: someHash)
            try await store.befriend(anna.id, friend.id)
            let added = try alert(anna, on: friend, .nearby)
            #expect(try await store.addAlert(added, limit: 10) == .added(added))
            friends.append(friend)
            alerts.append(added)
        }
        func arrival(_ index: Int, at time: Timestamp) -> EventDraft? {
            .alert(.friendArrived, to: anna.id, AlertNotice(alert: alerts[index].id, friend: friends[index].summary, placeName: nil, radius: alerts[index].radius.distance), at: time)
        }
        // The second alert has told once; the third friend shares for an hour; the fifth's sight goes stale.
        #expect(try await store.advance(alerts[1], from: nil, to: true, toldAt: epoch, telling: nil))
        let hour = epoch + .seconds(3600)
        #expect(try await store.setSharing(.exact, until: hour, from: friends[2].id, to: anna.id) != nil)
        let sights = try await store.alertSights(of: alerts)
        var hidden = friends[4]
        hidden.privacyMode = true
        #expect(try await store.updateAccount(StoredAccount(account: hidden, passwordHash: nil), ending: .none))
        #expect(sights[alerts[2].id]?.until == hour)

        let later = epoch + .seconds(10)
        var told = alerts[1]
        told.inside = true
        told.toldAt = epoch
        let changes = [
            AlertChange(alert: alerts[0], to: true, toldAt: later, telling: arrival(0, at: later), sight: sights[alerts[0].id]),
            AlertChange(alert: told, to: false, toldAt: nil, telling: nil, sight: sights[alerts[1].id]),
            AlertChange(alert: alerts[2], to: true, toldAt: later, telling: arrival(2, at: later), sight: sights[alerts[2].id]),
            AlertChange(alert: alerts[3], to: true, toldAt: later, telling: arrival(3, at: later)),
            AlertChange(alert: alerts[4], to: true, toldAt: later, telling: arrival(4, at: later), sight: sights[alerts[4].id]),
            AlertChange(alert: alerts[5], from: false, to: true, toldAt: later, telling: arrival(5, at: later), sight: sights[alerts[5].id]),
        ]
        #expect(try await store.advance(changes) == Set([0, 1, 2, 3].map { alerts[$0].id }))

        let stored = Dictionary(uniqueKeysWithValues: try await store.alerts(involving: anna.id).map { ($0.id, $0) })
        let states = alerts.map { stored[$0.id].map { [$0.inside.map { $0 ? "in" : "out" } ?? "never", $0.toldAt.map { "\($0.millisecondsSince1970)" } ?? "untold"] } }
        let at = "\(later.millisecondsSince1970)"
        #expect(states == [["in", at], ["out", "untold"], ["in", at], ["in", at], ["never", "untold"], ["never", "untold"]])
        let events = try await store.events(for: anna.id, after: nil, since: epoch, limit: 100)
        let tellings = [0, 2, 3].compactMap { arrival($0, at: later)?.payload }
        #expect(events.count == 3 && Set(events.map(\.payload)) == Set(tellings))
    }

    @Test("twenty alerts set at once through two stores on one friend stop at the limit", arguments: StoreKind.available)
    func limitHoldsUnderRace(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let a = try account("anna"), b = try account("ben")
        for person in [a, b] { try await store.createAccount(person, passwordHash: someHash) }
        try await store.befriend(a.id, b.id)
        let outcomes = try await withThrowingTaskGroup(of: AlertOutcome.self) { group in
            for index in 0..<20 {
                let writer = subject.store(for: index), added = try alert(a, on: b, .nearby)
                group.addTask { try await writer.addAlert(added, limit: 10) }
            }
            return try await group.reduce(into: [AlertOutcome]()) { $0.append($1) }
        }
        #expect(outcomes.filter { if case .added = $0 { true } else { false } }.count == 10)
        #expect(outcomes.filter { $0 == .tooMany }.count == 10)
        #expect(try await store.alerts(involving: a.id).count == 10)
    }
}
