import Crypto
import GeoCore

/// Limits on device passwords and their reports.
public struct DeviceRules: Hashable, Sendable {
    /// Devices one person may hold.
    public var maximumPerPerson: Int
    /// Reports one device may send. A moving app sends a fix every few seconds at most, and one back online
    /// sends what it queued, one post each.
    public var reports: RateLimit
    /// How far ahead of this server's clock a fix's time may be: phones keep time from the network.
    public var futureSkew: Duration
    /// Friends in one answer to a phone: the nearest first.
    public var friendsPerAnswer: Int
    /// How fresh a device's "last used" is kept: a use within this of the one recorded writes nothing, unless
    /// the names sent changed.
    public var usageResolution: Duration

    /// Ten devices cover a phone, a tablet and their replacements. 600 reports in 10 minutes is one a second
    /// on average, with room for a queue flushed at once. A minute of skew covers a clock between network
    /// syncs. 200 friends fill a phone's map without making an answer a burden on a slow link. The list of
    /// devices says when each was last used to the minute, so a minute's resolution spares a write per post
    /// (a moving phone posts every few seconds) at the cost of a "last used" up to a minute behind.
    public static let standard = DeviceRules(
        maximumPerPerson: 10, reports: RateLimit(limit: 600, window: .seconds(600)), futureSkew: .seconds(60), friendsPerAnswer: 200,
        usageResolution: .seconds(60))

    public init(maximumPerPerson: Int, reports: RateLimit, futureSkew: Duration, friendsPerAnswer: Int, usageResolution: Duration) {
        self.maximumPerPerson = maximumPerPerson
        self.reports = reports
        self.futureSkew = futureSkew
        self.friendsPerAnswer = friendsPerAnswer
        self.usageResolution = usageResolution
    }
}

/// A device just added: the secret is in the answer this once, and nowhere else ever after.
public struct AddedDevice: Sendable {
    public var device: Device
    public var secret: DeviceSecret
    /// The owner's username: what OwnTracks signs in with.
    public var username: Username
}

/// A device that proved its secret, with its owner.
public struct DeviceCaller: Sendable {
    public var device: StoredDevice
    public var owner: Account

    /// The owner as the friend rules know callers. A device has no session; its secret's digest stands in,
    /// which no session token ever has.
    public var identity: Identity { Identity(userID: owner.id, session: device.secretDigest) }
}

/// A fix a phone reported: where, how well, and when it was taken (when the app says).
public struct DeviceFix: Sendable {
    public var coordinate: Coordinate
    public var accuracy: Accuracy?
    public var takenAt: Timestamp?

    public init(coordinate: Coordinate, accuracy: Accuracy?, takenAt: Timestamp?) {
        self.coordinate = coordinate
        self.accuracy = accuracy
        self.takenAt = takenAt
    }
}

/// A friend as a phone app shows one: where, and, when the app has not been told yet, the name.
public struct PhoneFriend: Hashable, Sendable {
    public var friend: UserSummary
    public var position: SharedPosition
    /// Whether to send the name (OwnTracks' `card`): the first time, and whenever a name changed.
    public var sendName: Bool
}

/// Device passwords, and what a device may do with one: report its person's position through the same write
/// as the API's (so live notices, the change feed and every front see it alike), and read the friends its
/// person may see, under the same privacy rules as `GET /v1/friends`.
public struct DeviceService<S: Stores>: Sendable {
    let stores: S
    let clock: any WallClock
    let friends: FriendService<S>
    public let rules: DeviceRules
    private let reports: WindowLimit<S.KeyedLimits>

    public init(stores: S, clock: any WallClock, friends: FriendService<S>, rules: DeviceRules = .standard, limitKeys: LimitKeys = .random()) {
        self.stores = stores
        self.clock = clock
        self.friends = friends
        self.rules = rules
        reports = WindowLimit(rules.reports, scope: .deviceReports, clock: clock, ledger: KeyedWindowLedger(stores.limits, keys: limitKeys))
    }

    // MARK: The person's list

    public func add(name: DeviceName, kind: DeviceKind, for identity: Identity) async throws -> AddedDevice {
        guard let owner = try await stores.accounts.account(id: identity.userID) else { throw ServiceError.unauthenticated }
        let secret = DeviceSecret.random()
        let device = Device(owner: identity.userID, name: name, kind: kind, createdAt: clock.now)
        guard try await stores.devices.addDevice(StoredDevice(device: device, secretDigest: secret.digest), limit: rules.maximumPerPerson) else {
            throw ServiceError.conflict(.tooManyDevices(limit: rules.maximumPerPerson))
        }
        return AddedDevice(device: device, secret: secret, username: owner.username)
    }

