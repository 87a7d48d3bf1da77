import GeoCore

/// The friend finder's rules for friend lists, pokes and people search.
public struct FriendRules: Hashable, Sendable {
    public var positions: PositionRules
    /// Pokes from one user to the same friend. Three in ten minutes: enough to get attention, too few to
    /// flood a phone with notifications.
    public var pokes: RateLimit
    /// Friend requests from one user to the same person, however each ended. Three a week: a request sent by
    /// mistake and cancelled, or asked again after a change of mind, fits; asking someone who keeps declining
    /// day after day does not.
    public var requestsToOne: RateLimit

    public static let standard = FriendRules(
        positions: .standard, pokes: RateLimit(limit: 3, window: .seconds(600)),
        requestsToOne: RateLimit(limit: 3, window: .seconds(7 * 24 * 3600)))

    public init(positions: PositionRules, pokes: RateLimit, requestsToOne: RateLimit) {
        self.positions = positions
        self.pokes = pokes
        self.requestsToOne = requestsToOne
    }
}

/// A friend as the viewer may see them: the privacy rule already applied.
public struct FriendView: Hashable, Sendable {
    public var friend: UserSummary
    public var since: Timestamp
    /// How exactly the viewer shares their own position with this friend.
    public var shareWithFriend: ShareLevel
    /// When that level ends and the viewer's default takes over; nil: until changed.
    public var shareWithFriendUntil: Timestamp?
    public var presence: Presence
    /// Present for `current` and `lastSeen` only, status included: at the building's point when the friend
    /// shares buildings only with the viewer (`precision`).
    public var position: SharedPosition?
    /// How exactly `position` says where the friend is: `exact`, or `building`; nil without a position.
    public var precision: ShareLevel?
    /// From the viewer's current position to the friend's, when both are known.
    public var distance: Distance?
    public var bearing: Bearing?
}

/// Someone found by people search, with how the searcher stands to them; never located.
public struct PersonView: Hashable, Sendable {
    public var person: UserSummary
    public var relationship: Relationship
}

/// A friend request with the people on both ends.
public struct FriendRequestView: Hashable, Sendable {
    public var request: FriendRequest
    public var from: UserSummary
    public var to: UserSummary
}

/// The answer to sending a friend request: still pending, or a friendship because they had asked too.
public enum FriendRequestResult: Hashable, Sendable {
    case pending(FriendRequestView)
    case accepted(FriendRequestView, friend: FriendView)
}

/// Where someone stands after sending their position.
public struct PositionUpdate: Hashable, Sendable {
    public var position: SharedPosition
    public var whereabouts: Whereabouts
}

/// A poke on its way.
public struct Poke: Hashable, Sendable {
    public var to: UserSummary
    public var at: Timestamp
    public var eventID: EventID
}

/// Friendships, positions and pokes, with the privacy rule applied to everything that could locate someone.
public struct FriendService<S: Stores>: Sendable {
    let stores: S
    let clock: any WallClock
    let locator: Locator<S.Places, S.Campuses>
    let events: EventService<S>
    let visibility: VisibilityNotices<S>
    let alerts: AlertService<S>
    public let rules: FriendRules
    private let pokes: WindowLimit<S.KeyedLimits>
    private let requestsToOne: WindowLimit<S.KeyedLimits>

    public init(
        stores: S, clock: any WallClock, locator: Locator<S.Places, S.Campuses>, events: EventService<S>,
        visibility: VisibilityNotices<S>, alerts: AlertService<S>, rules: FriendRules = .standard, limitKeys: LimitKeys = .random()
    ) {
        self.visibility = visibility
        self.alerts = alerts
        self.stores = stores
        self.clock = clock
        self.locator = locator
        self.events = events
        self.rules = rules
        pokes = WindowLimit(rules.pokes, scope: .pokes, clock: clock, ledger: KeyedWindowLedger(stores.limits, keys: limitKeys))
        requestsToOne = WindowLimit(
            rules.requestsToOne, scope: .friendRequests, clock: clock, ledger: KeyedWindowLedger(stores.limits, keys: limitKeys))
    }

    // MARK: My position

