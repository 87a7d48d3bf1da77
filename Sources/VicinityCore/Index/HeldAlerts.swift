import Synchronization

/// Every alert held in memory with its sight (`AlertSight`), so that a move reads nothing from the record unless
/// memory cannot vouch for its person (`AlertService.changes(moving:)`).
///
/// Memory is a sieve, not a second record: the record alone decides what is told, by a conditional write that
/// expects the alert's state, when it last told, and the sight the change was worked out from (privacy mode, the
/// default level, the level set towards the watcher and its end). A move memory shows to change no alert (however
/// the watcher may see the friend) reads nothing; one that changes some is worked out from memory's alerts and
/// sights; one whose person memory cannot vouch for, from the record's. A sight memory holds that the record no
/// longer does costs at most a telling the write refuses (the newer setting hides the friend: the alert's people
/// are unsettled, and their next move is worked out again) or one put off until the person's next move after it
/// is read again (the newer setting shows them). Memory's one duty is never to show "no change" where the record
/// would find one:
/// - a person is *unsettled* from a change of their alerts until a read of them begun after that change has
///   reached memory; memory answers nothing for them (`alerts(of:)` is nil) and their moves go to the record.
///   This process's own writes unsettle their people once committed (`unsettle(_:)`); other processes' writes
///   come through the change feed (`refresh(_:moved:)`, an `alerts` change for the person an alert watches,
///   whose alerts read again hold it, in its one copy that both people's lists share; a note that an alert was
///   moved on, `Change.alertMoved`, names the state the write left, which memory takes as a read would and
///   unsettles nobody: `Book.follow(_:)`); a change of an account or a friendship unsettles the people it
///   names, so that their alerts' sights are read again (`sightsChanged(of:)`);
/// - a move of this process that moved alerts on (`advanced(_:moved:)`) puts each new state in memory itself,
///   since once its conditional write committed the record holds exactly that state, so that the friend on the
///   other end of each alert is not sent to the record for their next moves. It does so only where memory held
///   the alert as the change was worked out from it (the same version: the feed's notes of the write and of
///   later ones may have come first and brought back the state it expected) and both people are settled: a
///   settled person is in no read under way (the reads are one at a time, and only a read's landing settles),
///   so no read begun before the commit can put the old state back, and of two moves of this process racing on
///   one alert the later-committed one never lands first unnoticed (its expected state is the earlier one's new
///   state). A change committed where memory
///   cannot vouch for it unsettles the alert's people, as before; one the record refused changes nothing here.
///   The feed brings the change back later as a note of the state it left, which memory holds already; where
///   the note comes first, memory takes it and the move finds it there;
/// - another process's write is not known here until the feed brings it: a move taken in between is worked out
///   as it would have been just before that write, and what it would have told is told at the person's next
///   move, which finds the record's state different from where they are. So is a write of this process that a
///   note of an earlier one, read before it committed and taken after it, puts behind again, until the feed's
///   next read brings its own note (two moves of one alert within one read of the feed).
public final class HeldAlerts<Record: FriendStore>: Sendable {
    /// One alert held with its sight, where its person and friendship were found: one box in both people's
    /// lists, so that a move reads its person's alerts without looking each up among all of them (tens of
    /// thousands, a cache miss each). Read and changed only under the book's lock, which is what makes it safe to
    /// share between tasks.
    private final class Held: @unchecked Sendable {
        var alert: Alert
        var sight: AlertSight?
        /// Raised at every change of the box (`Book.nextVersion`): a move's change carries the version it was
        /// worked out from, and a box at another version has moved meanwhile.
        var version: Int

        init(_ alert: Alert, sight: AlertSight?, version: Int) {
            self.alert = alert
            self.sight = sight
            self.version = version
        }
    }

    private struct Book {
        var alerts: [AlertID: Held] = [:]
        var byPerson: [UserID: [Held]] = [:]
        /// The last version given a box.
        var lastVersion = 0
        /// The unsettled, each with the number of the latest change that unsettled them.
        var unsettled: [UserID: Int] = [:]
        var lastMark = 0
        /// A reload is under way: it puts back what it read, so nothing is changed in place meanwhile.
        var reloading = false

        mutating func unsettle(_ people: some Sequence<UserID>) -> Int {
            for person in people {
                lastMark += 1
                unsettled[person] = lastMark
            }
            return lastMark
        }

