import GeoCore

/// Where a friend stands towards an alert's target, as the watcher may know it.
public enum AlertReading: Hashable, Sendable {
    /// From the target's point (a place, a point, the watcher) to the friend.
    case distance(Distance)
    /// Whether the boundary contains the friend, and how far they are from its edge.
    case boundary(contains: Bool, edge: Distance)
}

/// What one move does to one alert: the new inside state, and what the watcher is told, if anything.
public struct AlertStep: Hashable, Sendable {
    public var inside: Bool
    public var told: EventType?

    public init(inside: Bool, told: EventType?) {
        self.inside = inside
        self.told = told
    }
}

/// The alert rule, apart from any store, so that it is written once and tested with a clock in hand.
///
/// Invariants:
/// - Entering is at the radius (or the boundary); leaving is only beyond the radius plus a margin, the larger of
///   `AlertRules.minimumMargin` and the fix's reported accuracy: a fix that wanders across the edge does not
///   flap. Between the two the state stays as it was.
/// - The first reading after an alert is set only sets the state: nobody arrived or left.
/// - A change of state is always kept; the watcher is told of it only when `AlertRules.quietPeriod` has
///   passed since they were last told of this alert.
/// - Nearby alerts tell of coming near only; moving apart just re-arms them.
public enum AlertRule {
    public static func step(
        _ alert: Alert, reading: AlertReading, accuracy: Accuracy?, at now: Timestamp, rules: AlertRules
    ) -> AlertStep? {
        let margin = max(rules.minimumMargin, accuracy?.distance ?? .zero)
        let within: Bool, beyond: Bool
        switch reading {
        case .distance(let distance):
            within = distance <= alert.radius.distance
            beyond = distance > alert.radius.distance + margin
        case .boundary(let contains, let edge):
            within = contains
            beyond = !contains && edge > margin
        }
        let inside = within ? true : beyond ? false : (alert.inside ?? false)
        guard let before = alert.inside else { return AlertStep(inside: inside, told: nil) }
        guard inside != before else { return nil }
        let quiet = alert.toldAt.map { now - $0 < rules.quietPeriod } ?? false
        let told: EventType? =
            switch (alert.target, inside) {
            case (.nearby, true): .friendNearby
            case (.nearby, false): nil
            case (_, true): .friendArrived
            case (_, false): .friendLeft
            }
        return AlertStep(inside: inside, told: quiet ? nil : told)
    }
}