    public func devices(of identity: Identity) async throws -> [Device] {
        try await stores.devices.devices(of: identity.userID)
    }

    /// Takes effect for the device's next report, on every front: reports look devices up in the store.
    public func remove(_ id: DeviceID, of identity: Identity) async throws {
        guard try await stores.devices.removeDevice(id, of: identity.userID) else { throw ServiceError.notFound(.device) }
    }

    // MARK: What a device does

    /// The device whose secret this is, of an account that may sign in; `username`, when the app sends one
    /// (OwnTracks' Basic authentication), must be its owner's, ignoring case. Every failure reads the same.
    public func authenticate(secret text: String, username: String?) async throws -> DeviceCaller {
        guard let secret = DeviceSecret(text),
            let stored = try await stores.devices.device(secretDigest: secret.digest),
            let owner = try await stores.accounts.account(id: stored.device.owner), !owner.disabled
        else { throw ServiceError.deviceUnauthorized }
        if let username {
            guard let given = try? Username(username), given.key == owner.username.key else { throw ServiceError.deviceUnauthorized }
        }
        return DeviceCaller(device: stored, owner: owner)
    }

    /// Sets the person's position from a fix, keeping their status. A fix older than the position already
    /// held (an app sending what it queued while offline) changes nothing; one from beyond the allowed skew
    /// into the future is refused. Returns whether the fix was taken.
    @discardableResult
    public func report(_ fix: DeviceFix, by caller: DeviceCaller) async throws -> Bool {
        if let wait = try await reports.acquire(caller.device.device.id.rawValue) {
            throw ServiceError.rateLimited(retryAfter: wait, .deviceReports)
        }
        let now = clock.now
        if let takenAt = fix.takenAt, takenAt > now + rules.futureSkew {
            throw ServiceError.invalid("tst", "is \((takenAt - now).wholeSecondsRoundedUp) s ahead of this server's clock; a fix cannot be taken in the future")
        }
        let held = try await stores.positions.position(of: caller.owner.id)
        let takenAt = min(fix.takenAt ?? now, now)
        if let held, held.updatedAt > takenAt { return false }
        _ = try await friends.sharePosition(
            caller.identity, at: fix.coordinate, accuracy: fix.accuracy, status: held?.status, fixedAt: takenAt)
        return true
    }

    /// The friends the device's person may see now, where they are current, nearest first (those whose
    /// distance is unknown last, by name), at most `DeviceRules.friendsPerAnswer`; names are marked to send
    /// when the set of names differs from what this device was last sent. Notes the device's use.
    public func friendsForPhone(of caller: DeviceCaller) async throws -> [PhoneFriend] {
        let views = try await friends.friends(of: caller.identity)
            .filter { $0.presence == .current && $0.position != nil }
            .sorted { a, b in
                switch (a.distance, b.distance) {
                case let (x?, y?) where x != y: x < y
                case (.some, nil): true
                case (nil, .some): false
                default: (a.friend.displayName, a.friend.id) < (b.friend.displayName, b.friend.id)
                }
            }
            .prefix(rules.friendsPerAnswer)
        let names = Self.namesDigest(views.map(\.friend))
        let sendNames = names != caller.device.cardsDigest
        try await noteUse(of: caller, cardsDigest: names)
        return views.compactMap { view in
            view.position.map { PhoneFriend(friend: view.friend, position: $0, sendName: sendNames) }
        }
    }

    /// Notes the device's use when it reads no friends (Traccar Client shows none).
    public func noteUse(of caller: DeviceCaller) async throws {
        try await noteUse(of: caller, cardsDigest: caller.device.cardsDigest)
    }

    /// Records the use and the names sent, unless both are as recorded to within `usageResolution`.
    private func noteUse(of caller: DeviceCaller, cardsDigest: String?) async throws {
        let now = clock.now
        if cardsDigest == caller.device.cardsDigest, let last = caller.device.device.lastUsedAt, now - last < rules.usageResolution { return }
        try await stores.devices.deviceUsed(caller.device.device.id, at: now, cardsDigest: cardsDigest)
    }

    /// What identifies the names a device was sent: a SHA-256 over each friend's id and name, in id order.
    static func namesDigest(_ people: [UserSummary]) -> String {
        var hash = SHA256()
        for person in people.sorted(by: { $0.id < $1.id }) {
            hash.update(data: Array("\(person.id.rawValue)\t\(person.displayName)\n".utf8))
        }
        return Base64URL.encode(Array(hash.finalize()))
    }
}
