import VicinityCore

extension SQLPlan {
    /// Locks the pair, reads everything between the two (`FriendPair`) and goes on with `next`.
    static func pair(_ a: UserID, _ b: UserID, _ next: @escaping @Sendable (FriendPair) throws -> SQLPlan) -> SQLPlan {
        let (x, y) = (SQLValue.text(a.rawValue), SQLValue.text(b.rawValue))
        let key = [a.rawValue, b.rawValue].sorted().joined(separator: "|")
        return .locking(
            [SQLLockKey(.friendPair, key)],
            .select(FriendshipSide.self, where: .or([
                .and([.equals("account_id", x), .equals("friend_id", y)]), .and([.equals("account_id", y), .equals("friend_id", x)]),
            ]), lock: .forUpdate) { sides in
                .select(FriendRequest.self, where: .or([
                    .and([.equals("from_id", x), .equals("to_id", y)]), .and([.equals("from_id", y), .equals("to_id", x)]),
                ]), lock: .forUpdate) { requests in
                    .select(Block.self, where: .or([
                        .and([.equals("blocker_id", x), .equals("blocked_id", y)]),
                        .and([.equals("blocker_id", y), .equals("blocked_id", x)]),
                    ]), lock: .forUpdate) { blocks in
                        .select(WatchPermission.self, where: .or([
                            .and([.equals("person_id", x), .equals("watcher_id", y)]),
                            .and([.equals("person_id", y), .equals("watcher_id", x)]),
                        ]), lock: .forUpdate) { watches in
                            .select(Alert.self, where: .or([
                                .and([.equals("watcher_id", x), .equals("watched_id", y)]),
                                .and([.equals("watcher_id", y), .equals("watched_id", x)]),
                            ]), lock: .forUpdate) { alerts in
                                // Read only for a friendship that begins now: its sides start at each one's default.
                                .select(StoredAccount.self, where: .among("id", [x, y])) { accounts in
                                    try next(FriendPair(
                                        a, b, sides: sides, requests: requests, blocks: blocks, watches: watches, alerts: alerts,
                                        defaultShares: Dictionary(accounts.map { ($0.account.id, $0.account.defaultShare) }) { first, _ in first }))
                                }
                            }
                        }
                    }
                }
            })
    }

    /// Lets `rule` change the pair under its lock and writes back what it changed, with the events `announcing`
    /// makes of the result, in the same transaction.
    static func changing(
        _ a: UserID, _ b: UserID, announcing: @escaping @Sendable (Result) throws -> [EventDraft] = { _ in [] },
        _ rule: @escaping @Sendable (inout FriendPair) throws -> Result
    ) -> SQLPlan {
        .pair(a, b) { before in
            var after = before
            let result = try rule(&after)
            let writes = SQLWrite.changes(from: before.sides, to: after.sides) + SQLWrite.changes(from: before.requests, to: after.requests)
                + SQLWrite.changes(from: before.blocks, to: after.blocks) + SQLWrite.changes(from: before.watches, to: after.watches)
                + SQLWrite.changes(from: before.alerts, to: after.alerts)
            let drafts = try announcing(result)
            if drafts.isEmpty { return .writing(writes, result: result) }
            return .writing(writes) { _ in .appending(drafts) { _ in .done(result) } }
        }
    }
}

extension SQLPlan {
    /// The sight of each of `alerts` (`AlertSight.of`): the accounts of the people watched, and the sides of
    /// the pairs the alerts name, each person watched with the list of their watchers. Not every person watched
    /// with every watcher: SQLite looks a list of people up against a list of friends pair by pair, and a
    /// refresh of a few hundred people made that hundreds of thousands of key lookups.
    static func alertSights(of alerts: [Alert], _ next: @escaping @Sendable ([AlertID: AlertSight]) throws -> SQLPlan) rethrows -> SQLPlan {
        guard !alerts.isEmpty else { return try next([:]) }
        let watchers = Dictionary(grouping: alerts, by: \.watched.rawValue).mapValues { Set($0.map(\.watcher.rawValue)).sorted().map(SQLValue.text) }
        let pairs = watchers.sorted { $0.key < $1.key }.map { watched, watchers in
            SQLCondition.and([.equals("account_id", .text(watched)), .among("friend_id", watchers)])
        }
        return .select(StoredAccount.self, where: .among("id", watchers.keys.sorted().map(SQLValue.text))) { accounts in
            try sides(of: pairs[...], read: []) { sides in
                try next(AlertSight.of(alerts, accounts: accounts.map(\.account), sides: sides))
            }
        }
    }

