/// Tells friends when what they may see of someone changes without a move: privacy mode turned on or off, a
/// sharing level changed, a position taken away. A page that is open then reads the friend again at once,
/// instead of showing the last pin as current until its next refresh.
///
/// Invariants:
/// - A friend is told only when their view (presence and position, as `PrivacyRule` gives it) differs after
///   the change from before it: a change they cannot see is not told either, so the event says nothing the
///   friend list itself does not.
/// - The event names the person and carries nothing else (`EventPayload.friendVisibility`); it is recorded
///   like every event, so every front's streams carry it and a reconnecting page replays it. It is never
///   pushed.
/// - It is recorded after the change commits, also when the change fails part-way (`PATCH /v1/friends`
///   changes each friendship in its own step), and it is only a notice: a failure to record it loses it and
///   never turns the committed change into an error. The page's periodic refresh still catches up.
/// - At most `perHour` rounds of notices per person: toggling privacy mode in a loop cannot flood every
///   friend's events. Past it the changes still apply, untold.
/// - Friends who stop being friends in the change (a block, an unfriend) are not told: being dropped is not
///   announced.
public struct VisibilityNotices<S: Stores>: Sendable {
    let stores: S
    let clock: any WallClock
    let locator: Locator<S.Places, S.Campuses>
    let events: EventService<S>
    let rules: PositionRules
    private let rounds: WindowLimit<S.KeyedLimits>

    /// Sixty rounds an hour: one a minute on average, far more than anyone hides and shows by hand.
    public static var perHour: RateLimit { RateLimit(limit: 60, window: .seconds(3600)) }

    public init(
        stores: S, clock: any WallClock, locator: Locator<S.Places, S.Campuses>, events: EventService<S>, rules: PositionRules,
        limitKeys: LimitKeys = .random()
    ) {
        self.stores = stores
        self.clock = clock
        self.locator = locator
        self.events = events
        self.rules = rules
        rounds = WindowLimit(
            Self.perHour, scope: .visibilityNotices, clock: clock, ledger: KeyedWindowLedger(stores.limits, keys: limitKeys))
    }

    /// Runs `change`, which may change what `user`'s friends see of them, and tells those whose view it changed.
    public func around<Result>(_ user: UserID, _ change: () async throws -> Result) async throws -> Result {
        let before = try await views(of: user)
        let result: Result
        do {
            result = try await change()
        } catch {
            await tell(user, before: before)
            throw error
        }
        await tell(user, before: before)
        return result
    }

    /// Records the notices of a change made, as far as it can: a failure loses them, never the change.
    private func tell(_ user: UserID, before: [UserID: Seen]) async {
        do {
            let after = try await views(of: user)
            let changed = after.keys.filter { viewer in before[viewer].map { $0 != after[viewer] } ?? false }.sorted()
            guard !changed.isEmpty, let person = try await stores.accounts.summaries(of: [user])[user] else { return }
            guard try await rounds.acquire(user.rawValue) == nil else { return }
            let now = clock.now
            _ = try await events.record(changed.map { EventDraft.friendVisibility(to: $0, friend: person, at: now) })
        } catch {
            // Only notices: the change stands, and pages catch up at their next refresh.
        }
    }

    /// What each friend of `user` sees of them now, as the privacy rule gives it.
    private func views(of user: UserID) async throws -> [UserID: Seen] {
        let friendships = try await stores.friends.friendships(of: user)
        guard !friendships.isEmpty, let account = try await stores.accounts.account(id: user) else { return [:] }
        let position = try await stores.positions.position(of: user)
        var area: BuildingArea?
        if let position { area = try await locator.area(of: position) }
        let now = clock.now
        return Dictionary(friendships.map { friendship in
            let level = ShareLevel.effective(
                friendship.shareWithFriend, until: friendship.shareWithFriendUntil, fallback: account.defaultShare, at: now)
            return (friendship.friend, seen(position, account: account, level: level, area: area, at: now))
        }) { first, _ in first }
    }

    private func seen(_ position: SharedPosition?, account: Account, level: ShareLevel, area: BuildingArea?, at now: Timestamp) -> Seen {
        let seen = PrivacyRule.visible(
            position, ownerPrivacyMode: account.privacyMode, relation: .friend(share: level), at: now, rules: rules, area: area)
        return Seen(presence: seen.presence, position: seen.position)
    }

    /// Levels given for a while have ended, by the clock: tells each friend whose view the end changed (the
    /// level as given against the default now in force).
    public func ended(_ ended: [EndedSharing]) async throws {
        let now = clock.now
        var drafts: [EventDraft] = []
        for end in ended where end.side.share != end.fallback {
            guard let account = try await stores.accounts.account(id: end.side.user) else { continue }
            let position = try await stores.positions.position(of: end.side.user)
            var area: BuildingArea?
            if let position { area = try await locator.area(of: position) }
            let before = seen(position, account: account, level: end.side.share, area: area, at: now)
            let after = seen(position, account: account, level: end.fallback, area: area, at: now)
            if before != after { drafts.append(.friendVisibility(to: end.side.friend, friend: account.summary, at: now)) }
        }
        _ = try await events.record(drafts)
    }

    private struct Seen: Equatable {
        var presence: Presence
        var position: SharedPosition?
    }
}
