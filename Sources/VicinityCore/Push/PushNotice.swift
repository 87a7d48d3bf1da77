/// What a push says: made from the event it announces, and less than the event carries. Apple reads APNs
/// payloads and a push service sees when they come, so a notice holds no position, distance, bearing, tally
/// or choice: a result says only that it is out, and the app reads it over the API.
public struct PushNotice: Hashable, Sendable {
    public var event: EventID
    public var type: EventType
    public var title: String
    public var body: String
    /// The page, and its panel, that the notification opens.
    public var url: String
    /// Notices with one tag replace each other on the device (a vote's conflict, then its result).
    public var tag: String?
    /// The person it names (who poked, asked or accepted): deleting their account deletes it, as it deletes
    /// the event (`EventPayload.about`).
    public var about: UserID?

    public init(event: EventID, type: EventType, title: String, body: String, url: String, tag: String?, about: UserID? = nil) {
        self.event = event
        self.type = type
        self.title = title
        self.body = body
        self.url = url
        self.tag = tag
        self.about = about
    }

    public init(_ event: Event) {
        self.init(words: event)
        about = event.payload.about
    }

    private init(words event: Event) {
        switch event.payload {
        case .poke(let from):
            self.init(
                event: event.id, type: event.type, title: "Poke", body: "\(from.displayName) poked you.", url: "/#friends",
                tag: "poke-\(from.id)")
        case .friendRequest(_, let from):
            self.init(
                event: event.id, type: event.type, title: "Friend request", body: "\(from.displayName) asks to be your friend.",
                url: "/#friends", tag: nil)
        case .friendAccepted(let friend):
            self.init(
                event: event.id, type: event.type, title: "New friend", body: "\(friend.displayName) accepted your friend request.",
                url: "/#friends", tag: nil)
        case .voteFinished(let notice):
            self.init(
                event: event.id, type: event.type, title: notice.subject, body: "The result of “\(notice.subject)” is out.",
                url: "/#votes/\(notice.vote)", tag: "vote-\(notice.vote)")
        case .voteConflict(let notice):
            self.init(
                event: event.id, type: event.type, title: notice.subject,
                body: "Some ballots of “\(notice.subject)” are under names that read the same: settle them to publish the result.",
                url: "/#votes/\(notice.vote)", tag: "vote-\(notice.vote)")
        case .voteCancelled(let notice):
            self.init(
                event: event.id, type: event.type, title: notice.subject, body: "“\(notice.subject)” was called off.",
                url: "/#votes/\(notice.vote)", tag: "vote-\(notice.vote)")
        case .voteProgress(let notice):
            // Never pushed, as below: the initiator's open page follows it.
            self.init(
                event: event.id, type: event.type, title: notice.subject,
                body: "\(notice.ballotsCast) of \(notice.participants) have voted in “\(notice.subject)”.",
                url: "/#votes/\(notice.vote)", tag: "vote-\(notice.vote)")
        case .sharingEnded(let friend, _):
            // Never pushed, as below: the sharer's open page follows it.
            self.init(
                event: event.id, type: event.type, title: "Sharing", body: "What \(friend.displayName) sees of you is back to your default.",
                url: "/#friends", tag: "sharing-\(friend.id)")
        // The place stays out: Apple and the push services read notices, and a place named with a friend is
        // where the friend is. The app shows it from the event.
        case .friendArrived(let notice), .friendLeft(let notice), .friendNearby(let notice):
            let what = event.type == .friendArrived ? "arrived at a place you watch" : event.type == .friendLeft ? "left a place you watch" : "is nearby"
            self.init(
                event: event.id, type: event.type, title: "Alert", body: "\(notice.friend.displayName) \(what).", url: "/#friends",
                tag: "alert-\(notice.alert)")
        case .friendVisibility(let friend):
            // Never pushed (it has no `PushCategory`): words for completeness, naming the friend and nothing else.
            self.init(
                event: event.id, type: event.type, title: "Friends", body: "\(friend.displayName) in your friend list changed.",
                url: "/#friends", tag: "friend-\(friend.id)")
        }
    }
}

/// One push waiting in the outbox: a notice for one device.
public struct PushDelivery: Hashable, Sendable {
    public var device: PushSubscriptionID
    /// The device's kind, so that the message waits for its own push service.
    public var kind: PushKind
    public var notice: PushNotice

    public init(device: PushSubscriptionID, kind: PushKind, notice: PushNotice) {
        self.device = device
        self.kind = kind
        self.notice = notice
    }
}

/// A push as the outbox hands it to a transport: what it says, where it goes, and what makes every try of it
/// the same message (its id; Web Push's topic and APNs's collapse id from the tag).
public struct OutgoingPush: Hashable, Sendable {
    public let id: OutboxID
    public let notice: PushNotice
    /// The device's id, which only this service knows: what makes a tag unreadable to the push service.
    public let device: PushSubscriptionID
    public let target: PushTarget
    public let createdAt: Timestamp
    /// No use after this: push services are told to keep it no longer.
    public let expiresAt: Timestamp

    public init(id: OutboxID, notice: PushNotice, device: PushSubscriptionID, target: PushTarget, createdAt: Timestamp, expiresAt: Timestamp) {
        self.id = id
        self.notice = notice
        self.device = device
        self.target = target
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

/// Where pushes go to leave the service: the Web Push and APNs clients in VicinityTransports, as the operator
/// configured them.
public protocol PushTransport: Sendable {
    /// The kinds of device it can reach: registering another kind is refused.
    var kinds: Set<PushKind> { get }
    /// The VAPID public key browsers subscribe with (`applicationServerKey`): the uncompressed P-256 point in
    /// base64url; nil without Web Push.
    var applicationServerKey: String? { get }
    /// Hands the push to the device's push service, or says why not (`DeliveryOutcome`); never throws.
    func deliver(_ push: OutgoingPush) async -> DeliveryOutcome
}
