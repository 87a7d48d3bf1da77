import Synchronization

/// Which of a user's sessions have ended, for `EventHub.endStreams`.
public enum EndedSessions: Hashable, Sendable {
    /// One session: a sign-out.
    case only(TokenDigest)
    /// Every session but the one that asked: a password change.
    case allBut(TokenDigest)
    /// Every session: an account deleted or disabled.
    case all
}

/// What a stream delivers: a recorded event, or a notice that is not recorded (a friend's move), which is
/// live only: a client that reconnects reads the lists again rather than replaying notices.
public enum Delivery: Hashable, Sendable {
    case event(Event)
    /// A friend the recipient may see has moved: the friend as the recipient sees them now.
    case friendMoved(FriendView)

    /// The recorded event; nil for a notice.
    public var event: Event? {
        if case .event(let event) = self { event } else { nil }
    }
}

/// Live delivery of recorded events, and of notices, to the streams open in this process.
///
/// Each stream has a bounded buffer: a client too slow to keep up loses its stream, reconnects with the last
/// event id it read, and the store replays the rest, so nothing is lost for good. Each stream holds a lease
/// (`StreamLeaseLedger`), which caps a person's streams over every process: a stream whose lease another
/// open pushed out ends (`endStreams(leases:)`). A stream belongs to the session that opened it and ends with
/// it (`endStreams(of:sessions:)`): a token signed out through this process hears nothing more; one signed
/// out through another process, from the stream's next check (`EventRoutes`, every heartbeat).
public final class EventHub: Sendable {
    /// Deliveries (events and notices) one stream may hold while its client reads; one more ends the stream.
    public static let bufferedEvents = 256

    private let state = Mutex(State())

    private struct Subscriber {
        var id: Int
        var session: TokenDigest
        var lease: StreamLeaseID
        var continuation: AsyncStream<Delivery>.Continuation
    }

    private struct State {
        var streams: [UserID: [Subscriber]] = [:]
        var nextID = 0
        /// `waitForOpenStreams(atMost:)` calls under way, by id: the count each waits for.
        var drainWaiters: [Int: (atMost: Int, continuation: CheckedContinuation<Void, Never>)] = [:]

        var openStreams: Int { streams.values.reduce(0) { $0 + $1.count } }
    }

    public init() {}

