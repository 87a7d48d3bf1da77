import GeoCore

/// An alert as its watcher (or the person watched) reads it.
public struct AlertView: Hashable, Sendable {
    public var alert: Alert
    /// The other person: the one watched, in the watcher's list; the watcher, in the watched person's.
    public var person: UserSummary
    /// The place's or campus's name; nil for a point and for nearby alerts.
    public var placeName: String?
}

/// Someone who may set place alerts on the caller, or holds alerts on them: what the caller sees and can take back.
public struct WatcherView: Hashable, Sendable {
    public var person: UserSummary
    /// Since when the caller allows them place alerts; nil when they hold only nearby alerts.
    public var allowedSince: Timestamp?
    public var alerts: [AlertView]
}

/// Alerts: setting, listing and removing them, the permissions place alerts need, and working out each move.
///
/// Every move is worked out once, by the front that took it, against the alerts of the person who moved
/// (`changes(moving:)`): the state each alert is in lives in the record and changes by a conditional write in
/// the move's own transaction (`PositionStore.setPosition(_:alerts:)`), so of two fronts that race on the same
/// person's moves one changes it and the other finds it changed, and the watcher is told once; a move and what
/// it told commit together or not at all. The write also expects the sight of the friend the change was worked
/// out from (`AlertSight`), so a privacy setting changed meanwhile, on any front, is never told past.
///
/// Never told: a friend who is hidden from the watcher (privacy mode, sharing `none`), whose position is not
/// current, or who shares buildings only when the alert is finer than the building says (a radius below the
/// area's own reach, `LabelRule.around` around a building and `LabelRule.landmark` near one; and campus
/// boundaries, whose side a building-level friend is never shown). A building-level friend is measured from the
/// building's point, as the watcher sees them. The state of such alerts is left as it was.
public struct AlertService<S: Stores>: Sendable {
    let stores: S
    let clock: any WallClock
    let locator: Locator<S.Places, S.Campuses>
    let positions: PositionRules
    public let rules: AlertRules

    public init(stores: S, clock: any WallClock, locator: Locator<S.Places, S.Campuses>, positions: PositionRules, rules: AlertRules = .standard) {
        self.stores = stores
        self.clock = clock
        self.locator = locator
        self.positions = positions
        self.rules = rules
    }

    // MARK: Setting alerts

    /// Sets an alert on a friend. Place, campus and point alerts need the friend's permission; a nearby alert
    /// tells only once the friend has one on the caller too.
    public func set(_ target: AlertTarget, radius: AlertRadius?, on friend: UserID, by identity: Identity) async throws -> AlertView {
        let placeName = try await name(of: target)
        let chosen: AlertRadius
        if case .campus = target { chosen = .boundary } else { chosen = radius ?? .standard }
        var alert = Alert(id: .random(), watcher: identity.userID, watched: friend, target: target, radius: chosen, createdAt: clock.now)
        alert.inside = try await initialState(of: alert)
        switch try await stores.friends.addAlert(alert, limit: rules.perFriend) {
        case .added(let added):
            stores.alertsChanged(of: [added.watcher, added.watched])
            guard let person = try await stores.accounts.summaries(of: [friend])[friend] else { throw ServiceError.notFound(.friend) }
            return AlertView(alert: added, person: person, placeName: placeName)
        case .notFriends: throw ServiceError.notFound(.friend)
        case .notAllowed: throw ServiceError.conflict(.notAllowedToWatch)
        case .tooMany: throw ServiceError.conflict(.tooManyAlerts(limit: rules.perFriend))
        }
    }

    public func remove(_ id: AlertID, by identity: Identity) async throws {
        guard try await stores.friends.removeAlert(id, watcher: identity.userID) else { throw ServiceError.notFound(.alert) }
    }

    /// The caller's alerts, by friend's name then time set.
    public func alerts(of identity: Identity) async throws -> [AlertView] {
        let mine = try await stores.friends.alerts(involving: identity.userID).filter { $0.watcher == identity.userID }
        return try await views(mine, person: \.watched)
    }

    // MARK: Who watches me

    /// `identity` lets a friend set place alerts on them.
    public func allow(_ watcher: UserID, by identity: Identity) async throws -> WatchOutcome {
        guard let outcome = try await stores.friends.allowWatching(by: identity.userID, watcher: watcher, at: clock.now) else {
            throw ServiceError.notFound(.friend)
        }
        return outcome
    }

    /// Takes back a friend's permission: their place alerts on the caller end with it.
    public func revoke(_ watcher: UserID, by identity: Identity) async throws {
        guard try await stores.friends.revokeWatching(by: identity.userID, watcher: watcher) else {
            throw ServiceError.notFound(.watchPermission)
        }
    }