        /// Puts `fresh`, the record's alerts naming any of `people`, in place of those held, and settles each
        /// person unsettled no later than `mark`, the last before the read began.
        mutating func replace(alertsOf people: Set<UserID>, with fresh: [Alert], sights: [AlertID: AlertSight], readAfter mark: Int) {
            let kept = Set(fresh.map(\.id))
            for person in people {
                for held in byPerson[person] ?? [] where !kept.contains(held.alert.id) { remove(held.alert.id) }
            }
            for alert in fresh { insert(alert, sight: sights[alert.id]) }
            for person in people where (unsettled[person] ?? .max) <= mark { unsettled[person] = nil }
        }

        /// Puts `change`'s new state in the held alert when memory can vouch for it (the type's comment); false
        /// when it cannot, for the caller to unsettle the alert's people.
        mutating func apply(_ change: AlertChange) -> Bool {
            guard !reloading, unsettled[change.watcher] == nil, unsettled[change.watched] == nil, let held = alerts[change.alert]
            else { return false }
            // The feed may have brought the write's own note first (`follow`): memory holds its state already.
            if held.alert.inside == change.to && held.alert.toldAt == change.toldAt { return true }
            // Moved since the change was worked out: the feed's notes of the write and of later ones may have
            // come first and left the state the change expected (a state and its told time come back), which
            // the change must not overwrite.
            guard held.version == change.heldVersion, let alert = change.moving(held.alert) else { return false }
            held.alert = alert
            held.version = nextVersion()
            return true
        }

        mutating func nextVersion() -> Int {
            lastVersion += 1
            return lastVersion
        }

        /// Puts the state `move` says a write left in the held alert, as a read of the record just after that
        /// write would: only the state changed (the stores' triggers note nothing else as a move), so the alert's
        /// other columns and its sight are as memory holds them, and notes come in commit order, so memory holds
        /// the state of the latest write the feed has brought. Called under the gate of reads (`refresh`), so no
        /// read is under way that could put an older state back. False when memory holds no such alert or one of
        /// its people is unsettled, for the caller to unsettle the person watched.
        mutating func follow(_ move: AlertMove) -> Bool {
            guard !reloading, unsettled[move.watched] == nil, let held = alerts[move.alert],
                held.alert.watched == move.watched, unsettled[held.alert.watcher] == nil
            else { return false }
            held.alert.inside = move.inside
            held.alert.toldAt = move.toldAt
            held.version = nextVersion()
            return true
        }

        mutating func insert(_ alert: Alert, sight: AlertSight?) {
            if let held = alerts[alert.id], held.alert.watcher == alert.watcher, held.alert.watched == alert.watched {
                held.alert = alert
                held.sight = sight
                held.version = nextVersion()
                return
            }
            remove(alert.id)
            let held = Held(alert, sight: sight, version: nextVersion())
            alerts[alert.id] = held
            byPerson[alert.watcher, default: []].append(held)
            byPerson[alert.watched, default: []].append(held)
        }

        mutating func remove(_ id: AlertID) {
            guard let held = alerts.removeValue(forKey: id) else { return }
            for person in [held.alert.watcher, held.alert.watched] {
                byPerson[person]?.removeAll { $0 === held }
                if byPerson[person]?.isEmpty == true { byPerson[person] = nil }
            }
        }
    }

    public let record: Record
    private let book = Mutex(Book())
    /// One read of the record's alerts at a time: a later read never lands before an earlier one.
    private let reads = SerialGate()
    /// At most this many people per read of the record: a list of keys any database takes in one statement.
    private static var batch: Int { 500 }
    /// The shortest time between two reads of the unsettled: the follower reads the feed after every commit,
    /// and a busy feed would otherwise cost a read of the record each time.
    public let rereadEvery: Duration
    /// When the unsettled were last read, on a clock that never jumps.
    private let lastRead = Mutex<ContinuousClock.Instant?>(nil)

    /// 200 ms: at most five reads a second however busy the feed, while a person's next move is seconds away;
    /// until then, the unsettled's moves are worked out against the record.
    public static var standardRereadEvery: Duration { .milliseconds(200) }

    /// Loads every alert of the record.
    public init(record: Record, rereadEvery: Duration = standardRereadEvery) async throws {
        self.record = record
        self.rereadEvery = rereadEvery
        try await reload()
    }

    /// How many alerts memory holds.
    public var heldCount: Int { book.withLock { $0.alerts.count } }

