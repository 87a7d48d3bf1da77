import GeoCore

/// What someone says about themselves next to their position: at most 140 characters, one line.
public struct StatusText: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    /// The length the apps show; counted in Unicode code points as the OpenAPI document's `maxLength` counts.
    public static let maximumLength = 140

    /// Nil for text that is empty once trimmed: no status.
    public init?(_ text: String) throws(ValidationError) {
        let trimmed = text.trimmingSpaces
        guard !trimmed.isEmpty else { return nil }
        guard trimmed.unicodeScalars.count <= Self.maximumLength else {
            throw ValidationError(field: "status", message: "must be at most \(Self.maximumLength) characters")
        }
        guard !trimmed.unicodeScalars.contains(where: \.isControl) else {
            throw ValidationError(field: "status", message: "must be one line without control characters")
        }
        rawValue = trimmed
    }

    public var description: String { rawValue }
}

/// How precise a reported position is: the radius in metres of the device's 68% confidence circle, as
/// phones report it (`CLLocation.horizontalAccuracy`, Android's `Location.getAccuracy()`).
public struct Accuracy: Hashable, Sendable {
    public let distance: Distance

    /// 100 km: coarser than that is no position a friend could walk to.
    public static let maximum = Distance(meters: 100_000)

    public init(meters: Double) throws(ValidationError) {
        guard meters.isFinite, meters >= 0, meters <= Self.maximum.meters else {
            throw ValidationError(field: "accuracy_m", message: "must be a number of metres in [0, \(Int(Self.maximum.meters))]")
        }
        distance = Distance(meters: meters)
    }
}

/// A position someone shares, with their status and where it was in words when they sent it.
public struct SharedPosition: Hashable, Sendable {
    public var userID: UserID
    public var coordinate: Coordinate
    public var accuracy: Accuracy?
    /// Location and status travel together, as the apps show them.
    public var status: StatusText?
    /// "Around Hall of Science": the label of `Locator` when the position was sent, so that every friend
    /// reads the same words the sender was shown.
    public var label: String
    public var onCampus: Bool?
    public var closestPlace: PlaceID?
    public var updatedAt: Timestamp
    /// When the position came into its `BuildingArea` (or out of every area): what a friend who sees buildings
    /// only is shown as its time, and how a live move tells whether such a friend has anything new to learn.
    public var areaSince: Timestamp

    public init(
        userID: UserID, coordinate: Coordinate, accuracy: Accuracy?, status: StatusText?, label: String,
        onCampus: Bool?, closestPlace: PlaceID?, updatedAt: Timestamp, areaSince: Timestamp? = nil
    ) {
        self.userID = userID
        self.coordinate = coordinate
        self.accuracy = accuracy
        self.status = status
        self.label = label
        self.onCampus = onCampus
        self.closestPlace = closestPlace
        self.updatedAt = updatedAt
        self.areaSince = areaSince ?? updatedAt
    }
}

/// How old a position may be and still say where someone is, or was.
public struct PositionRules: Hashable, Sendable {
    /// Younger positions are current: where someone is now, what nearby lists, `friend_moved` and the phone
    /// apps show. Older ones are last seen, shown with their time.
    public var currentFor: Duration
    /// Older positions are gone: shown to nobody, the owner included, as if none had been shared.
    public var maximumAge: Duration

    /// Current for 15 minutes: phone apps report every few minutes while someone moves (OwnTracks' move mode,
    /// Traccar Client's default interval of 5 minutes), so a position older than three missed reports no longer
    /// says where someone is. Kept for a day: a position from yesterday says nothing worth keeping.
    public static let standard = PositionRules(currentFor: .seconds(15 * 60), maximumAge: .seconds(24 * 3600))

    public init(currentFor: Duration, maximumAge: Duration) {
        self.currentFor = currentFor
        self.maximumAge = maximumAge
    }

    public func isCurrent(_ position: SharedPosition, at now: Timestamp) -> Bool {
        now - position.updatedAt <= currentFor
    }

    public func isKept(_ position: SharedPosition, at now: Timestamp) -> Bool {
        now - position.updatedAt <= maximumAge
    }
}

/// What a viewer learns of someone's whereabouts.
public enum Presence: String, Hashable, Sendable, CaseIterable {
    /// A position younger than `PositionRules.currentFor`.
    case current
    /// An older position, younger than `PositionRules.maximumAge`: where they were, at `updated_at`.
    case lastSeen = "last_seen"
    /// Privacy mode is on: nothing located, whether or not a position exists behind it.
    case hidden
    /// Nothing to show: no position, one too old to keep, or one not shared with this viewer; all read the same.
    case none
}

