import GeoCore
import Synchronization

extension SharedPosition: Located {
    public var id: UserID { userID }
}

/// Shared positions held in memory in front of a store of record, in a `PointGrid` as places and votes are.
///
/// Every friend list, direction and nearby-friends answer reads the positions of the caller and their friends;
/// with memory answering, those reads no longer wait for an SQLite reader. The friend finder reads positions by
/// user (a friend list is a few hundred keys, far fewer than the positions a campus radius holds), which the
/// grid answers from its id map.
///
/// A user may send two positions at once (two devices, a retry), and the record keeps whichever commits last,
/// so one user's changes through this process reach memory one at a time in commit order, as `FollowedCopy`
/// applies places. Different users' changes do not wait for each other: a server database takes many writes at
/// once. Other processes' writes arrive through the change feed (`refresh`, from `ChangeFollower`).
public final class IndexedPositions<Record: PositionStore>: PositionStore {
    public let record: Record
    private let held: SharedIndex<PointGrid<SharedPosition, Bool>>
    /// One line per stripe of users, so a user's writes keep their order while others' go ahead.
    private let writes = (0..<IndexedPositions.stripes).map { _ in SerialGate() }

    /// 64 lines: more than the connections a store writes through at once (16 for PostGIS), so that users
    /// seldom share one.
    private static var stripes: Int { 64 }

    func stripe(of user: UserID) -> Int {
        Int(UInt(bitPattern: user.hashValue) % UInt(Self.stripes))
    }

    private func gate(for user: UserID) -> SerialGate { writes[stripe(of: user)] }

    /// Loads every position of the record into memory.
    public init(record: Record) async throws {
        self.record = record
        held = SharedIndex(try await Self.load(record))
    }

    private static func load(_ record: Record) async throws -> PointGrid<SharedPosition, Bool> {
        let loaded = Mutex<[SharedPosition]>([])
        try await record.forEachPosition { batch in loaded.withLock { $0 += batch } }
        var grid = PointGrid<SharedPosition, Bool>(group: { _ in true })
        let positions = loaded.withLock { positions in
            defer { positions = [] }
            return positions
        }
        grid.reserveCapacity(positions.count)
        grid.insert(contentsOf: positions)
        return grid
    }

    // MARK: - Following other processes' writes

    /// Reads the users' positions again from the record, for the changes of the feed (one entry per change,
    /// a user once per change). The users' write lines are held from the read until memory has it, as a write
    /// of this process holds its user's from the record to memory: a write here either reached memory before
    /// the read (and the read has it) or starts after memory has the read.
    ///
    /// Users whose lines are free are read at once, in one read; those on a line a write of this process
    /// holds are read once that write is done, a read per such line, so that a slow write holds up only the
    /// changes of its own line, not the whole feed (this returns before those are in memory). Two reads of one
    /// user hold its line in turn, so the later read is the later in memory.
    ///
    /// A change this process made is not read again, and takes no line: each write here counts one change of
    /// its user to come before it writes (`OwnChanges`), and the changes of a user up to that count are passed
    /// over. A change passed over in place of another process's is one the feed gave before this process's
    /// own, which commits later than it and puts its own value in memory; when that write fails instead, it
    /// marks its user to be read again at the next refresh, which the follower makes after every read of the
    /// feed, changes or not. A read that fails marks its users so too.
    public func refresh(_ changes: [UserID]) async throws {
        let users = ownChanges.withLock { $0.unread(changes) }
        guard !users.isEmpty else { return }
        let free = Set(Set(users.map(stripe(of:))).filter { writes[$0].tryEnter() })
        let later = users.filter { !free.contains(stripe(of: $0)) }
        // Each busy line's users wait for that line alone, holding no other, as a writer does: none waits for
        // the slowest of several writes, nor for another line's reads. A read that fails has marked its users
        // to be read again at the next refresh.
        for line in Set(later.map(stripe(of:))) {
            let mine = later.filter { stripe(of: $0) == line }
            Task { try? await writes[line].run { try await read(Array(mine)) } }
        }
        guard !free.isEmpty else { return }
        defer { for stripe in free { writes[stripe].leave() } }
        try await read(Array(users.filter { free.contains(stripe(of: $0)) }))
    }