    /// Shares the caller's position and status (they travel together: a position without a status clears
    /// the status) and says where it is in words. `fixedAt` is when a phone took the fix, when it says so;
    /// the position is as old as that, for freshness and for every viewer. A position in the same building
    /// area as the one before keeps that one's `areaSince`. The alerts the move sets off are worked out first and
    /// written with the position, in one transaction (`AlertService.changes(moving:)`).
    public func sharePosition(
        _ identity: Identity, at coordinate: Coordinate, accuracy: Accuracy?, status: StatusText?, fixedAt: Timestamp? = nil
    ) async throws -> PositionUpdate {
        let whereabouts = try await locator.whereabouts(of: coordinate)
        let updatedAt = fixedAt ?? clock.now
        let area = whereabouts.closest.flatMap { BuildingArea(closest: $0, rule: locator.labelRule) }
        var areaSince = updatedAt
        if let before = try await stores.positions.position(of: identity.userID), rules.positions.isKept(before, at: clock.now),
            before.areaSince <= updatedAt
        {
            let previous = try await locator.area(of: before)
            if area?.isSameArea(as: previous) ?? (previous == nil) { areaSince = before.areaSince }
        }
        let position = SharedPosition(
            userID: identity.userID, coordinate: coordinate, accuracy: accuracy, status: status,
            label: whereabouts.label, onCampus: whereabouts.onCampus, closestPlace: whereabouts.closest?.place.id,
            updatedAt: updatedAt, areaSince: areaSince)
        let changes = try await alerts.changes(moving: position)
        let moved = try await stores.positions.setPosition(position, alerts: changes)
        if !changes.isEmpty { stores.alertsAdvanced(changes, moved: moved) }
        return PositionUpdate(position: position, whereabouts: whereabouts)
    }

    /// The caller's own position, current or last seen.
    public func myPosition(_ identity: Identity) async throws -> (presence: Presence, position: SharedPosition) {
        let position = try await stores.positions.position(of: identity.userID)
        let seen = PrivacyRule.visible(position, ownerPrivacyMode: false, relation: .owner, at: clock.now, rules: rules.positions)
        guard let shown = seen.position else { throw ServiceError.notFound(.ownPosition) }
        return (seen.presence, shown)
    }

    /// Stops sharing: the position is deleted, not hidden. Friends who saw it are told to read the list again.
    public func stopSharing(_ identity: Identity) async throws {
        let deleted = try await visibility.around(identity.userID) { try await stores.positions.deletePosition(of: identity.userID) }
        guard deleted else { throw ServiceError.notFound(.ownPosition) }
    }

    // MARK: Friends with places

    /// Every friend, by display name then id, located where the privacy rule allows, with distance and
    /// bearing from the caller's current position when it is known.
    public func friends(of identity: Identity) async throws -> [FriendView] {
        let friendships = try await stores.friends.friendships(of: identity.userID)
        let origin = try await currentPosition(of: identity.userID)
        return try await views(friendships, origin: origin).sorted { a, b in
            a.friend.displayName != b.friend.displayName ? a.friend.displayName < b.friend.displayName : a.friend.id < b.friend.id
        }
    }

    /// One friend as `friends(of:)` shows them.
    public func friend(_ friendID: UserID, of identity: Identity) async throws -> FriendView {
        guard let friendship = try await stores.friends.friendship(of: identity.userID, with: friendID) else {
            throw ServiceError.notFound(.friend)
        }
        let origin = try await currentPosition(of: identity.userID)
        guard let view = try await views([friendship], origin: origin).first else { throw ServiceError.notFound(.friend) }
        return view
    }

    /// Friends whose current position is within `radius` of `centre` (the caller's current position when
    /// nil), nearest first, ties by id, at most `limit`. Hidden, unshared, absent and old positions are all
    /// simply not near.
    public func nearbyFriends(
        of identity: Identity, around centre: Coordinate?, radius: SearchRadius, limit: ResultLimit
    ) async throws -> [FriendView] {
        guard let origin = try await origin(centre, of: identity.userID) else { throw ServiceError.conflict(.noCurrentPosition) }
        let friendships = try await stores.friends.friendships(of: identity.userID)
        return try await views(friendships, origin: origin)
            .compactMap { view -> (distance: Distance, view: FriendView)? in
                guard view.presence == .current, let distance = view.distance, distance <= radius.distance else { return nil }
                return (distance, view)
            }
            .sorted { a, b in a.distance != b.distance ? a.distance < b.distance : a.view.friend.id < b.view.friend.id }
            .prefix(limit.value)
            .map(\.view)
    }