    /// The alerts naming `person`, as watcher or watched, with their sights; nil while they are unsettled.
    public func alerts(of person: UserID) -> AlertContext? {
        book.withLock { book in
            guard book.unsettled[person] == nil else { return nil }
            let held = book.byPerson[person] ?? []
            var alerts: [Alert] = []
            var sights: [AlertID: AlertSight] = [:], versions: [AlertID: Int] = [:]
            alerts.reserveCapacity(held.count)
            sights.reserveCapacity(held.count)
            versions.reserveCapacity(held.count)
            for entry in held {
                alerts.append(entry.alert)
                if let sight = entry.sight { sights[entry.alert.id] = sight }
                versions[entry.alert.id] = entry.version
            }
            return AlertContext(alerts: alerts, sights: sights, versions: versions)
        }
    }

    /// This process changed these people's alerts in the record (and committed): memory cannot vouch for them
    /// until it reads them again, at the follower's next `refresh`.
    public func unsettle(_ people: some Sequence<UserID>) {
        book.withLock { _ = $0.unsettle(people) }
    }

    /// These people's accounts or friendships changed, through this process or as the feed says
    /// (`HeldAccounts`, `HeldFriendships` tell it): the sights of the alerts naming them are read again with the
    /// alerts, at the next `refresh`. Someone memory holds no alert of is left settled.
    public func sightsChanged(of people: some Sequence<UserID>) {
        book.withLock { book in _ = book.unsettle(people.filter { book.byPerson[$0] != nil }) }
    }

    /// This process committed a move with `changes` worked out for it, of which the record moved on `moved` (a
    /// conditional write, `PositionStore.setPosition(_:alerts:)`): their new states go into memory where it can
    /// vouch for them; the rest unsettle their people. A change the record did not take leaves memory as it is:
    /// the record had moved past what memory held, by a write whose note the feed brings (`refresh(_:moved:)`,
    /// the state it left, or for a sight or an alert changed otherwise a change that unsettles). Two friends
    /// moving at once, each setting off the nearby alerts between them, are the common case.
    public func advanced(_ changes: [AlertChange], moved: Set<AlertID>) {
        book.withLock { book in
            for change in changes where moved.contains(change.alert) && !book.apply(change) {
                _ = book.unsettle([change.watcher, change.watched])
            }
        }
    }

    /// Takes the states of the alerts `moved` on, in the order the feed gave them, unsettles the people the
    /// other changes name (`changed`, and those of the moves memory could not take) and reads again the alerts
    /// of everyone unsettled, at most once in `rereadEvery`: the follower calls it after every read of the feed,
    /// changes or not, so that this process's own writes settle too.
    public func refresh(_ changed: some Sequence<UserID>, moved: [AlertMove] = []) async throws {
        try await reads.run {
            let (people, mark) = book.withLock { book in
                let untaken = moved.filter { !book.follow($0) }.map(\.watched)
                let mark = book.unsettle(Array(changed) + untaken)
                return (Array(book.unsettled.keys), mark)
            }
            guard !people.isEmpty else { return }
            let now = ContinuousClock.now
            guard lastRead.withLock({ $0.map { now - $0 >= rereadEvery } ?? true }) else { return }
            lastRead.withLock { $0 = now }
            for chunk in people.chunks(of: Self.batch) {
                let group = Array(chunk)
                let fresh = try await record.alerts(involvingAny: group)
                let sights = try await record.alertSights(of: fresh)
                book.withLock { $0.replace(alertsOf: Set(group), with: fresh, sights: sights, readAfter: mark) }
            }
        }
    }

    /// Loads every alert again: for a follower that fell behind what the feed keeps.
    public func reload() async throws {
        try await reads.run {
            let mark = book.withLock { book in
                book.reloading = true
                return book.lastMark
            }
            var all: [Alert] = [], sights: [AlertID: AlertSight] = [:]
            do {
                all = try await record.allAlerts()
                for chunk in all.chunks(of: Self.batch) {
                    sights.merge(try await record.alertSights(of: Array(chunk))) { first, _ in first }
                }
            } catch {
                book.withLock { $0.reloading = false }
                throw error
            }
            book.withLock { book in
                var fresh = Book(lastVersion: book.lastVersion, unsettled: book.unsettled.filter { $0.value > mark }, lastMark: book.lastMark)
                for alert in all { fresh.insert(alert, sight: sights[alert.id]) }
                book = fresh
            }
        }
    }
}