    /// Everyone the caller allows, or who holds alerts on them, by name.
    public func watchers(of identity: Identity) async throws -> [WatcherView] {
        let me = identity.userID
        let allowed = try await stores.friends.watchPermissions(involving: me).filter { $0.person == me }
        let onMe = try await views(try await stores.friends.alerts(involving: me).filter { $0.watched == me }, person: \.watcher)
        let people = try await stores.accounts.summaries(of: allowed.map(\.watcher) + onMe.map(\.alert.watcher))
        let since = Dictionary(allowed.map { ($0.watcher, $0.since) }) { first, _ in first }
        return people.values.map { person in
            WatcherView(person: person, allowedSince: since[person.id], alerts: onMe.filter { $0.alert.watcher == person.id })
        }
        .sorted { ($0.person.displayName, $0.person.id) < ($1.person.displayName, $1.person.id) }
    }

    private func views(_ alerts: [Alert], person: KeyPath<Alert, UserID>) async throws -> [AlertView] {
        let people = try await stores.accounts.summaries(of: alerts.map { $0[keyPath: person] })
        var views: [AlertView] = []
        for alert in alerts {
            guard let summary = people[alert[keyPath: person]] else { continue }
            views.append(AlertView(alert: alert, person: summary, placeName: try await existingName(of: alert.target)))
        }
        return views.sorted {
            ($0.person.displayName, $0.person.id, $0.alert.createdAt, $0.alert.id)
                < ($1.person.displayName, $1.person.id, $1.alert.createdAt, $1.alert.id)
        }
    }

    /// The name of a place or campus target; nil for the others. Throws for one that names nothing.
    private func name(of target: AlertTarget) async throws -> String? {
        switch target {
        case .place(let id):
            guard let place = try await locator.place(id: id) else { throw ServiceError.notFound(.alertPlace) }
            return place.name
        case .campus(let id):
            guard let campus = try await locator.allCampuses().first(where: { $0.id == id }) else { throw ServiceError.notFound(.alertPlace) }
            return campus.name
        case .point, .nearby:
            return nil
        }
    }

    /// The name of a place or campus target while it exists: one removed since the alert was set (a data reload)
    /// leaves the alert listed, by its id alone, and never set off.
    private func existingName(of target: AlertTarget) async throws -> String? {
        do { return try await name(of: target) } catch ServiceError.notFound(.alertPlace) { return nil }
    }

    // MARK: Working out moves

    /// What moving to `position` does to every alert on its person and every nearby alert of theirs: the
    /// changes to write with the position (`PositionStore.setPosition(_:alerts:)`), each with the event telling
    /// its watcher, if any, and the sight it was worked out from, which the write expects. A move memory vouches
    /// for (`HeldAlerts`) reads nothing from the record; any other reads its alerts and sights once. Whoever
    /// writes the changes tells the stores once committed, with the alerts the record moved on
    /// (`Stores.alertsAdvanced(_:moved:)`).
    public func changes(moving position: SharedPosition) async throws -> [AlertChange] {
        let mover = position.userID
        // Memory's alerts and sights where it vouches for the mover (a sight the record has moved past refuses the
        // write; another front's alert not yet in the feed is worked out at the next move); else the record's.
        let held = stores.heldAlerts(of: mover)
        let context = if let held { held } else { try await stores.friends.alertContext(of: mover) }
        let alerts = Self.readBy(mover, context.alerts)
        guard !alerts.isEmpty else { return [] }
        let now = clock.now
        let people = Array(Set(alerts.flatMap { [$0.watcher, $0.watched] }))
        var located = Dictionary(try await stores.positions.positions(of: people).map { ($0.userID, $0) }) { first, _ in first }
        located[mover] = position
        if held != nil, try await !mayChange(alerts, located: located, at: now) { return [] }
        let nearbyPairs = Set(alerts.filter { $0.target == .nearby }.map { Pair(watcher: $0.watcher, watched: $0.watched) })
        var campuses: [PlaceID: Campus]?
        var changes: [AlertChange] = []
        for alert in alerts {
            // A nearby alert counts only while the friend has one on the watcher too.
            if alert.target == .nearby && !nearbyPairs.contains(Pair(watcher: alert.watched, watched: alert.watcher)) { continue }
            guard let sight = context.sights[alert.id], let position = located[alert.watched] else { continue }
            guard
                let (reading, accuracy) = try await self.reading(
                    alert, watched: sight.watched, share: sight.level(at: now), position: position,
                    watcherPosition: located[alert.watcher], at: now, campuses: &campuses),
                let step = AlertRule.step(alert, reading: reading, accuracy: accuracy, at: now, rules: rules)
            else { continue }
            var telling: EventDraft?
            if let told = step.told {
                let notice = AlertNotice(
                    alert: alert.id, friend: sight.watched.summary, placeName: try await existingName(of: alert.target),
                    radius: alert.radius.distance)
                telling = EventDraft.alert(told, to: alert.watcher, notice, at: now)
            }
            var change = AlertChange(alert: alert, to: step.inside, toldAt: telling == nil ? alert.toldAt : now, telling: telling, sight: sight)
            change.heldVersion = context.versions[alert.id]
            changes.append(change)
        }
        return changes
    }

