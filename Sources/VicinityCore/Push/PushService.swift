/// How many devices a person registers, and what endpoints are taken.
public struct PushRules: Hashable, Sendable {
    /// Devices per person: a phone, a tablet and browsers on a few computers, with room to spare; a cap so
    /// that one account cannot make every event fan out without end.
    public var maximumPerPerson: Int
    /// Plain-http Web Push endpoints, for a push service started by tests on loopback (`serve --push-allow-http`).
    public var allowHTTP: Bool

    public static let standard = PushRules(maximumPerPerson: 10, allowHTTP: false)

    public init(maximumPerPerson: Int, allowHTTP: Bool) {
        self.maximumPerPerson = maximumPerPerson
        self.allowHTTP = allowHTTP
    }
}

/// A person's devices for push and what they choose to be pushed. What pushes carry, and when, is
/// `PushNotice` and `PushFanOut`; delivery is the outbox's.
public struct PushService<S: Stores>: Sendable {
    let stores: S
    let clock: any WallClock
    public let rules: PushRules
    /// The kinds of device this server can reach (the transports configured): another kind is refused, since
    /// nothing registered for it would ever arrive.
    public let kinds: Set<PushKind>
    /// What browsers subscribe with (`PushTransport.applicationServerKey`); nil without Web Push.
    public let applicationServerKey: String?

    public init(stores: S, clock: any WallClock, rules: PushRules = .standard, transport: (any PushTransport)?) {
        self.stores = stores
        self.clock = clock
        self.rules = rules
        kinds = transport?.kinds ?? []
        applicationServerKey = transport?.applicationServerKey
    }

    /// Registers the device for the caller's session: it gets the caller's pushes until they remove it or
    /// the session ends. The same device registered again keeps its id.
    public func register(_ target: PushTarget, for identity: Identity) async throws -> PushSubscription {
        guard kinds.contains(target.kind) else { throw ServiceError.pushUnavailable(target.kind) }
        let subscription = PushSubscription(owner: identity.userID, target: target, session: identity.session, createdAt: clock.now)
        guard let stored = try await stores.push.addPushSubscription(subscription, limit: rules.maximumPerPerson) else {
            // Signed out (or deleted) while registering reads as any ended session does.
            guard try await stores.accounts.session(identity.session)?.userID == identity.userID else { throw ServiceError.unauthenticated }
            throw ServiceError.conflict(.tooManyPushDevices(limit: rules.maximumPerPerson))
        }
        return stored
    }

    public func devices(of identity: Identity) async throws -> [PushSubscription] {
        try await stores.push.pushSubscriptions(of: identity.userID)
    }

    /// Takes effect at once on every front: pushes waiting for the device go with it, and senders read the
    /// devices of their pushes from the store at the start of each pass.
    public func remove(_ id: PushSubscriptionID, of identity: Identity) async throws {
        guard try await stores.push.removePushSubscription(id, of: identity.userID) else { throw ServiceError.notFound(.pushDevice) }
    }

    public func preferences(of identity: Identity) async throws -> PushPreferences {
        try await stores.push.pushPreferences(of: identity.userID)
    }

    /// For events recorded from now on; pushes already waiting still go.
    public func setPreferences(muted: Set<PushCategory>, for identity: Identity) async throws -> PushPreferences {
        let preferences = PushPreferences(owner: identity.userID, muted: muted)
        guard try await stores.push.setPushPreferences(preferences) else { throw ServiceError.unauthenticated }
        return preferences
    }
}
