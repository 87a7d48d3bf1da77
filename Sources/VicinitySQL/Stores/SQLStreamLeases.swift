import VicinityCore

/// The count of open event streams per person (`StreamLeaseLedger`), for a store whose processes share it.
/// Opens for one person hold that person's lock key for their transaction, so they take effect one at a time
/// over every process; a renewal and a close touch one row.
extension SQLRecordStore {
    public func openStream(_ lease: StreamLease, cap: Int, at now: Timestamp) async throws -> [StreamLeaseID] {
        try await write(.locking([SQLLockKey(.streamHolder, lease.user.rawValue)], .select(
            StreamLease.self, where: .equals("account_id", .text(lease.user.rawValue)), lock: .forUpdate
        ) { held in
            let live = held.filter { $0.isLive(at: now) }
            let beyond = StreamLease.beyond(cap, held: live, new: lease)
            let gone = held.filter { !$0.isLive(at: now) } + beyond.filter { $0.id != lease.id }
            var writes = gone.map { StreamLease.delete(where: .equals("id", .text($0.id.rawValue))) }
            if !beyond.contains(lease) { writes.append(StreamLease.insert(lease)) }
            return .writing(writes, result: beyond.map(\.id))
        }))
    }

    public func renewStream(_ id: StreamLeaseID, until: Timestamp, at now: Timestamp) async throws -> Bool {
        try await write(.select(StreamLease.self, where: .equals("id", .text(id.rawValue)), lock: .forUpdate) { found in
            guard var lease = found.first, lease.isLive(at: now) else { return .done(false) }
            lease.expiresAt = until
            return .writing([StreamLease.update(lease)], result: true)
        })
    }

    public func closeStream(_ id: StreamLeaseID) async throws {
        try await write(.finish([StreamLease.delete(where: .equals("id", .text(id.rawValue)))]) { _ in () })
    }
}