    /// Reads the users' positions from the record into memory, their lines held by the caller.
    private func read(_ users: [UserID]) async throws {
        do {
            let fresh = Dictionary(try await record.positions(of: users).map { ($0.userID, $0) }) { _, later in later }
            held.write { grid in
                for user in users {
                    if let position = fresh[user] { grid.insert(position) } else { grid.remove(user) }
                }
            }
        } catch {
            // The feed gives these changes again, but counts already spent would pass over the own ones.
            ownChanges.withLock { $0.unsure.formUnion(users) }
            throw error
        }
    }

    /// Changes this process's writes made or are making that the feed has not given yet.
    private struct OwnChanges {
        /// Per user, how many of the feed's next changes are this process's own.
        var counts: [UserID: Int] = [:]
        /// Users whose memory may lack a change: read again at the next refresh, change or not.
        var unsure: Set<UserID> = []

        /// A write of `user` is about to be made.
        mutating func expect(_ user: UserID) {
            counts[user, default: 0] += 1
        }

        /// A write of `user` made no change: its count is taken back, or, when a change of another process
        /// was already passed over in its place, the user is read again.
        mutating func withdraw(_ user: UserID) {
            if let count = counts[user] {
                counts[user] = count > 1 ? count - 1 : nil
            } else {
                unsure.insert(user)
            }
        }

        /// The users to read again for `changes`: those past their count, and every unsure one.
        mutating func unread(_ changes: [UserID]) -> Set<UserID> {
            var unread = unsure
            unsure = []
            for user in changes {
                if let count = counts[user] {
                    counts[user] = count > 1 ? count - 1 : nil
                } else {
                    unread.insert(user)
                }
            }
            return unread
        }
    }

    private let ownChanges = Mutex(OwnChanges())

    /// Runs `body` holding the write lines of `stripes`, all asked for at once: the wait is the longest write
    /// under way on them, not their sum, so following the feed does not hold writers up for one write per
    /// line. One caller at a time waits for several lines (`several`), a writer waits for no line while it
    /// holds its own, and `refresh` takes at once only lines that are free and waits for a busy one holding
    /// no other, so no two wait for each other.
    private func holding(_ stripes: [Int], _ body: () async throws -> Void) async throws {
        try await several.run {
            await withTaskGroup(of: Void.self) { group in
                for stripe in stripes { group.addTask { await self.writes[stripe].enter() } }
            }
            defer { for stripe in stripes { writes[stripe].leave() } }
            try await body()
        }
    }

    /// Taken by whoever holds several write lines, before them.
    private let several = SerialGate()

    /// Loads every position again, every write line held meanwhile (see `refresh`).
    public func reload() async throws {
        try await holding(Array(writes.indices)) {
            let grid = try await Self.load(record)
            held.write { $0 = grid }
            // Changes counted before the reload may have been pruned unread; the reload has their writes.
            ownChanges.withLock { $0 = OwnChanges() }
        }
    }

    /// How many positions memory holds.
    public var heldCount: Int { held.read { $0.count } }

    // MARK: - Writes: the record first, then memory, in commit order

    public func setPosition(_ position: SharedPosition, alerts: [AlertChange]) async throws -> Set<AlertID> {
        try await gate(for: position.userID).run {
            ownChanges.withLock { $0.expect(position.userID) }
            let moved: Set<AlertID>
            do {
                moved = try await record.setPosition(position, alerts: alerts)
            } catch {
                ownChanges.withLock { $0.withdraw(position.userID) }
                throw error
            }
            held.write { $0.insert(position) }
            return moved
        }
    }

    public func deletePosition(of user: UserID) async throws -> Bool {
        try await gate(for: user).run {
            ownChanges.withLock { $0.expect(user) }
            let deleted: Bool
            do {
                deleted = try await record.deletePosition(of: user)
            } catch {
                ownChanges.withLock { $0.withdraw(user) }
                throw error
            }
            held.write { $0.remove(user) }
            // A delete that found nothing changed no row, and the feed has no change of it.
            if !deleted { ownChanges.withLock { $0.withdraw(user) } }
            return deleted
        }
    }

    // MARK: - Reads from memory

    public func position(of user: UserID) async throws -> SharedPosition? {
        held.read { $0.item(user) }
    }

    public func positions(of users: [UserID]) async throws -> [SharedPosition] {
        held.read { grid in Set(users).compactMap { grid.item($0) } }
    }

    public func forEachPosition(_ body: @Sendable ([SharedPosition]) throws -> Void) async throws {
        try await record.forEachPosition(body)
    }
}
