import Synchronization

/// Tells people with an event stream open here that a friend they may see has moved (`friend_moved`), so that
/// a map moves its pins without asking again.
///
/// The change follower hands over who moved, whoever wrote the position; the notices are worked out apart from
/// it, so that reading friendships never holds up the feed. Movers waiting to be looked at are a set: one who
/// moves twice before the first look is looked at once, with their newest position, so a burst of writes
/// costs at most one look per person. Each look reads the privacy rule afresh (`FriendService.moved`).
public final class FriendMoves<S: Stores>: Sendable {
    let friends: FriendService<S>
    let hub: EventHub
    private let waiting = Mutex<Set<UserID>>([])
    private let wake: AsyncStream<Void>.Continuation
    private let wakes: AsyncStream<Void>

    public init(friends: FriendService<S>, hub: EventHub) {
        self.friends = friends
        self.hub = hub
        (wakes, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// These people's positions changed in the record. Cheap: nobody is looked at while no stream is open.
    public func moved(_ users: some Sequence<UserID>) {
        guard hub.isAnyoneListening else { return }
        let added = waiting.withLock { waiting in
            let before = waiting.count
            waiting.formUnion(users)
            return waiting.count > before
        }
        if added { wake.yield() }
    }

    /// Sends the notices until cancelled; run once. A failed look is reported and its movers dropped: their friends'
    /// maps catch up at the next move or when they read the friend list again.
    public func run(report: @Sendable (any Error) -> Void) async {
        for await _ in wakes {
            let movers = waiting.withLock { waiting in
                defer { waiting = [] }
                return waiting
            }
            for mover in movers {
                if Task.isCancelled { return }
                do {
                    let seen = try await friends.moved(mover) { hub.listening(among: $0) }
                    hub.notify(seen.map { (recipient: $0.viewer, friend: $0.view) })
                } catch {
                    report(error)
                }
            }
        }
    }
}
