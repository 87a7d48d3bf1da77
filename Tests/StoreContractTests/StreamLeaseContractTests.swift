import Foundation
import Testing
import VicinityCore
@testable import VicinityPostGIS
import VicinitySpatiaLite

/// The ledgers a subject's two stores count streams in: one shared ledger where the record shares it (memory,
/// where both are one store; PostgreSQL), and SpatiaLite's own, in the memory of its one serving process.
private func ledgers(_ subject: SocialSubject, _ body: (any StreamLeaseLedger, any StreamLeaseLedger) async throws -> Void) async throws {
    if let store = subject.store as? InMemoryStore {
        try await body(store.streamLeases, store.streamLeases)
    } else if let store = subject.store as? SpatiaLiteStore {
        try await body(store.streamLeases, store.streamLeases)
    } else if let store = subject.store as? PostGISStore, let peer = subject.peer as? PostGISStore {
        try await body(store, peer)
    } else {
        Issue.record("no stream lease ledger for \(type(of: subject.store))")
    }
}

/// A person with an account, as the record's leases need one.
private func person(_ name: String, in subject: SocialSubject) async throws -> UserID {
    let person = try account(name)
    try await subject.store.createAccount(person, passwordHash: someHash)
    return person.id
}

/// Leases live 75 s, as three 25 s heartbeats make them.
private let lifetime = Duration.seconds(75)

private func lease(of user: UserID, openedAt time: Timestamp) -> StreamLease {
    StreamLease(user: user, openedAt: time, expiresAt: time + lifetime)
}

@Suite("Stream lease ledger contract")
struct StreamLeaseContractTests {
    @Test("forty streams of one person opened at once through two processes leave five leases, and each pushed out is named once",
          arguments: StoreKind.available)
    func concurrentOpensKeepTheCap(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind)
        defer { withExtendedLifetime(subject) {} }
        let user = try await person("ben", in: subject)
        try await ledgers(subject) { first, second in
            let leases = (0..<40).map { lease(of: user, openedAt: epoch + .milliseconds(Int64($0))) }
            let named = try await withThrowingTaskGroup(of: [StreamLeaseID].self) { group in
                for (index, lease) in leases.enumerated() {
                    let ledger = index % 2 == 0 ? first : second
                    group.addTask { try await ledger.openStream(lease, cap: 5, at: lease.openedAt) }
                }
                return try await group.reduce(into: [StreamLeaseID]()) { $0 += $1 }
            }
            #expect(Set(named).count == named.count, "no lease named twice")
            let now = epoch + .seconds(1)
            var held: [StreamLeaseID] = []
            for (index, lease) in leases.enumerated() where try await (index % 2 == 0 ? second : first).renewStream(lease.id, until: now + lifetime, at: now) {
                held.append(lease.id)
            }
            #expect(held.count == 5)
            #expect(Set(held).isDisjoint(with: named))
            #expect(Set(held).union(named) == Set(leases.map(\.id)), "every lease is either held or was named to an opener")
        }
    }

    @Test("opens in turn push out the oldest; a lease past its end is neither renewed nor named; a closed one frees its place",
          arguments: StoreKind.available)
    func oldestGoesFirst(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind)
        defer { withExtendedLifetime(subject) {} }
        let ben = try await person("ben", in: subject)
        let eve = try await person("eve", in: subject)
        try await ledgers(subject) { first, second in
            let a = lease(of: ben, openedAt: epoch), b = lease(of: ben, openedAt: epoch + .seconds(1))
            let c = lease(of: ben, openedAt: epoch + .seconds(2))
            #expect(try await first.openStream(a, cap: 2, at: a.openedAt).isEmpty)
            #expect(try await second.openStream(b, cap: 2, at: b.openedAt).isEmpty)
            #expect(try await first.openStream(lease(of: eve, openedAt: b.openedAt), cap: 2, at: b.openedAt).isEmpty,
                    "another person's streams count apart")
            #expect(try await second.openStream(c, cap: 2, at: c.openedAt) == [a.id])
            #expect(try await first.renewStream(a.id, until: c.openedAt + lifetime, at: c.openedAt) == false)
            #expect(try await second.renewStream(b.id, until: c.openedAt + lifetime, at: c.openedAt))

            // b now holds until 2 s + 75 s, c until 77 s: at 78 s both have ended, and count for nothing.
            let late = epoch + .seconds(78)
            #expect(try await first.renewStream(c.id, until: late + lifetime, at: late) == false)
            let d = lease(of: ben, openedAt: late), e = lease(of: ben, openedAt: late + .seconds(1))
            #expect(try await first.openStream(d, cap: 2, at: d.openedAt).isEmpty)
            #expect(try await second.openStream(e, cap: 2, at: e.openedAt).isEmpty)
            try await first.closeStream(d.id)
            #expect(try await second.renewStream(d.id, until: e.openedAt + lifetime, at: e.openedAt) == false)
            let f = lease(of: ben, openedAt: late + .seconds(2))
            #expect(try await second.openStream(f, cap: 2, at: f.openedAt).isEmpty, "the closed lease freed its place")
            try await second.closeStream(d.id)
        }
    }
}