    /// Distance and bearing from `centre` (the caller's current position when nil) to where the friend is or
    /// was last seen. A friend whose position the caller may not see reads exactly as one with none.
    public func direction(to friendID: UserID, of identity: Identity, from centre: Coordinate?) async throws -> FriendView {
        guard let friendship = try await stores.friends.friendship(of: identity.userID, with: friendID) else {
            throw ServiceError.notFound(.friend)
        }
        guard let origin = try await origin(centre, of: identity.userID) else { throw ServiceError.conflict(.noCurrentPosition) }
        guard let view = try await views([friendship], origin: origin).first, view.position != nil else {
            throw ServiceError.notFound(.friendPosition)
        }
        return view
    }

    /// How exactly one friend sees the caller's position: exactly, at building level, or not at all; until
    /// `until`, or for `duration` from now (then the caller's default, with a `sharing_ended` event), or until
    /// changed.
    public func setSharing(
        _ share: ShareLevel, until: Timestamp? = nil, for duration: Duration? = nil, with friendID: UserID, of identity: Identity
    ) async throws -> FriendView {
        let until = try end(until: until, for: duration)
        let set = try await visibility.around(identity.userID) {
            try await stores.friends.setSharing(share, until: until, from: identity.userID, to: friendID)
        }
        guard set != nil else {
            throw ServiceError.notFound(.friend)
        }
        return try await friend(friendID, of: identity)
    }

    /// The same level for every friend the caller has, as `setSharing` sets it for one: "share with everyone
    /// for an hour". Each friendship changes in its own step; friends made later start at the default.
    public func setSharingWithEveryone(
        _ share: ShareLevel, until: Timestamp? = nil, for duration: Duration? = nil, of identity: Identity
    ) async throws -> [FriendView] {
        let until = try end(until: until, for: duration)
        try await visibility.around(identity.userID) {
            for friendship in try await stores.friends.friendships(of: identity.userID) {
                _ = try await stores.friends.setSharing(share, until: until, from: identity.userID, to: friendship.friend)
            }
        }
        return try await friends(of: identity)
    }

    /// When a level given until a time, or for a while, ends: in the future, and at most `ShareLevel.longestFor`
    /// ahead; nil for a level with no end.
    private func end(until: Timestamp?, for duration: Duration?) throws -> Timestamp? {
        let now = clock.now
        let field = duration == nil ? "until" : "for_s"
        guard let until = until ?? duration.map({ now + $0 }) else { return nil }
        guard until > now else { throw ServiceError.invalid(field, "must end in the future") }
        guard until - now <= ShareLevel.longestFor else {
            throw ServiceError.invalid(field, "must end at most \(ShareLevel.longestFor.wholeSecondsRoundedUp / 86400) days from now")
        }
        return until
    }

    /// Announces the levels given for a while that have ended: their sharers each get `sharing_ended`, and a
    /// friend whose view the end changed `friend_visibility`. Each end once however many servers race; the
    /// server calls it every second, as it announces votes. Returns how many ended.
    @discardableResult
    public func endSharing() async throws -> Int {
        var count = 0
        while true {
            let now = clock.now
            let ended = try await stores.friends.endSharing(at: now, limit: Self.endingBatch) { end in
                end.friend.map { [.sharingEnded(end, friend: $0, at: now)] } ?? []
            }
            try await visibility.ended(ended)
            count += ended.count
            if ended.count < Self.endingBatch { return count }
        }
    }

    /// Ends claimed in one transaction: enough to clear a backlog in a few rounds, small enough that a round
    /// holds its rows briefly.
    static var endingBatch: Int { 100 }

    public func unfriend(_ friendID: UserID, of identity: Identity) async throws {
        guard try await stores.friends.endFriendship(of: identity.userID, with: friendID) else {
            throw ServiceError.notFound(.friend)
        }
    }

    // MARK: Friend requests

