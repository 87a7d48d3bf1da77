import Synchronization

/// Keeps this process in step with the record's change feed, whoever wrote: the positions and open votes it
/// holds in memory are read again from the record, and recorded events are handed to the streams open here.
///
/// Every event reaches the streams this way, this process's own included: the feed gives a recipient's events
/// in the order they committed, so a stream never sees a later event before an earlier one (which it would
/// then skip as already seen). A reader that fell behind what the feed keeps (`ChangeRead.expired`) reloads
/// what memory holds and ends every stream here; their clients reconnect with the last event id they read, and
/// the store replays what they missed.
public final class ChangeFollower<S: Stores>: Sendable {
    let stores: S
    let hub: EventHub
    /// Told who moved, for the `friend_moved` notices of the streams open here.
    let moves: FriendMoves<S>
    let clock: any WallClock
    public let rules: FollowRules
    /// The cursor `prepare()` took, for `run()` to start from.
    private let prepared = Mutex<S.Changes.ChangeCursor?>(nil)
    /// When the feed was last read whole, on the clock's `uptime`, which never jumps.
    private let lastRead = Mutex<Duration?>(nil)
    /// Woken by recorded events, on whatever front: they may come with pushes (`PushFanOut`), which then go
    /// without waiting for the outbox's next poll.
    let outboxSignal: ChangeSignal?

    public init(
        stores: S, hub: EventHub, moves: FriendMoves<S>, clock: any WallClock, rules: FollowRules = .standard, outboxSignal: ChangeSignal? = nil
    ) {
        self.stores = stores
        self.hub = hub
        self.moves = moves
        self.clock = clock
        self.rules = rules
        self.outboxSignal = outboxSignal
    }

    /// Takes a cursor, then loads again what memory holds, so that nothing written between the first load and
    /// the cursor is missed.
    public func start() async throws -> S.Changes.ChangeCursor {
        let began = clock.uptime
        let cursor = try await stores.changes.changeCursor()
        try await stores.reloadFollowed(at: clock.now)
        read(at: began)
        return cursor
    }

    /// How long ago the feed was last read up to its end (from when that read began); nil before the first.
    /// Memory is at most about this much behind the record, plus the time one read takes.
    public var sinceLastRead: Duration? {
        lastRead.withLock { $0 }.map { clock.uptime - $0 }
    }

    /// Whether the last read is older than `rules.behindAfter`: the record cannot be read (the database is
    /// down or unreachable), or reading takes that long.
    public var isBehind: Bool { sinceLastRead.map { $0 > rules.behindAfter } ?? false }

    private func read(at began: Duration) {
        lastRead.withLock { $0 = max($0 ?? began, began) }
    }

    /// Takes the cursor `run()` starts from: called before the process takes requests, so that nothing
    /// they write is missed because the follower started after it.
    public func prepare() async throws {
        prepare(loadedAfter: try await start())
    }

    /// As `prepare()`, for stores whose memory was loaded after `cursor` was taken (`IndexedStores` built
    /// just after `changes.changeCursor()`): everything written since is read from the feed, so memory is
    /// not loaded a second time.
    public func prepare(loadedAfter cursor: S.Changes.ChangeCursor) {
        read(at: clock.uptime)
        prepared.withLock { $0 = cursor }
    }

    /// Reads the changes after `cursor` once and applies them; returns the cursor to read from next and how
    /// many changes it applied.
    public func step(from cursor: S.Changes.ChangeCursor) async throws -> (next: S.Changes.ChangeCursor, applied: Int) {
        let began = clock.uptime
        switch try await stores.changes.changes(after: cursor) {
        case .changes(let changes, let next):
            try await apply(changes)
            read(at: began)
            return (next, changes.count)
        case .expired:
            let next = try await start()
            hub.endAllStreams()
            return (next, 0)
        }
    }

    /// Follows the feed until cancelled, from the cursor `prepare()` took or from one it takes: a read after
    /// each notice of a change, and at least every `rules.wait`; changes older than `rules.retention` pruned
    /// every `rules.pruning`. A failed read or apply is reported and tried again after a wait, from the same
    /// cursor.
    public func run(report: @Sendable (any Error) -> Void) async {
        var cursor = prepared.withLock { prepared in
            defer { prepared = nil }
            return prepared
        }
        let pruning = Pruning(every: rules.pruning)
        while !Task.isCancelled {
            do {
                if let current = cursor {
                    cursor = try await step(from: current).next
                } else {
                    cursor = try await start()
                }
                if pruning.due(at: clock.now) { _ = try await stores.changes.pruneChanges(olderThan: rules.retention) }
                try await stores.changes.waitForChanges(timeout: rules.wait)
            } catch {
                if Task.isCancelled { return }
                report(error)
                try? await Task.sleep(for: rules.wait)
            }
        }
    }

    private func apply(_ changes: [Change]) async throws {
        // Also without changes: memory may have rows to read again whatever the feed brings (a position that
        // a failed write of this process had passed another's change over for).
        try await stores.follow(changes, at: clock.now)
        moves.moved(changes.compactMap { change -> UserID? in
            if case .position(let user) = change { user } else { nil }
        })
        let recipients = Set(changes.compactMap { change -> UserID? in
            if case .event(_, let recipient) = change { recipient } else { nil }
        })
        if !recipients.isEmpty { outboxSignal?.notify() }
        let listening = hub.listening(among: recipients)
        guard !listening.isEmpty else { return }
        var wanted: [EventID] = []
        for case .event(let id, let recipient) in changes where listening.contains(recipient) { wanted.append(id) }
        hub.publish(try await stores.events.events(ids: wanted))
    }
}

/// How a `ChangeFollower` reads the feed.
public struct FollowRules: Hashable, Sendable {
    /// The longest wait between reads when no notice comes: changes by a process that sends none (another
    /// SpatiaLite process) show within it.
    public var wait: Duration
    /// How long the feed keeps changes: a process that cannot read for longer reloads instead.
    public var retention: Duration
    /// How often a process prunes what is older than `retention`.
    public var pruning: Duration
    /// A process that has not read the feed for longer says it is behind (`/health`).
    public var behindAfter: Duration

    /// A read at least every second; changes kept ten minutes, pruned once a minute: a front cut off from
    /// the database for less than ten minutes catches up change by change. Ten seconds without a read is ten
    /// missed reads: the front says it is behind, and a load balancer that checks `/health` sends clients to
    /// another.
    public static let standard = FollowRules(wait: .seconds(1), retention: .seconds(600), pruning: .seconds(60), behindAfter: .seconds(10))

    public init(wait: Duration, retention: Duration, pruning: Duration, behindAfter: Duration) {
        self.wait = wait
        self.retention = retention
        self.pruning = pruning
        self.behindAfter = behindAfter
    }
}