    /// People watched a statement, in `alertSights(of:)`: SQLite nests an `OR` a level per term, and refuses
    /// an expression over 1,000 levels deep (`SQLITE_MAX_EXPR_DEPTH`).
    private static var watchedPerRead: Int { 200 }

    private static func sides(
        of pairs: ArraySlice<SQLCondition>, read: [FriendshipSide], _ next: @escaping @Sendable ([FriendshipSide]) throws -> SQLPlan
    ) throws -> SQLPlan {
        guard !pairs.isEmpty else { return try next(read) }
        return .select(FriendshipSide.self, where: .or(Array(pairs.prefix(watchedPerRead)))) { sides in
            try Self.sides(of: pairs.dropFirst(watchedPerRead), read: read + sides, next)
        }
    }
}

extension AlertSight {
    /// What the conditional alert write expects of the record's rows: each of `guarded` as SQL, on the
    /// account of the person watched and their side towards `watcher`.
    func condition(watcher: UserID) -> SQLCondition {
        let watchedID = SQLValue.text(watched.id.rawValue)
        var account: [SQLCondition] = [.equals("id", watchedID)]
        var side: [SQLCondition] = [.equals("account_id", watchedID), .equals("friend_id", .text(watcher.rawValue))]
        for fact in guarded {
            switch fact {
            case .privacyMode(let on): account.append(.equals("privacy_mode", .bool(on)))
            case .defaultShare(let level): account.append(.equals("default_share", .text(level.rawValue)))
            case .share(let level): side.append(.equals("share", .text(level.rawValue)))
            case .until(let end): side.append(.same("share_until", .optionalTime(end)))
            }
        }
        return .and([.exists(StoredAccount.table, .and(account)), .exists(FriendshipSide.table, .and(side))])
    }
}

extension SQLPlan {
    /// Conditional updates (the rule `AlertChange.moving` states for memory): of two fronts working out moves of
    /// the same person, the second finds the state changed and changes nothing, so the watcher is told once; a
    /// change whose sight the record no longer holds (privacy mode or sharing changed since it was read) changes
    /// nothing either, so nothing is told that the new setting hides. The events of the alerts moved are
    /// recorded with them. `next` learns whether each change, in the order given, moved its alert.
    ///
    /// The alerts' rows are locked first, in the order of their ids, whatever order the changes came in: two
    /// moves changing the same alerts (a nearby pair, both moving) lock them in one order, so neither waits for
    /// the other's lock while holding one it wants, which PostgreSQL would end only after its one-second deadlock
    /// timeout. The changes go as one write (`SQLWrite.setEach`: one statement on PostgreSQL, not a round trip
    /// each, whose first locks every alert before it changes any, `lockingFirst`), in rounds where one alert
    /// changes twice (one person moving twice in a group): the later change, in the order given, in a later round,
    /// where it finds what the earlier wrote.
    ///
    /// PostgreSQL checks the sight as of the statement's start, also when the statement then waits for an alert's
    /// lock: a setting committed meanwhile is not seen, and the change goes through as worked out. That is an order
    /// the two may take: the move's write began before the setting committed, so both were under way at once and
    /// either may come first; a move whose write begins after the commit sees the setting and tells nothing.
    /// Checking the latest instead would take a statement of its own locking the watched accounts' rows first, a
    /// round trip more for every group with crossings. SQLite has one writer: a setting commits wholly before the
    /// write or after it.
    static func advancing(each changes: [AlertChange], _ next: @escaping @Sendable ([Bool]) throws -> SQLPlan) throws -> SQLPlan {
        guard !changes.isEmpty else { return try next([]) }
        let order = changes.indices.sorted { (changes[$0].alert.rawValue, $0) < (changes[$1].alert.rawValue, $1) }
        var rounds: [[Int]] = []
        var depth = 0
        for (place, index) in order.enumerated() {
            depth = place > 0 && changes[order[place - 1]].alert == changes[index].alert ? depth + 1 : 0
            if rounds.count == depth { rounds.append([]) }
            rounds[depth].append(index)
        }
        let ids = Set(changes.map(\.alert.rawValue)).sorted().map(SQLValue.text)
        return try advancing(rounds[...], of: changes, moved: Array(repeating: false, count: changes.count), lockingFirst: ids) { moved in
            let drafts = order.filter { moved[$0] }.compactMap { changes[$0].telling }
            guard !drafts.isEmpty else { return try next(moved) }
            return .appending(drafts) { _ in try next(moved) }
        }
    }

