import GeoCore

public enum AlertKind {}
/// An alert's identifier.
public typealias AlertID = RandomIdentifier<AlertKind>

/// Where an alert watches a friend.
public enum AlertTarget: Hashable, Sendable {
    /// Arriving within the radius of a place, and leaving it.
    case place(PlaceID)
    /// Arriving inside a campus boundary, and leaving it: the radius is not used.
    case campus(PlaceID)
    /// Arriving within the radius of a point the watcher chose, and leaving it.
    case point(Coordinate)
    /// The friend coming within the radius of the watcher; both must have such an alert on the other.
    case nearby

    /// Whether the watched person must have allowed the watcher first: a place, campus or point says where
    /// someone is going, what the watched person decides; being near each other is mutual by itself.
    public var needsPermission: Bool { self != .nearby }

    /// The kind's name, as stores and clients name it.
    public var kindName: String {
        switch self {
        case .place: "place"
        case .campus: "campus"
        case .point: "point"
        case .nearby: "nearby"
        }
    }

    /// The place's or campus's id, for those kinds.
    public var placeID: PlaceID? {
        switch self {
        case .place(let id), .campus(let id): id
        case .point, .nearby: nil
        }
    }

    public var point: Coordinate? {
        if case .point(let coordinate) = self { return coordinate }
        return nil
    }
}

/// How far from its target an alert is set off.
public struct AlertRadius: Hashable, Sendable {
    public let distance: Distance

    /// 25 m: about what a phone's fix is good to outdoors, so a smaller radius would flap on noise alone.
    public static let minimum = Distance(meters: 25)
    /// 5 km: the size of a city district; beyond it "arrived" says nothing a person would act on.
    public static let maximum = Distance(meters: 5000)
    /// 100 m for places and points: the distance at which a position is "Around" a building (`LabelRule.around`).
    public static let standard = AlertRadius(unchecked: LabelRule.standard.around)
    /// Campus alerts follow the boundary.
    public static let boundary = AlertRadius(unchecked: .zero)

    public init(meters: Double) throws(ValidationError) {
        guard meters.isFinite, meters >= Self.minimum.meters, meters <= Self.maximum.meters else {
            throw ValidationError(
                field: "radius_m", message: "must be a number of metres from \(Int(Self.minimum.meters)) to \(Int(Self.maximum.meters))")
        }
        distance = Distance(meters: meters)
    }

    init(unchecked distance: Distance) { self.distance = distance }
}

/// "Tell `watcher` when `watched` arrives at or leaves `target`" (or comes near them), with what the service
/// last worked out: whether the friend was inside, and when the watcher was last told.
public struct Alert: Hashable, Sendable {
    public var id: AlertID
    public var watcher: UserID
    public var watched: UserID
    public var target: AlertTarget
    public var radius: AlertRadius
    public var createdAt: Timestamp
    /// Inside the target when last worked out: set with the alert where the watcher may see the friend then,
    /// else nil until their first move, which sets it without telling (the friend did not arrive: they were there).
    public var inside: Bool?
    /// When the watcher was last told of this alert, for the quiet period.
    public var toldAt: Timestamp?

    public init(
        id: AlertID, watcher: UserID, watched: UserID, target: AlertTarget, radius: AlertRadius, createdAt: Timestamp,
        inside: Bool? = nil, toldAt: Timestamp? = nil
    ) {
        self.id = id
        self.watcher = watcher
        self.watched = watched
        self.target = target
        self.radius = radius
        self.createdAt = createdAt
        self.inside = inside
        self.toldAt = toldAt
    }
}

/// `person` lets `watcher` set place alerts on them: what they can see and take back (which ends those alerts).
public struct WatchPermission: Hashable, Sendable {
    public var person: UserID
    public var watcher: UserID
    public var since: Timestamp

    public init(person: UserID, watcher: UserID, since: Timestamp) {
        self.person = person
        self.watcher = watcher
        self.since = since
    }
}

