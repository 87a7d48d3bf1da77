import Testing
import VicinityCore

@Suite("Sessions held in memory")
struct HeldSessionsTests {
    /// A store with one account and `count` sessions of it, each an hour long.
    private func signedIn(_ count: Int) async throws -> (store: InMemoryStore, account: UserID, digests: [TokenDigest]) {
        let world = try await World()
        let person = try await world.person("pim")
        var digests: [TokenDigest] = []
        for _ in 0..<count {
            let digest = SessionToken.random().digest
            try await world.store.createSession(Session(
                digest: digest, userID: person.userID, createdAt: world.clock.now, expiresAt: world.clock.now + .seconds(3600)))
            digests.append(digest)
        }
        return (world.store, person.userID, digests)
    }

    @Test("a session looked up is held until this process ends it or the feed says another process did")
    func heldUntilEnded() async throws {
        let (store, pim, digests) = try await signedIn(3)
        let held = HeldSessions(record: store)
        for digest in digests { #expect(try await held.session(digest)?.userID == pim) }
        #expect(held.heldCount == 3)

        // Another process signs out the first: held here until the feed's change reaches `forget`.
        try await store.deleteSession(digests[0])
        #expect(try await held.session(digests[0]) != nil)
        held.forget([pim])
        #expect(try await held.session(digests[0]) == nil)

        // This process's own sign-out and password change end them at once.
        #expect(try await held.session(digests[1]) != nil)
        try await held.deleteSession(digests[1])
        #expect(try await held.session(digests[1]) == nil)
        let stored = try #require(try await store.storedAccount(id: pim))
        #expect(try await held.updateAccount(stored, ending: .all))
        #expect(try await held.session(digests[2]) == nil)
        #expect(held.heldCount == 0)
    }

    @Test("no more sessions are held than the capacity, and with none every lookup reads the record")
    func bounded() async throws {
        let (store, _, digests) = try await signedIn(8)
        let held = HeldSessions(record: store, capacity: 3)
        for digest in digests { #expect(try await held.session(digest) != nil) }
        #expect(held.heldCount == 3)

        let unheld = HeldSessions(record: store, capacity: 0)
        #expect(try await unheld.session(digests[0]) != nil)
        try await store.deleteSession(digests[0])
        #expect(try await unheld.session(digests[0]) == nil, "read from the record, which has ended it")
        #expect(unheld.heldCount == 0)
    }
}