    /// Asks `recipient` to be friends; if they had asked the caller already, the two become friends at once.
    public func sendRequest(from identity: Identity, to recipient: UserID) async throws -> FriendRequestResult {
        guard recipient != identity.userID else { throw ServiceError.invalid("to", "cannot be yourself") }
        let people = try await stores.accounts.summaries(of: [identity.userID, recipient])
        guard let me = people[identity.userID] else { throw ServiceError.unauthenticated }
        guard let them = people[recipient] else { throw ServiceError.notFound(.user) }
        // Counted whatever comes of it, the same whether or not the recipient blocked the sender.
        if let wait = try await requestsToOne.acquire(identity.userID.rawValue + " " + recipient.rawValue) {
            throw ServiceError.rateLimited(retryAfter: wait, .friendRequests)
        }
        let request = FriendRequest(id: .random(), from: identity.userID, to: recipient, createdAt: clock.now)
        // The request (or the friendship) and its event are one transaction: neither stands without the other.
        let outcome = try await stores.friends.sendFriendRequest(request) { outcome in
            switch outcome {
            case .sent(let sent): [.friendRequest(sent, from: me)]
            case .becameFriends(_, let since): [.friendAccepted(to: recipient, friend: me, at: since)]
            case .alreadyFriends, .alreadyRequested, .held, .senderBlocks: []
            }
        }
        switch outcome {
        case .sent(let sent), .held(let sent):
            // A held request reads as any pending one: the sender is not told they are blocked.
            return .pending(FriendRequestView(request: sent, from: me, to: them))
        case .becameFriends(let accepted, _):
            return .accepted(FriendRequestView(request: accepted, from: them, to: me), friend: try await friend(recipient, of: identity))
        case .alreadyFriends:
            throw ServiceError.conflict(.alreadyFriends)
        case .alreadyRequested:
            throw ServiceError.conflict(.alreadyRequested)
        case .senderBlocks:
            throw ServiceError.conflict(.blockedByYou)
        }
    }

    /// The caller's pending requests: those they received and those they sent, each oldest first. Requests
    /// from people the caller blocked are left out: held, they wait unseen.
    public func requests(of identity: Identity) async throws -> (incoming: [FriendRequestView], outgoing: [FriendRequestView]) {
        let blocked = Set(try await stores.friends.blocks(involving: identity.userID).filter { $0.blocker == identity.userID }.map(\.blocked))
        let requests = try await stores.friends.friendRequests(of: identity.userID).filter { !blocked.contains($0.from) }
        let people = try await stores.accounts.summaries(of: requests.flatMap { [$0.from, $0.to] })
        let views = requests.compactMap { request -> FriendRequestView? in
            guard let from = people[request.from], let to = people[request.to] else { return nil }
            return FriendRequestView(request: request, from: from, to: to)
        }
        return (views.filter { $0.request.to == identity.userID }, views.filter { $0.request.from == identity.userID })
    }

    /// Accepts a request addressed to the caller; the sender hears of it.
    public func accept(_ requestID: FriendRequestID, by identity: Identity) async throws -> FriendView {
        let now = clock.now
        let me = try await stores.accounts.summaries(of: [identity.userID])[identity.userID]
        // The friendship and the sender's event are one transaction: neither stands without the other.
        guard let request = try await stores.friends.acceptFriendRequest(requestID, recipient: identity.userID, at: now, announcing: { request in
            me.map { [.friendAccepted(to: request.from, friend: $0, at: now)] } ?? []
        }) else {
            throw ServiceError.notFound(.friendRequest)
        }
        return try await friend(request.from, of: identity)
    }

    /// Declines a request the caller received or cancels one they sent.
    public func withdraw(_ requestID: FriendRequestID, by identity: Identity) async throws {
        guard try await stores.friends.deleteFriendRequest(requestID, participant: identity.userID) != nil else {
            throw ServiceError.notFound(.friendRequest)
        }
    }

    // MARK: People and pokes