    /// Writes each round's changes as one write, one round after the other; the first locks every alert first.
    private static func advancing(
        _ rounds: ArraySlice<[Int]>, of changes: [AlertChange], moved: [Bool], lockingFirst ids: [SQLValue] = [],
        _ next: @escaping @Sendable ([Bool]) throws -> SQLPlan
    ) throws -> SQLPlan {
        guard let round = rounds.first else { return try next(moved) }
        let sets = round.map { index in
            let change = changes[index]
            // `same`: a state or told time and their absence are one text, so the sets have fewer shapes.
            let state = SQLCondition.same("inside", change.from.map(SQLValue.bool) ?? .null)
            let told = SQLCondition.same("told_at", .optionalTime(change.fromToldAt))
            let seen: SQLCondition = change.sight.map { $0.condition(watcher: change.watcher) } ?? .all
            return SQLSet(
                [("inside", .bool(change.to)), ("told_at", .optionalTime(change.toldAt))],
                where: .and([.equals("id", .text(change.alert.rawValue)), state, told, seen]))
        }
        return .writing([.setEach(Alert.table, sets, returning: "id", lockingFirst: ids)]) { outcomes in
            let changed = Set(try outcomes.flatMap(\.rows).map { try $0.text("id") })
            var moved = moved
            for index in round where changed.contains(changes[index].alert.rawValue) { moved[index] = true }
            return try advancing(rounds.dropFirst(), of: changes, moved: moved, next)
        }
    }
}

extension SQLRecordStore {
    public func sendFriendRequest(
        _ request: FriendRequest, announcing: @escaping @Sendable (FriendRequestOutcome) throws -> [EventDraft]
    ) async throws -> FriendRequestOutcome {
        try await write(.changing(request.from, request.to, announcing: announcing) { $0.send(request) })
    }

    public func acceptFriendRequest(
        _ id: FriendRequestID, recipient: UserID, at time: Timestamp,
        announcing: @escaping @Sendable (FriendRequest) throws -> [EventDraft]
    ) async throws -> FriendRequest? {
        // The pair is known from the request; under its lock the pair is read again, in case another writer
        // turned the request into a friendship or removed it meanwhile.
        try await write(.select(FriendRequest.self, where: .and([.equals("id", .text(id.rawValue)), .equals("to_id", .text(recipient.rawValue))])) { seen in
            guard let request = seen.first else { return .done(nil) }
            return .changing(request.from, request.to, announcing: { try $0.map(announcing) ?? [] }) {
                $0.accept(id, recipient: recipient, at: time)
            }
        })
    }

