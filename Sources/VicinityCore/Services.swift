/// Every rule of the service, in one value: what the HTTP front (and any other front) calls. Built once from
/// the stores, the clock and the password hasher the executable picks.
public struct Services<S: Stores>: Sendable {
    public let places: Locator<S.Places, S.Campuses>
    public let accounts: AccountService<S>
    public let friends: FriendService<S>
    public let events: EventService<S>
    public let votes: VoteService<S>
    /// Phone apps' passwords and their reports (OwnTracks, Traccar Client).
    public let devices: DeviceService<S>
    /// Keeps memory and the open event streams in step with the record: run it for as long as the services
    /// serve (the HTTP front runs it with the server).
    public let follower: ChangeFollower<S>
    /// Works out the `friend_moved` notices of the positions the follower reads: run it beside the follower.
    public let moves: FriendMoves<S>
    /// Delivers the outbox's mail and pushes: run it for as long as the services serve.
    public let outbox: OutboxSender<S>
    /// Devices registered for pushes, and what their people mute.
    public let push: PushService<S>
    /// Alerts friends set on each other, worked out at every move (`friends` calls it).
    public let alerts: AlertService<S>

    public init(
        stores: S,
        clock: any WallClock = SystemClock(),
        hasher: any PasswordHasher,
        mail: (any MailTransport)? = nil,
        push pushTransport: (any PushTransport)? = nil,
        settings: ServiceSettings = .standard,
        limitKeys: LimitKeys = .random(),
        observeOutbox: @escaping @Sendable (OutboxOutcome) -> Void = { _ in }
    ) {
        let outboxSignal = ChangeSignal()
        places = Locator(places: stores.places, campuses: stores.campuses, labelRule: settings.labels, temples: settings.temples)
        events = EventService(stores: stores, clock: clock, rules: settings.events)
        let visibility = VisibilityNotices(
            stores: stores, clock: clock, locator: places, events: events, rules: settings.friends.positions, limitKeys: limitKeys)
        accounts = AccountService(
            stores: stores, clock: clock, hasher: hasher, streams: events.hub, visibility: visibility, rules: settings.accounts,
            outbox: settings.outbox, limitKeys: limitKeys, outboxSignal: outboxSignal)
        outbox = OutboxSender(
            stores: stores, accounts: accounts, mail: mail, push: pushTransport, clock: clock, rules: settings.outbox,
            signal: outboxSignal, observe: observeOutbox)
        push = PushService(stores: stores, clock: clock, rules: settings.push, transport: pushTransport)
        alerts = AlertService(stores: stores, clock: clock, locator: places, positions: settings.friends.positions, rules: settings.alerts)
        friends = FriendService(
            stores: stores, clock: clock, locator: places, events: events, visibility: visibility, alerts: alerts,
            rules: settings.friends, limitKeys: limitKeys)
        moves = FriendMoves(friends: friends, hub: events.hub)
        follower = ChangeFollower(
            stores: stores, hub: events.hub, moves: moves, clock: clock, rules: settings.following, outboxSignal: outboxSignal)
        votes = VoteService(
            stores: stores, clock: clock, hasher: hasher, locator: places, events: events,
            positions: settings.friends.positions, rules: settings.votes, limitKeys: limitKeys)
        devices = DeviceService(stores: stores, clock: clock, friends: friends, rules: settings.devices, limitKeys: limitKeys)
    }
}

/// The rules' settings, each with its documented default.
public struct ServiceSettings: Hashable, Sendable {
    public var labels: LabelRule
    public var temples: TempleCategories
    public var accounts: AccountRules
    public var friends: FriendRules
    public var events: EventRules
    public var votes: VoteRules
    public var following: FollowRules
    public var outbox: OutboxRules
    public var devices: DeviceRules = .standard
    public var push: PushRules = .standard
    public var alerts: AlertRules = .standard

    public static let standard = ServiceSettings()

    public init(
        labels: LabelRule = .standard, temples: TempleCategories = .standard, accounts: AccountRules = .standard,
        friends: FriendRules = .standard, events: EventRules = .standard, votes: VoteRules = .standard,
        following: FollowRules = .standard, outbox: OutboxRules = .standard
    ) {
        self.following = following
        self.outbox = outbox
        self.labels = labels
        self.temples = temples
        self.accounts = accounts
        self.friends = friends
        self.events = events
        self.votes = votes
    }
}