    /// People whose username or name matches, the caller and those who blocked them left out, each marked
    /// with how the caller stands to them. Never located: search shows who someone is, not where. Someone the
    /// caller's own request waits for stays findable even if they blocked the caller: that request shows in the
    /// caller's list, and a search that could not find them would tell the block.
    public func people(matching text: String, for identity: Identity, limit: ResultLimit) async throws -> [PersonView] {
        let blocks = try await stores.friends.blocks(involving: identity.userID)
        let asked = Set(try await stores.friends.friendRequests(of: identity.userID).filter { $0.from == identity.userID }.map(\.to))
        let blockedMe = Set(blocks.filter { $0.blocked == identity.userID }.map(\.blocker)).subtracting(asked)
        let iBlocked = Set(blocks.filter { $0.blocker == identity.userID }.map(\.blocked))
        let candidates = try await stores.accounts.accountsMatching(PeopleMatch.folded(text))
            .filter { $0.id != identity.userID && !blockedMe.contains($0.id) }
        let found = PeopleMatch.best(candidates, matching: text, limit: limit.value)
        let relationships = try await stores.friends.relationships(of: identity.userID, with: found.map(\.id))
        return found.map { person in
            PersonView(person: person.summary, relationship: iBlocked.contains(person.id) ? .blocked : relationships[person.id] ?? .none)
        }
    }

    // MARK: Blocking

    /// Blocks someone: a friendship with them ends, the caller's requests to them go, and from now on they
    /// cannot find the caller in people search, poke them, or reach them with a request (theirs wait unseen).
    /// They are not told. Blocking again changes nothing (`isNew` false).
    public func block(_ userID: UserID, by identity: Identity) async throws -> (view: BlockView, isNew: Bool) {
        guard userID != identity.userID else { throw ServiceError.invalid("user", "cannot be yourself") }
        guard let person = try await stores.accounts.summaries(of: [userID])[userID] else { throw ServiceError.notFound(.user) }
        let outcome = try await stores.friends.block(userID, by: identity.userID, at: clock.now)
        return (BlockView(person: person, since: outcome.block.createdAt), outcome.isNew)
    }

    /// Lifts the caller's block on someone; a request of theirs that waited is then pending as any other.
    public func unblock(_ userID: UserID, by identity: Identity) async throws {
        guard try await stores.friends.unblock(userID, by: identity.userID) else { throw ServiceError.notFound(.block) }
    }

    /// The people the caller blocked, by display name then id.
    public func blocks(of identity: Identity) async throws -> [BlockView] {
        let blocks = try await stores.friends.blocks(involving: identity.userID).filter { $0.blocker == identity.userID }
        let people = try await stores.accounts.summaries(of: blocks.map(\.blocked))
        return blocks.compactMap { block in people[block.blocked].map { BlockView(person: $0, since: block.createdAt) } }
            .sorted { a, b in
                a.person.displayName != b.person.displayName ? a.person.displayName < b.person.displayName : a.person.id < b.person.id
            }
    }

    /// Pokes a friend, who receives it live; a few per friend per window (`FriendRules.pokes`).
    public func poke(_ friendID: UserID, by identity: Identity) async throws -> Poke {
        guard try await stores.friends.friendship(of: identity.userID, with: friendID) != nil else {
            throw ServiceError.notFound(.friend)
        }
        if let wait = try await pokes.acquire(identity.userID.rawValue + " " + friendID.rawValue) { throw ServiceError.rateLimited(retryAfter: wait, .pokes) }
        let people = try await stores.accounts.summaries(of: [identity.userID, friendID])
        guard let me = people[identity.userID], let them = people[friendID] else { throw ServiceError.notFound(.friend) }
        let now = clock.now
        guard let event = try await events.record([.poke(to: friendID, from: me, at: now)]).first else {
            preconditionFailure("recording one event returns one event")
        }
        return Poke(to: them, at: now, eventID: event.id)
    }