/// What allowing a watcher did.
public struct WatchOutcome: Hashable, Sendable {
    public var permission: WatchPermission
    /// False when the person had allowed them already: the permission keeps its first time.
    public var isNew: Bool

    public init(permission: WatchPermission, isNew: Bool) {
        self.permission = permission
        self.isNew = isNew
    }
}

/// What setting an alert did.
public enum AlertOutcome: Hashable, Sendable {
    case added(Alert)
    /// The two are not friends: it reads as an unknown friend.
    case notFriends
    /// A place alert on someone who has not allowed the watcher.
    case notAllowed
    /// The watcher holds `AlertRules.perFriend` alerts on this friend already.
    case tooMany
}

/// The rules of alerts.
public struct AlertRules: Hashable, Sendable {
    /// At most one alert per alert (a pair and a place) within this time: someone walking along a building's
    /// edge tells the watcher once, not at every step.
    public var quietPeriod: Duration
    /// Leaving is beyond the radius plus at least this: a fix that wanders across the edge does not flap.
    public var minimumMargin: Distance
    /// Alerts one person may hold on one friend: bounds what a single pair costs every move.
    public var perFriend: Int

    /// A quiet period of 10 minutes: about a class break, within which an arrival right after a departure is
    /// the same visit. A margin of 25 m: `AlertRadius.minimum`. Ten alerts per friend: more places than
    /// anyone watches one person at.
    public static let standard = AlertRules(quietPeriod: .seconds(600), minimumMargin: AlertRadius.minimum, perFriend: 10)

    public init(quietPeriod: Duration, minimumMargin: Distance, perFriend: Int) {
        self.quietPeriod = quietPeriod
        self.minimumMargin = minimumMargin
        self.perFriend = perFriend
    }
}

/// How an alert's watcher may see the person it watches, as the record held it when read: the person's
/// account (privacy mode, default level, the name a notice gives) and how they share with the watcher (their
/// `FriendshipSide` towards them). A change worked out from a sight is written only while the record still
/// holds what it says (`AlertChange.sight`), so a sight held in memory (`HeldAlerts`) never tells what a newer
/// privacy setting hides.
public struct AlertSight: Hashable, Sendable {
    public var watched: Account
    public var share: ShareLevel
    /// When `share` ends and `watched`'s default takes over; nil: until changed.
    public var until: Timestamp?

    /// The sight of `watched` through `side`, their side of the friendship with the watcher.
    public init(watched: Account, side: FriendshipSide) {
        self.watched = watched
        share = side.share
        until = side.until
    }

    /// The level the watcher sees at `now`, by the one rule of time-limited sharing.
    public func level(at now: Timestamp) -> ShareLevel {
        ShareLevel.effective(share, until: until, fallback: watched.defaultShare, at: now)
    }

    /// What of the watched person's account and side the privacy rule reads, as this sight read it: what a
    /// conditional alert write expects the record still to say, here (`holds`) and in the stores' own terms
    /// (`advancing(each:)` over SQL), each from this one list.
    public enum Guarded: Hashable, Sendable {
        case privacyMode(Bool)
        case defaultShare(ShareLevel)
        /// The level set towards the watcher, and its end.
        case share(ShareLevel)
        case until(Timestamp?)
    }

    public var guarded: [Guarded] {
        [.privacyMode(watched.privacyMode), .defaultShare(watched.defaultShare), .share(share), .until(until)]
    }

    /// Whether the record's `account` and `side` (the watched person's, towards the watcher) still say what
    /// this sight read in everything it guards.
    public func holds(account: Account?, side: FriendshipSide?) -> Bool {
        guard let account, let side else { return false }
        return AlertSight(watched: account, side: side).guarded == guarded
    }