    /// A stream of the user's events from now on, under `lease`. It ends when the consumer stops, when it
    /// falls behind, when its lease is pushed out, or when its session ends.
    public func subscribe(_ identity: Identity, lease: StreamLeaseID) -> AsyncStream<Delivery> {
        let user = identity.userID
        let (stream, continuation) = AsyncStream<Delivery>.makeStream(bufferingPolicy: .bufferingOldest(Self.bufferedEvents))
        state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.streams[user, default: []].append(Subscriber(id: id, session: identity.session, lease: lease, continuation: continuation))
            continuation.onTermination = { [weak self] _ in self?.remove(user, id: id) }
        }
        return stream
    }

    /// Ends the streams held here under any of `leases`, at once: leases a newer stream pushed out
    /// (`StreamLeaseLedger.openStream`). Leases held by other processes are not here, and are left alone.
    public func endStreams(leases: [StreamLeaseID]) {
        guard !leases.isEmpty else { return }
        let named = Set(leases)
        let ended = state.withLock { state in
            state.streams.values.flatMap { $0.filter { named.contains($0.lease) }.map(\.continuation) }
        }
        // Outside the lock: finishing runs `onTermination`, which takes the lock again.
        for continuation in ended { continuation.finish() }
    }

    /// Hands each event to every open stream of its recipient; a stream whose buffer is full is ended.
    public func publish(_ events: [Event]) {
        deliver(events.map { ($0.recipient, .event($0)) })
    }

    /// Hands each notice to every open stream of its recipient, as `publish` does events.
    public func notify(_ moves: [(recipient: UserID, friend: FriendView)]) {
        deliver(moves.map { ($0.recipient, .friendMoved($0.friend)) })
    }

    private func deliver(_ deliveries: [(recipient: UserID, delivery: Delivery)]) {
        let overflowing: [AsyncStream<Delivery>.Continuation] = state.withLock { state in
            var overflowing: [AsyncStream<Delivery>.Continuation] = []
            for (recipient, delivery) in deliveries {
                for subscriber in state.streams[recipient] ?? [] {
                    if case .dropped = subscriber.continuation.yield(delivery) { overflowing.append(subscriber.continuation) }
                }
            }
            return overflowing
        }
        for continuation in overflowing { continuation.finish() }
    }

    /// Ends the streams of the user's ended sessions, at once.
    public func endStreams(of user: UserID, sessions: EndedSessions) {
        let ended: [AsyncStream<Delivery>.Continuation] = state.withLock { state in
            (state.streams[user] ?? []).filter { subscriber in
                switch sessions {
                case .only(let session): subscriber.session == session
                case .allBut(let session): subscriber.session != session
                case .all: true
                }
            }.map(\.continuation)
        }
        // Outside the lock, as in `subscribe`: finishing removes the subscriber.
        for continuation in ended { continuation.finish() }
    }

    /// The users among `users` with a stream open here.
    public func listening(among users: Set<UserID>) -> Set<UserID> {
        state.withLock { state in users.filter { state.streams[$0] != nil } }
    }

    /// Ends every stream, at once: for a process that can no longer tell which events its streams missed.
    /// Their clients reconnect with the last event id they read, and the store replays the rest.
    public func endAllStreams() {
        let ended = state.withLock { state in state.streams.values.flatMap { $0.map(\.continuation) } }
        for continuation in ended { continuation.finish() }
    }

    /// Whether any stream is open here: without one, no notice needs working out.
    public var isAnyoneListening: Bool { state.withLock { !$0.streams.isEmpty } }

    /// Open streams, over all users.
    public var openStreams: Int { state.withLock { $0.openStreams } }

    /// Returns once at most `count` streams are open here (at once if so already), or when the task is
    /// cancelled. A stream whose client has gone ends only when the server next writes to it; this says when
    /// such streams have been let go.
    public func waitForOpenStreams(atMost count: Int) async {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let done = state.withLock { state in
                    guard state.openStreams > count, !Task.isCancelled else { return true }
                    state.drainWaiters[id] = (count, continuation)
                    return false
                }
                if done { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.drainWaiters.removeValue(forKey: id) }?.continuation.resume()
        }
    }

    private func remove(_ user: UserID, id: Int) {
        let drained: [CheckedContinuation<Void, Never>] = state.withLock { state in
            state.streams[user]?.removeAll { $0.id == id }
            if state.streams[user]?.isEmpty == true { state.streams[user] = nil }
            guard !state.drainWaiters.isEmpty else { return [] }
            let open = state.openStreams
            let done = state.drainWaiters.filter { open <= $0.value.atMost }
            for key in done.keys { state.drainWaiters[key] = nil }
            return done.values.map(\.continuation)
        }
        for continuation in drained { continuation.resume() }
    }
}

/// Records events and streams them to their recipients, replaying what a reconnecting client missed.
///
/// Events are written after the change they announce has committed: a crash between the two loses the
/// notice, never the change, which the lists (`GET /v1/friend-requests`, `GET /v1/friends`) still show.
public struct EventService<S: Stores>: Sendable {
    let stores: S
    let clock: any WallClock
    public let rules: EventRules
    public let hub: EventHub

    /// Events replayed per store read while catching a client up.
    static var replayPage: Int { 500 }

    private let pruning = Pruning(every: .seconds(60))

    public init(stores: S, clock: any WallClock, rules: EventRules = .standard) {
        self.stores = stores
        self.clock = clock
        self.rules = rules
        hub = EventHub()
    }

    /// Opens a stream of the caller's events (`stream(for:after:)`) under a new lease: the person's streams
    /// over every process that shares the record stay within `EventRules.maximumStreamsPerUser`, the oldest
    /// pushed out first (its client is most likely gone without saying so). One pushed out here ends at once;
    /// one held by another process ends at its next renewal there, which comes every `renewedEvery`.
    public func openStream(for identity: Identity, after lastEventID: EventID?, renewedEvery beat: Duration) async throws -> OpenedStream {
        let now = clock.now
        let lease = StreamLease(user: identity.userID, openedAt: now, expiresAt: now + leaseLifetime(renewedEvery: beat))
        // Subscribed before the lease counts, so that an open anywhere that pushes it out finds its stream.
        let deliveries = stream(for: identity, lease: lease.id, after: lastEventID)
        do {
            hub.endStreams(leases: try await stores.streamLeases.openStream(lease, cap: rules.maximumStreamsPerUser, at: now))
        } catch {
            hub.endStreams(leases: [lease.id])
            throw error
        }
        return OpenedStream(lease: lease.id, deliveries: deliveries)
    }

    /// Checked at each of an open stream's beats: whether its session still signs in (it may have expired,
    /// or been ended by another process) and its lease is still held, which renews it. False: the stream ends.
    public func keepStream(_ lease: StreamLeaseID, of identity: Identity, renewedEvery beat: Duration) async throws -> Bool {
        guard try await isSignedIn(identity) else { return false }
        let now = clock.now
        return try await stores.streamLeases.renewStream(lease, until: now + leaseLifetime(renewedEvery: beat), at: now)
    }

