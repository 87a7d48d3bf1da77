/// The alert rules between two friends, under the pair's lock as every change between them: an alert set while
/// the watched person takes back their permission is either set first (and then ended with it) or refused.
extension FriendPair {
    /// The other one of the two.
    func other(than user: UserID) -> UserID { user == first ? second : first }

    /// Whether `person` lets the other set place alerts on them.
    public func allowsWatching(by person: UserID) -> Bool {
        watches.contains { $0.person == person }
    }

    /// `person` lets the other set place alerts on them; nil when the two are not friends. Allowing again keeps
    /// the first time.
    public mutating func allowWatching(by person: UserID, at time: Timestamp) -> WatchOutcome? {
        guard areFriends else { return nil }
        if let existing = watches.first(where: { $0.person == person }) { return WatchOutcome(permission: existing, isNew: false) }
        let permission = WatchPermission(person: person, watcher: other(than: person), since: time)
        watches.append(permission)
        return WatchOutcome(permission: permission, isNew: true)
    }

    /// `person` takes back the other's permission, which ends every alert of theirs that needed it; false when
    /// there was none.
    public mutating func revokeWatching(by person: UserID) -> Bool {
        guard allowsWatching(by: person) else { return false }
        watches.removeAll { $0.person == person }
        alerts.removeAll { $0.watched == person && $0.target.needsPermission }
        return true
    }

    /// Sets `alert` when the two are friends, the watched person allows it (for the targets that need it) and
    /// the watcher holds fewer than `limit` alerts on them.
    public mutating func add(_ alert: Alert, limit: Int) -> AlertOutcome {
        guard areFriends else { return .notFriends }
        if alert.target.needsPermission && !allowsWatching(by: alert.watched) { return .notAllowed }
        guard alerts.count(where: { $0.watcher == alert.watcher }) < limit else { return .tooMany }
        alerts.append(alert)
        return .added(alert)
    }

    /// Removes the alert `id` when `watcher` set it; false otherwise.
    public mutating func removeAlert(_ id: AlertID, watcher: UserID) -> Bool {
        let count = alerts.count
        alerts.removeAll { $0.id == id && $0.watcher == watcher }
        return alerts.count != count
    }
}