/// How the viewer stands to the owner of a position.
public enum Relation: Hashable, Sendable {
    case owner
    /// A friend, and how exactly the owner shares their position with this friend.
    case friend(share: ShareLevel)
    /// A guest or someone who is not a friend.
    case stranger
}

/// The privacy rule: who sees which position. Every answer that could reveal a position goes through here.
///
/// A position is shown only to its owner and to friends it is shared with; never to guests or strangers;
/// never while privacy mode is on (friends then see `hidden`). A friend the owner hides from sees exactly what
/// they would see of someone with no position: nothing tells them apart. A friend shown buildings only sees
/// the position as its `BuildingArea` shows it (`area`, worked out by the caller from the position's closest
/// place), and nothing when it is in none.
public enum PrivacyRule {
    public static func visible(
        _ position: SharedPosition?, ownerPrivacyMode: Bool, relation: Relation, at now: Timestamp, rules: PositionRules,
        area: BuildingArea? = nil
    ) -> (presence: Presence, position: SharedPosition?) {
        var coarse = false
        switch relation {
        case .stranger:
            return (.none, nil)
        case .friend(let share):
            if ownerPrivacyMode { return (.hidden, nil) }
            switch share {
            case .none: return (.none, nil)
            case .building: coarse = true
            case .exact: break
            }
        case .owner:
            break
        }
        guard let position, rules.isKept(position, at: now) else { return (.none, nil) }
        let presence: Presence = rules.isCurrent(position, at: now) ? .current : .lastSeen
        guard coarse else { return (presence, position) }
        guard let area, area.place == position.closestPlace else { return (.none, nil) }
        return (presence, area.coarsened(position))
    }
}

/// A friend request, pending until accepted, declined or cancelled.
public struct FriendRequest: Hashable, Sendable {
    public var id: FriendRequestID
    public var from: UserID
    public var to: UserID
    public var createdAt: Timestamp

    public init(id: FriendRequestID, from: UserID, to: UserID, createdAt: Timestamp) {
        self.id = id
        self.from = from
        self.to = to
        self.createdAt = createdAt
    }
}

/// What sending a friend request did.
public enum FriendRequestOutcome: Hashable, Sendable {
    /// The request is pending.
    case sent(FriendRequest)
    /// The recipient had already asked the sender: their request was accepted and the two are friends.
    case becameFriends(accepted: FriendRequest, since: Timestamp)
    case alreadyFriends
    /// A request between the two is pending already, in the same direction.
    case alreadyRequested(FriendRequest)
    /// The recipient has blocked the sender: the request is kept and waits, unseen and unannounced, as an
    /// unanswered request does; nothing the sender sees tells it from `sent`.
    case held(FriendRequest)
    /// The sender has blocked the recipient; nothing changes.
    case senderBlocks
}

/// One side of a friendship as the store keeps it.
public struct Friendship: Hashable, Sendable {
    public var friend: UserID
    public var since: Timestamp
    /// How exactly the user shares their position with this friend, as set.
    public var shareWithFriend: ShareLevel
    /// How exactly this friend shares their position with the user, as set.
    public var friendShareWithMe: ShareLevel
    /// When the user's level for this friend ends, falling back to the user's default; nil: until changed.
    public var shareWithFriendUntil: Timestamp?
    /// When this friend's level for the user ends, falling back to the friend's default.
    public var friendShareWithMeUntil: Timestamp?

    public init(
        friend: UserID, since: Timestamp, shareWithFriend: ShareLevel, friendShareWithMe: ShareLevel,
        shareWithFriendUntil: Timestamp? = nil, friendShareWithMeUntil: Timestamp? = nil
    ) {
        self.friend = friend
        self.since = since
        self.shareWithFriend = shareWithFriend
        self.friendShareWithMe = friendShareWithMe
        self.shareWithFriendUntil = shareWithFriendUntil
        self.friendShareWithMeUntil = friendShareWithMeUntil
    }

    /// The same friendship seen from the friend's side.
    public func seen(from user: UserID) -> Friendship {
        Friendship(
            friend: user, since: since, shareWithFriend: friendShareWithMe, friendShareWithMe: shareWithFriend,
            shareWithFriendUntil: friendShareWithMeUntil, friendShareWithMeUntil: shareWithFriendUntil)
    }
}

/// How a user stands to another, as people search marks it.
public enum Relationship: Hashable, Sendable {
    case none
    case friend
    /// The user asked them; the request's id.
    case requestSent(FriendRequestID)
    /// They asked the user.
    case requestReceived(FriendRequestID)
    /// The user has blocked them. Being blocked is never shown: the blocked person sees no relationship.
    case blocked
}