    /// The alerts a move of `mover` works out: those on them, and the nearby alerts they hold on others.
    private static func readBy(_ mover: UserID, _ alerts: [Alert]) -> [Alert] {
        alerts.filter { $0.watched == mover || $0.target == .nearby }
    }

    /// Whether a move may change any of `alerts` (memory's, read by the mover), with everyone `located` where they
    /// are (the mover where they moved to), however a watcher may see the friend: each alert is stepped with the
    /// friend at their own fix and, where the fix is in a building's area, at the building's point, with privacy
    /// mode, sharing, freshness and the nearby alert's pair left out. The record's way of seeing the friend is one
    /// of these or hides them (which changes nothing), so where none of these changes an alert, the record's would
    /// not either.
    private func mayChange(_ alerts: [Alert], located: [UserID: SharedPosition], at now: Timestamp) async throws -> Bool {
        var sightings: [UserID: [SharedPosition]] = [:]
        var campuses: [PlaceID: Campus]?
        for alert in alerts {
            let watcherPosition = located[alert.watcher]
            guard let watched = located[alert.watched] else { continue }
            if sightings[alert.watched] == nil {
                sightings[alert.watched] = [watched] + (try await locator.area(of: watched).map { [$0.coarsened(watched)] } ?? [])
            }
            for seen in sightings[alert.watched] ?? [] {
                guard let reading = try await measure(alert, seen: seen.coordinate, watcherPosition: watcherPosition, campuses: &campuses)
                else { continue }
                if AlertRule.step(alert, reading: reading, accuracy: seen.accuracy, at: now, rules: rules) != nil { return true }
            }
        }
        return false
    }

    /// Where the watched friend stands towards the alert's target as the watcher may know them, and how good
    /// the fix says it is; nil when the privacy rule hides it from the watcher (see the type's comment).
    private func reading(
        _ alert: Alert, watched: Account, share: ShareLevel, position: SharedPosition, watcherPosition: SharedPosition?,
        at now: Timestamp, campuses: inout [PlaceID: Campus]?
    ) async throws -> (AlertReading, Accuracy?)? {
        // The friend as the watcher's list shows them, by the one privacy rule: a building-level friend at the
        // building's point, with no accuracy.
        let area = share == .building ? try await locator.area(of: position) : nil
        let visible = PrivacyRule.visible(
            position, ownerPrivacyMode: watched.privacyMode, relation: .friend(share: share), at: now, rules: positions, area: area)
        guard visible.presence == .current, let shown = visible.position else { return nil }
        if let area {
            if case .campus = alert.target { return nil }
            let reach = area.isAround ? locator.labelRule.around : locator.labelRule.landmark
            guard alert.radius.distance >= reach else { return nil }
        }
        if case .nearby = alert.target {
            guard let own = watcherPosition, positions.isCurrent(own, at: now) else { return nil }
        }
        return try await measure(alert, seen: shown.coordinate, watcherPosition: watcherPosition, campuses: &campuses).map { ($0, shown.accuracy) }
    }

    /// Where a friend seen at `seen` stands towards the alert's target; nil when the target is gone (a place or
    /// campus removed by a data reload) or, for a nearby alert, the watcher has no position.
    private func measure(
        _ alert: Alert, seen: Coordinate, watcherPosition: SharedPosition?, campuses: inout [PlaceID: Campus]?
    ) async throws -> AlertReading? {
        switch alert.target {
        case .place(let id):
            guard let place = try await locator.place(id: id) else { return nil }
            return .distance(haversineDistance(from: place.coordinate, to: seen))
        case .point(let point):
            return .distance(haversineDistance(from: point, to: seen))
        case .campus(let id):
            if campuses == nil { campuses = Dictionary(try await locator.allCampuses().map { ($0.id, $0) }) { first, _ in first } }
            guard let campus = campuses?[id] else { return nil }
            return .boundary(contains: campus.boundary.contains(seen), edge: campus.boundary.distanceToBoundary(from: seen))
        case .nearby:
            guard let own = watcherPosition else { return nil }
            return .distance(haversineDistance(from: own.coordinate, to: seen))
        }
    }

    /// Whether the friend is inside the new alert's target now, as the watcher may know it: an alert set while
    /// the friend is away tells of their next arrival. Nil when the rule hides them: their first move then sets it.
    /// For alerts set straight in a store, as `set` sets them (seeding).
    public func initialState(of alert: Alert) async throws -> Bool? {
        let now = clock.now
        guard let sight = try await stores.friends.alertSights(of: [alert])[alert.id],
            let position = try await stores.positions.position(of: alert.watched)
        else { return nil }
        var campuses: [PlaceID: Campus]?
        guard
            let (reading, accuracy) = try await reading(
                alert, watched: sight.watched, share: sight.level(at: now), position: position,
                watcherPosition: try await stores.positions.position(of: alert.watcher), at: now, campuses: &campuses)
        else { return nil }
        return AlertRule.step(alert, reading: reading, accuracy: accuracy, at: now, rules: rules)?.inside
    }

    private struct Pair: Hashable {
        var watcher: UserID
        var watched: UserID
    }
}