    /// Under the pair's lock, as every change between two people: a request withdrawn while the other asks
    /// back is either withdrawn first (their request is then a new one) or accepted first (and then not
    /// withdrawn), never both.
    public func deleteFriendRequest(_ id: FriendRequestID, participant: UserID) async throws -> FriendRequest? {
        let user = SQLValue.text(participant.rawValue)
        return try await write(.select(FriendRequest.self, where: .and([
            .equals("id", .text(id.rawValue)), .or([.equals("from_id", user), .equals("to_id", user)]),
        ])) { seen in
            guard let request = seen.first else { return .done(nil) }
            return .changing(request.from, request.to) { $0.withdraw(id, participant: participant) }
        })
    }

    public func friendRequests(of user: UserID) async throws -> [FriendRequest] {
        let id = SQLValue.text(user.rawValue)
        return try await records(
            FriendRequest.self, where: .or([.equals("from_id", id), .equals("to_id", id)]),
            order: [.ascending("created_at"), .ascending("id")])
    }

    /// Both sides of every friendship in one statement.
    public func friendships(of user: UserID) async throws -> [Friendship] {
        let id = SQLValue.text(user.rawValue)
        return try await read(.select(FriendshipSide.self, where: .or([.equals("account_id", id), .equals("friend_id", id)])) { sides in
            let theirSides = Dictionary(sides.filter { $0.friend == user }.map { ($0.user, $0) }) { first, _ in first }
            return .done(sides.filter { $0.user == user }.compactMap { side in
                theirSides[side.friend].map {
                    Friendship(
                        friend: side.friend, since: side.since, shareWithFriend: side.share, friendShareWithMe: $0.share,
                        shareWithFriendUntil: side.until, friendShareWithMeUntil: $0.until)
                }
            })
        })
    }

    public func friendship(of user: UserID, with friend: UserID) async throws -> Friendship? {
        let (x, y) = (SQLValue.text(user.rawValue), SQLValue.text(friend.rawValue))
        return try await read(.select(FriendshipSide.self, where: .or([
            .and([.equals("account_id", x), .equals("friend_id", y)]), .and([.equals("account_id", y), .equals("friend_id", x)]),
        ])) { sides in
            .done(FriendPair(user, friend, sides: sides, requests: [], blocks: []).friendship(of: user))
        })
    }

    public func setSharing(_ share: ShareLevel, until: Timestamp?, from user: UserID, to friend: UserID) async throws -> Friendship? {
        try await write(.changing(user, friend) { $0.setSharing(share, until: until, from: user) })
    }

    /// Sides past their end, oldest end first, skipping those another writer holds (it is changing them or
    /// claiming them itself); each takes its sharer's default as read in the same transaction.
    public func endSharing(
        at now: Timestamp, limit: Int, announcing: @escaping @Sendable (EndedSharing) -> [EventDraft]
    ) async throws -> [EndedSharing] {
        try await write(.select(
            FriendshipSide.self, where: .compare("share_until", .atMost, .time(now)),
            order: [.ascending("share_until"), .ascending("account_id"), .ascending("friend_id")], limit: limit, lock: .skipLocked
        ) { due in
            guard !due.isEmpty else { return .done([]) }
            let people = Set(due.flatMap { [$0.user.rawValue, $0.friend.rawValue] }).sorted().map(SQLValue.text)
            return .select(StoredAccount.self, where: .among("id", people)) { found in
                let accounts = Dictionary(found.map { ($0.account.id, $0.account) }) { first, _ in first }
                let ended = due.map {
                    EndedSharing(side: $0, fallback: accounts[$0.user]?.defaultShare ?? .standard, friend: accounts[$0.friend]?.summary)
                }
                let writes = ended.map { ended in
                    var side = ended.side
                    side.share = ended.fallback
                    side.until = nil
                    return FriendshipSide.update(side)
                }
                let drafts = ended.flatMap(announcing)
                if drafts.isEmpty { return .writing(writes, result: ended) }
                return .writing(writes) { _ in .appending(drafts) { _ in .done(ended) } }
            }
        })
    }

    public func endFriendship(of user: UserID, with friend: UserID) async throws -> Bool {
        try await write(.changing(user, friend) { $0.end() })
    }