    /// The sight of each of `alerts` from the accounts and friendship sides read for them; none for an alert
    /// whose person or friendship is gone.
    public static func of(_ alerts: [Alert], accounts: [Account], sides: [FriendshipSide]) -> [AlertID: AlertSight] {
        let people = Dictionary(accounts.map { ($0.id, $0) }) { first, _ in first }
        let towards = Dictionary(sides.map { (Pair(watched: $0.user, watcher: $0.friend), $0) }) { first, _ in first }
        var sights: [AlertID: AlertSight] = [:]
        for alert in alerts {
            guard let watched = people[alert.watched], let side = towards[Pair(watched: alert.watched, watcher: alert.watcher)] else { continue }
            sights[alert.id] = AlertSight(watched: watched, side: side)
        }
        return sights
    }

    private struct Pair: Hashable {
        var watched: UserID
        var watcher: UserID
    }
}

/// Everything working out a move needs: the alerts on the person who moved and the nearby alerts they set,
/// each with its sight.
public struct AlertContext: Sendable {
    public var alerts: [Alert]
    public var sights: [AlertID: AlertSight]
    /// Memory's version of each alert, where memory gave the context (`HeldAlerts`): a change worked out from it
    /// carries it (`AlertChange.heldVersion`), so that memory can tell whether the alert moved meanwhile.
    public var versions: [AlertID: Int]

    public init(alerts: [Alert], sights: [AlertID: AlertSight], versions: [AlertID: Int] = [:]) {
        self.alerts = alerts
        self.sights = sights
        self.versions = versions
    }

    public static let empty = AlertContext(alerts: [], sights: [:])
}

/// One alert moved on by a move: from the state it was read in to the new one, and the event telling of it.
public struct AlertChange: Hashable, Sendable {
    public var alert: AlertID
    /// The two the alert names, whose alerts in memory the change makes stale unless memory takes its new state
    /// (`Stores.alertsAdvanced(_:moved:)`).
    public var watcher: UserID
    public var watched: UserID
    public var from: Bool?
    /// When the alert last told, as the change was worked out: the write expects it too, so that a change
    /// worked out from an alert that has since told and come back to `from` (another front's moves) is refused,
    /// and the quiet period holds.
    public var fromToldAt: Timestamp?
    public var to: Bool
    public var toldAt: Timestamp?
    public var telling: EventDraft?
    /// How the change saw the person watched: written only while the record still holds it
    /// (`AlertSight.holds`); nil for a change that depends on no sight.
    public var sight: AlertSight?
    /// The version of memory's copy of the alert the change was worked out from (`AlertContext.versions`); nil
    /// when it was worked out from the record.
    public var heldVersion: Int?

    public init(alert: Alert, to: Bool, toldAt: Timestamp?, telling: EventDraft?, sight: AlertSight? = nil) {
        self.init(alert: alert, from: alert.inside, to: to, toldAt: toldAt, telling: telling, sight: sight)
    }

    /// A change expecting the alert to read `from`, whatever `alert.inside` says.
    public init(alert: Alert, from: Bool?, to: Bool, toldAt: Timestamp?, telling: EventDraft?, sight: AlertSight? = nil) {
        self.alert = alert.id
        watcher = alert.watcher
        watched = alert.watched
        self.from = from
        fromToldAt = alert.toldAt
        self.to = to
        self.toldAt = toldAt
        self.telling = telling
        self.sight = sight
    }

    /// `alert` moved on by this change when it still reads as the change expects (its state, and when it last
    /// told); nil when it does not: the one rule of the stores' conditional write, for the copies in memory.
    public func moving(_ alert: Alert) -> Alert? {
        guard alert.id == self.alert, alert.inside == from, alert.toldAt == fromToldAt else { return nil }
        var moved = alert
        moved.inside = to
        moved.toldAt = toldAt
        return moved
    }
}

/// What an alert tells its watcher: which alert, the friend, and the name of the place or campus watched (nil
/// for a point, which the watcher chose and knows, and for nearby alerts). Never a position or a distance.
public struct AlertNotice: Hashable, Sendable {
    public var alert: AlertID
    public var friend: UserSummary
    public var placeName: String?
    public var radius: Distance

    public init(alert: AlertID, friend: UserSummary, placeName: String?, radius: Distance) {
        self.alert = alert
        self.friend = friend
        self.placeName = placeName
        self.radius = radius
    }
}
