import Synchronization

public enum StreamLeaseKind {}
/// An open event stream's lease: its name in the ledger that counts a person's streams over every process.
public typealias StreamLeaseID = RandomIdentifier<StreamLeaseKind>

/// One open event stream as the ledger counts it: whose it is and until when it holds unless renewed.
public struct StreamLease: Hashable, Sendable {
    public var id: StreamLeaseID
    public var user: UserID
    public var openedAt: Timestamp
    /// The stream's process renews it while the stream is open; a process that dies stops renewing, and its
    /// streams stop counting at this time.
    public var expiresAt: Timestamp

    public init(id: StreamLeaseID = .random(), user: UserID, openedAt: Timestamp, expiresAt: Timestamp) {
        self.id = id
        self.user = user
        self.openedAt = openedAt
        self.expiresAt = expiresAt
    }

    public func isLive(at now: Timestamp) -> Bool { expiresAt > now }

    /// What a cap of `cap` leaves out when `new` opens beside a person's live leases `held`: the oldest held
    /// first, and `new` last of all, since the open that commits last is the stream most likely in use. Held
    /// leases opened at the same moment go in the order given, which is the order they were opened in where
    /// the ledger keeps it.
    public static func beyond(_ cap: Int, held: [StreamLease], new: StreamLease) -> [StreamLease] {
        let ordered = held.enumerated().sorted { ($0.element.openedAt, $0.offset) < ($1.element.openedAt, $1.offset) }.map(\.element) + [new]
        return Array(ordered.prefix(max(0, ordered.count - cap)))
    }
}

/// Where open event streams are counted per person, so that the cap on them holds over every process that
/// shares the ledger (`EventRules.maximumStreamsPerUser`).
///
/// What a conforming ledger guarantees, however many processes share it: opens for one person take effect
/// one at a time, so that however many streams are opened at once anywhere, at most `cap` live leases are
/// left, the newest open's among them, and every one beyond is named to exactly one opener. A lease that was
/// removed, or that expired, is never renewed again: its stream must end.
public protocol StreamLeaseLedger: Sendable {
    /// Records `lease`, then removes the person's live leases beyond `cap` (`StreamLease.beyond`) and expired
    /// ones, and returns the ids of the live ones removed: their streams are to end, wherever they are.
    func openStream(_ lease: StreamLease, cap: Int, at now: Timestamp) async throws -> [StreamLeaseID]

    /// Moves the lease's end to `until`, when it is still held at `now`; false when it was removed or has
    /// expired.
    func renewStream(_ id: StreamLeaseID, until: Timestamp, at now: Timestamp) async throws -> Bool

    /// The stream ended: its lease goes.
    func closeStream(_ id: StreamLeaseID) async throws
}

/// The ledger in this process's memory: for a record only one process serves.
public final class MemoryStreamLeases: StreamLeaseLedger {
    private struct State {
        var leases: [UserID: [StreamLease]] = [:]
        /// Whose each lease is, so that a renewal finds it by id alone.
        var owners: [StreamLeaseID: UserID] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    public func openStream(_ lease: StreamLease, cap: Int, at now: Timestamp) async throws -> [StreamLeaseID] {
        state.withLock { state in
            let held = state.leases[lease.user] ?? []
            let live = held.filter { $0.isLive(at: now) }
            let beyond = StreamLease.beyond(cap, held: live, new: lease)
            let named = Set(beyond.map(\.id))
            let kept = (live + [lease]).filter { !named.contains($0.id) }
            state.leases[lease.user] = kept.isEmpty ? nil : kept
            for gone in held where !kept.contains(gone) { state.owners[gone.id] = nil }
            if kept.contains(lease) { state.owners[lease.id] = lease.user }
            return beyond.map(\.id)
        }
    }

    public func renewStream(_ id: StreamLeaseID, until: Timestamp, at now: Timestamp) async throws -> Bool {
        state.withLock { state in
            guard let user = state.owners[id], let index = state.leases[user]?.firstIndex(where: { $0.id == id }),
                state.leases[user]?[index].isLive(at: now) == true
            else { return false }
            state.leases[user]?[index].expiresAt = until
            return true
        }
    }

    public func closeStream(_ id: StreamLeaseID) async throws {
        state.withLock { state in
            guard let user = state.owners.removeValue(forKey: id) else { return }
            state.leases[user]?.removeAll { $0.id == id }
            if state.leases[user]?.isEmpty == true { state.leases[user] = nil }
        }
    }
}