    /// `EventRules.streamLease`, and never under three renewals: one slow store call loses nothing.
    func leaseLifetime(renewedEvery beat: Duration) -> Duration { max(rules.streamLease, beat * 3) }

    /// The stream ended: its lease no longer counts.
    public func closeLease(_ lease: StreamLeaseID) async throws {
        try await stores.streamLeases.closeStream(lease)
    }

    /// Stores the events; they reach their recipients' open streams, in this process and every other, through
    /// the change feed (`ChangeFollower`), which gives each recipient's events in the order they committed.
    /// Events past the retention window are removed on the way, at most once a minute: replays never read them
    /// anyway (`since`), so removing them is housekeeping, and a failure to do it fails no one's request.
    @discardableResult
    public func record(_ drafts: [EventDraft]) async throws -> [Event] {
        guard !drafts.isEmpty else { return [] }
        let events = try await stores.events.appendEvents(drafts)
        let now = clock.now
        if pruning.due(at: now) { _ = try? await stores.events.deleteEvents(before: now - rules.retention) }
        return events
    }

    /// The caller's events under `lease` (`openLease`): first those after `lastEventID` still within the retention window (none when nil:
    /// a new client starts from now), then each new one as it is recorded, each exactly once and in order.
    ///
    /// Pull-based: the store is read a page at a time as the consumer asks for more, so a long replay is never
    /// all in memory. Events recorded meanwhile wait in the hub's bounded buffer; a consumer that falls further
    /// behind loses the stream and catches up by reconnecting.
    func stream(for identity: Identity, lease: StreamLeaseID, after lastEventID: EventID?) -> EventStream {
        // Subscribed before reading the store, so that nothing recorded in between is missed; what arrives
        // both ways is passed on once, by number.
        let live = hub.subscribe(identity, lease: lease)
        let stores = stores
        let since = clock.now - rules.retention
        return EventStream(live: live, start: lastEventID, pageSize: Self.replayPage) { after, limit in
            try await stores.events.events(for: identity.userID, after: after, since: since, limit: limit)
        }
    }
}

extension EventService {
    /// Whether the stream's session still signs in: checked by an open stream now and then, so that a stream
    /// also ends when its session expires or is ended by another process.
    public func isSignedIn(_ identity: Identity) async throws -> Bool {
        guard let session = try await stores.accounts.session(identity.session) else { return false }
        return session.userID == identity.userID && session.isValid(at: clock.now)
    }
}

/// A stream just opened: its lease, for `EventService.keepStream` and `closeLease`, and what it delivers.
public struct OpenedStream: Sendable {
    public let lease: StreamLeaseID
    public let deliveries: EventStream
}

/// A user's events: a replay from the store, then the live ones, each once and in order, with live notices
/// among the live ones.
public struct EventStream: AsyncSequence, Sendable {
    public typealias Element = Delivery

    let live: AsyncStream<Delivery>
    let start: EventID?
    let pageSize: Int
    let page: @Sendable (_ after: EventID, _ limit: Int) async throws -> [Event]

    public func makeAsyncIterator() -> Iterator {
        Iterator(live: live.makeAsyncIterator(), last: start, replaying: start != nil, pageSize: pageSize, read: page)
    }

    public struct Iterator: AsyncIteratorProtocol {
        var live: AsyncStream<Delivery>.Iterator
        var last: EventID?
        var replaying: Bool
        let pageSize: Int
        let read: @Sendable (_ after: EventID, _ limit: Int) async throws -> [Event]
        var buffered: [Event] = []
        var position = 0
        var exhausted = false

        public mutating func next() async throws -> Delivery? {
            while replaying {
                if position < buffered.count {
                    let event = buffered[position]
                    position += 1
                    last = event.id
                    return .event(event)
                }
                guard !exhausted, let after = last else {
                    replaying = false
                    buffered = []
                    break
                }
                buffered = try await read(after, pageSize)
                position = 0
                exhausted = buffered.count < pageSize
            }
            while let delivery = await live.next() {
                guard case .event(let event) = delivery else { return delivery }
                if let last, event.id <= last { continue }
                last = event.id
                return delivery
            }
            return nil
        }
    }
}

/// When housekeeping is next due: true at most once per interval, to the first caller.
public final class Pruning: Sendable {
    private let interval: Duration
    private let last = Mutex<Timestamp?>(nil)

    public init(every interval: Duration) { self.interval = interval }

    public func due(at now: Timestamp) -> Bool {
        last.withLock { last in
            if let previous = last, now - previous < interval { return false }
            last = now
            return true
        }
    }
}