    public func block(_ blocked: UserID, by blocker: UserID, at time: Timestamp) async throws -> BlockOutcome {
        try await write(.changing(blocker, blocked) { $0.block(by: blocker, at: time) })
    }

    public func unblock(_ blocked: UserID, by blocker: UserID) async throws -> Bool {
        try await write(.changing(blocker, blocked) { $0.unblock(by: blocker) })
    }

    public func blocks(involving user: UserID) async throws -> [Block] {
        let id = SQLValue.text(user.rawValue)
        return try await records(Block.self, where: .or([.equals("blocker_id", id), .equals("blocked_id", id)]))
    }

    public func allowWatching(by person: UserID, watcher: UserID, at time: Timestamp) async throws -> WatchOutcome? {
        try await write(.changing(person, watcher) { $0.allowWatching(by: person, at: time) })
    }

    public func revokeWatching(by person: UserID, watcher: UserID) async throws -> Bool {
        try await write(.changing(person, watcher) { $0.revokeWatching(by: person) })
    }

    public func addAlert(_ alert: Alert, limit: Int) async throws -> AlertOutcome {
        try await write(.changing(alert.watcher, alert.watched) { $0.add(alert, limit: limit) })
    }

    public func removeAlert(_ id: AlertID, watcher: UserID) async throws -> Bool {
        try await write(.select(Alert.self, where: .and([.equals("id", .text(id.rawValue)), .equals("watcher_id", .text(watcher.rawValue))])) { seen in
            guard let alert = seen.first else { return .done(false) }
            return .changing(alert.watcher, alert.watched) { $0.removeAlert(id, watcher: watcher) }
        })
    }

    public func alerts(involvingAny users: [UserID]) async throws -> [Alert] {
        guard !users.isEmpty else { return [] }
        let ids = Set(users.map(\.rawValue)).sorted().map(SQLValue.text)
        return try await records(Alert.self, where: .or([.among("watcher_id", ids), .among("watched_id", ids)]))
    }

    public func allAlerts() async throws -> [Alert] {
        try await records(Alert.self, where: .all)
    }

    public func watchPermissions(involving user: UserID) async throws -> [WatchPermission] {
        let id = SQLValue.text(user.rawValue)
        return try await records(WatchPermission.self, where: .or([.equals("person_id", id), .equals("watcher_id", id)]))
    }

    public func alertContext(of user: UserID) async throws -> AlertContext {
        let me = SQLValue.text(user.rawValue)
        return try await read(.select(Alert.self, where: .or([.equals("watcher_id", me), .equals("watched_id", me)])) { alerts in
            SQLPlan.alertSights(of: alerts) { .done(AlertContext(alerts: alerts, sights: $0)) }
        })
    }

    public func alertSights(of alerts: [Alert]) async throws -> [AlertID: AlertSight] {
        try await read(.alertSights(of: alerts) { .done($0) })
    }

    public func advance(_ changes: [AlertChange]) async throws -> Set<AlertID> {
        guard !changes.isEmpty else { return [] }
        return try await write(try .advancing(each: changes) { moved in .done(Set(zip(changes, moved).filter(\.1).map(\.0.alert))) })
    }

    public func relationships(of user: UserID, with others: [UserID]) async throws -> [UserID: Relationship] {
        guard !others.isEmpty else { return [:] }
        let me = SQLValue.text(user.rawValue)
        let list = Set(others.map(\.rawValue)).sorted().map(SQLValue.text)
        return try await read(.select(FriendRequest.self, where: .or([
            .and([.equals("from_id", me), .among("to_id", list)]), .and([.equals("to_id", me), .among("from_id", list)]),
        ])) { requests in
            .select(FriendshipSide.self, where: .and([.equals("account_id", me), .among("friend_id", list)])) { sides in
                var result: [UserID: Relationship] = [:]
                for request in requests {
                    result[request.from == user ? request.to : request.from] =
                        request.from == user ? .requestSent(request.id) : .requestReceived(request.id)
                }
                for side in sides { result[side.friend] = .friend }
                return .done(result)
            }
        })
    }
}
