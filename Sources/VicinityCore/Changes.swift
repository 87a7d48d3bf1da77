import Synchronization

/// One committed change that a copy in memory follows: which row to read again. A change names the row, not
/// its new value, so a reader that applies it reads what the record holds now, and changes of one row that it
/// reads late or twice leave it right.
public enum Change: Hashable, Sendable {
    /// A user's shared position was set or removed.
    case position(UserID)
    /// A vote was opened, counted a ballot, or finished.
    case vote(VoteID)
    /// An event was recorded for its recipient.
    case event(EventID, recipient: UserID)
    /// An alert watching a user was set, changed or removed (`friend_alert`): a read of that user's alerts
    /// finds it as it now is, or finds it gone.
    case alerts(UserID)
    /// An alert was moved on and nothing else of it changed (its state and when it last told, what a move
    /// writes): as `alerts`, with the state the write left, so that a copy already holding it need read nothing.
    case alertMoved(AlertMove)
    /// Sessions of a user ended (signed out, a password changed, the account deleted): any copy of them held
    /// in memory must go.
    case sessions(UserID)
    /// An account changed (its names, privacy mode, default sharing, address, password) or was deleted: any copy
    /// of it held in memory must go.
    case account(UserID)
    /// One of a user's friendships began, changed how either side shares, or ended: any copy of that user's
    /// friendships held in memory must go.
    case friendships(UserID)
}

extension Change {
    /// A change as both stores' `change` tables hold it: its kind (`position`, `vote`, `event`, `alert`,
    /// `session`, `account`, `friendship`), the key of the row (a user id, a vote id, the recipient's id, the user
    /// the alert watches, the session's user, the account's id, either side of the friendship) and, for an event,
    /// its number; for an alert moved on, the alert and the state the write left (`movedAlert` nil for any other
    /// change).
    public init(
        storedKind kind: String, key: String, eventID: Int64?, movedAlert: String? = nil, inside: Bool? = nil, toldAt: Timestamp? = nil
    ) throws(StoreError) {
        if movedAlert != nil, kind != "alert" { throw .corrupt("a change of kind \(kind) names an alert moved on") }
        /// The kinds keyed by a user, each with the change it names.
        let byUser: [String: (UserID) -> Change] = [
            "position": Change.position, "alert": Change.alerts, "session": Change.sessions, "account": Change.account,
            "friendship": Change.friendships,
        ]
        if let change = byUser[kind] {
            guard let user = UserID(key) else { throw .corrupt("user id \(key) is malformed") }
            if let movedAlert {
                guard let alert = AlertID(movedAlert) else { throw .corrupt("alert id \(movedAlert) is malformed") }
                self = .alertMoved(AlertMove(watched: user, alert: alert, inside: inside, toldAt: toldAt))
            } else {
                self = change(user)
            }
            return
        }
        switch kind {
        case "vote":
            guard let id = VoteID(key), id.rawValue == key else { throw .corrupt("vote id \(key) is malformed") }
            self = .vote(id)
        case "event":
            guard let eventID else { throw .corrupt("an event change without an event") }
            guard let recipient = UserID(key) else { throw .corrupt("user id \(key) is malformed") }
            self = .event(EventID(eventID), recipient: recipient)
        default:
            throw .corrupt("a change of kind \(kind)")
        }
    }
}

/// An alert moved on, as a change names it: the person it watches, and the state the write left.
public struct AlertMove: Hashable, Sendable {
    public var watched: UserID
    public var alert: AlertID
    public var inside: Bool?
    public var toldAt: Timestamp?

    public init(watched: UserID, alert: AlertID, inside: Bool?, toldAt: Timestamp?) {
        self.watched = watched
        self.alert = alert
        self.inside = inside
        self.toldAt = toldAt
    }
}

/// What one read of a change feed gives.
public enum ChangeRead<Cursor: Sendable>: Sendable {
    /// The changes committed after the cursor that no earlier read gave, and the cursor to read from next.
    case changes([Change], next: Cursor)
    /// Changes after the cursor were pruned before they were read: the reader reloads what it follows and
    /// starts again from a new cursor.
    case expired
}

/// Every change to positions, votes, events, alerts, sessions, accounts and friendships, committed by any process, readable from any point.
///
/// What a conforming store guarantees, with any number of writers in any number of processes:
/// - a reader that follows a cursor (each read from the `next` of the one before) is given each change
///   committed after the cursor was taken exactly once, unless it is told `expired`;
/// - changes of one transaction come in one read; the events of one recipient come in the order of their ids,
///   which is the order they committed (`EventStore.appendEvents`);
/// - changes are kept at least until `pruneChanges` removes them, which a reader further behind learns as
///   `expired`.
public protocol ChangeFeed: Sendable {
    associatedtype ChangeCursor: Sendable

    /// A cursor from which every change committed from now on is read. Taken before loading what the changes
    /// update, so that nothing falls between the load and the first read; a change both loaded and read is
    /// applied twice, which changes nothing.
    func changeCursor() async throws -> ChangeCursor

    /// The changes committed after `cursor` that no read from it has given.
    func changes(after cursor: ChangeCursor) async throws -> ChangeRead<ChangeCursor>

    /// Returns when changes may have been committed since the call began (a notice from the process that
    /// made them), or when `timeout` has passed: notices are a hint, and a reader reads again either way.
    func waitForChanges(timeout: Duration) async throws

    /// Removes the changes older than `age` by the record's own clock (a database server's, where there is
    /// one, so that fronts whose clocks disagree prune alike); returns how many.
    func pruneChanges(olderThan age: Duration) async throws -> Int
}

/// Wakes the readers of a change feed waiting in this process: each `notify()` ends every wait under way, or,
/// when none is, the next one at once, so that a change committed while its reader was busy reading is not left
/// for the wait's timeout.
public final class ChangeSignal: Sendable {
    private struct Waiters {
        var waiting: [Int: CheckedContinuation<Void, Never>] = [:]
        /// A notice came while nobody waited.
        var missed = false
    }

    private let waiters = Mutex(Waiters())
    private let nextID = Atomic<Int>(0)

    public init() {}

    /// Ends every wait under way, or the next one.
    public func notify() {
        let woken = waiters.withLock { waiters in
            defer { waiters.waiting = [:] }
            if waiters.waiting.isEmpty { waiters.missed = true }
            return Array(waiters.waiting.values)
        }
        for continuation in woken { continuation.resume() }
    }

    /// Returns at the next `notify()` (at once when one came while nobody waited), after `timeout`, or when the
    /// task is cancelled, whichever comes first.
    public func wait(timeout: Duration) async {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withTaskCancellationHandler {
                    await withCheckedContinuation { continuation in
                        let resumeNow = self.waiters.withLock { waiters -> Bool in
                            if Task.isCancelled { return true }
                            if waiters.missed {
                                waiters.missed = false
                                return true
                            }
                            waiters.waiting[id] = continuation
                            return false
                        }
                        if resumeNow { continuation.resume() }
                    }
                } onCancel: {
                    self.waiters.withLock { $0.waiting.removeValue(forKey: id) }?.resume()
                }
            }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }
}