    /// How `mover`'s friends among those `listening` picks see them now, for each who may see where they are
    /// now (a current position): what a `friend_moved` notice carries. A friend the mover hides from, or who
    /// sees them hidden, gets nothing, exactly as when the mover has not moved; a friend shown buildings only
    /// gets a notice when this move took the mover into another area, and nothing for a move within one.
    public func moved(
        _ mover: UserID, seenBy listening: (Set<UserID>) -> Set<UserID>
    ) async throws -> [(viewer: UserID, view: FriendView)] {
        // Who listens, from the friendships this front may hold; how the mover shares with them, from the record.
        guard !listening(Set(try await stores.friends.friendships(of: mover).map(\.friend))).isEmpty else { return [] }
        let all = try await stores.friends.recordedFriendships(of: mover)
        let listeners = listening(Set(all.map(\.friend)))
        let sides = all.filter { listeners.contains($0.friend) }
        // The mover's own account as the record has it now: a privacy mode turned on through another front just
        // before this move hides it, whatever this front holds.
        guard !sides.isEmpty, let account = try await stores.accounts.account(id: mover) else { return [] }
        // The mover's position and every viewer's, read once for all of them.
        let positions = Dictionary(
            try await stores.positions.positions(of: [mover] + sides.map(\.friend)).map { ($0.userID, $0) }) { first, _ in first }
        let now = clock.now
        var area: BuildingArea?
        if let position = positions[mover] { area = try await locator.area(of: position) }
        let enteredArea = positions[mover].map { $0.areaSince == $0.updatedAt } ?? false
        return sides.compactMap { side in
            // The same friendship from the viewer's side: what the mover shares is what the viewer is shared.
            let viewerSide = side.seen(from: mover)
            let level = ShareLevel.effective(
                viewerSide.friendShareWithMe, until: viewerSide.friendShareWithMeUntil, fallback: account.defaultShare, at: now)
            if level == .building, !enteredArea { return nil }
            let origin = positions[side.friend].flatMap { rules.positions.isCurrent($0, at: now) ? $0.coordinate : nil }
            let view = view(of: viewerSide, account: account, position: positions[mover], area: area, origin: origin, at: now)
            // Current only: a notice says where a friend is now.
            guard view.presence == .current else { return nil }
            return (side.friend, view)
        }
    }

    // MARK: Helpers

    /// The given centre, else the user's current position.
    private func origin(_ centre: Coordinate?, of user: UserID) async throws -> Coordinate? {
        if let centre { return centre }
        return try await currentPosition(of: user)
    }

    /// The caller's position if it is current: distances are measured from where they are, not were.
    private func currentPosition(of user: UserID) async throws -> Coordinate? {
        guard let position = try await stores.positions.position(of: user),
            rules.positions.isCurrent(position, at: clock.now)
        else { return nil }
        return position.coordinate
    }

    /// Applies the privacy rule to each friend and measures from `origin`.
    private func views(_ friendships: [Friendship], origin: Coordinate?) async throws -> [FriendView] {
        guard !friendships.isEmpty else { return [] }
        let ids = friendships.map(\.friend)
        let accounts = Dictionary(try await stores.accounts.accounts(ids: ids).map { ($0.id, $0) }) { first, _ in first }
        let positions = Dictionary(try await stores.positions.positions(of: ids).map { ($0.userID, $0) }) { first, _ in first }
        let now = clock.now
        // Areas only for friends who show the viewer buildings only: a place lookup each.
        var areas: [UserID: BuildingArea] = [:]
        for friendship in friendships {
            guard let account = accounts[friendship.friend], let position = positions[friendship.friend],
                ShareLevel.effective(friendship.friendShareWithMe, until: friendship.friendShareWithMeUntil, fallback: account.defaultShare, at: now)
                    == .building
            else { continue }
            areas[friendship.friend] = try await locator.area(of: position)
        }
        return friendships.compactMap { friendship in
            guard let account = accounts[friendship.friend] else { return nil }
            return view(
                of: friendship, account: account, position: positions[friendship.friend], area: areas[friendship.friend],
                origin: origin, at: now)
        }
    }

    /// One friend with the privacy rule applied, measured from `origin`.
    private func view(
        of friendship: Friendship, account: Account, position: SharedPosition?, area: BuildingArea?, origin: Coordinate?,
        at now: Timestamp
    ) -> FriendView {
        let level = ShareLevel.effective(
            friendship.friendShareWithMe, until: friendship.friendShareWithMeUntil, fallback: account.defaultShare, at: now)
        let seen = PrivacyRule.visible(
            position, ownerPrivacyMode: account.privacyMode, relation: .friend(share: level), at: now, rules: rules.positions,
            area: area)
        var view = FriendView(
            friend: account.summary, since: friendship.since, shareWithFriend: friendship.shareWithFriend,
            shareWithFriendUntil: friendship.shareWithFriendUntil, presence: seen.presence, position: seen.position,
            precision: seen.position.map { _ in level })
        if let origin, let position = seen.position {
            view.distance = haversineDistance(from: origin, to: position.coordinate)
            view.bearing = initialBearing(from: origin, to: position.coordinate)
        }
        return view
    }
}
