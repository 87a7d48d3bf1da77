import Testing
import VicinityCore

@Suite("Sessions held in memory")
struct HeldAccountsTests {
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
        let held = HeldAccounts(record: store)
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
        let held = HeldAccounts(record: store, capacity: 3)
        for digest in digests { #expect(try await held.session(digest) != nil) }
        #expect(held.heldCount == 3)

        let unheld = HeldAccounts(record: store, capacity: 0)
        #expect(try await unheld.session(digests[0]) != nil)
        try await store.deleteSession(digests[0])
        #expect(try await unheld.session(digests[0]) == nil, "read from the record, which has ended it")
        #expect(unheld.heldCount == 0)
    }
}

@Suite("Accounts and friendships held in memory")
struct HeldCopiesTests {
    @Test("an account read for others is held until this process changes it or the feed says another did; one's own is always read")
    func accountsHeldUntilChanged() async throws {
        let world = try await World()
        let pim = try await world.person("pim").userID
        let held = HeldAccounts(record: world.store)
        #expect(try await held.accounts(ids: [pim]).map(\.firstName.description) == ["Pim"])
        #expect(held.heldAccountCount == 1)

        // Another process renames Pim: others see the held name until the feed's change reaches `forgetAccounts`.
        var stored = try #require(try await world.store.storedAccount(id: pim))
        stored.account.firstName = try PersonName("Pimchanok", field: "first_name")
        #expect(try await world.store.updateAccount(stored, ending: .none))
        #expect(try await held.accounts(ids: [pim]).map(\.firstName.description) == ["Pim"])
        #expect(try await held.account(id: pim)?.firstName.description == "Pimchanok", "Pim's own account is read")
        held.forgetAccounts([pim])
        #expect(try await held.accounts(ids: [pim]).map(\.firstName.description) == ["Pimchanok"])

        // This process's own change is seen at once.
        stored.account.privacyMode = true
        #expect(try await held.updateAccount(stored, ending: .none))
        #expect(try await held.accounts(ids: [pim]).map(\.privacyMode) == [true])
        #expect(try await held.deleteAccount(pim, at: world.clock.now, cancel: { _ in false }, announcements: { _, _ in [] }))
        #expect(try await held.accounts(ids: [pim]).isEmpty)
        #expect(held.heldAccountCount == 0)
    }

    @Test("a read that began before a change was forgotten does not hold what it read")
    func racingReadIsNotHeld() async throws {
        let copies = HeldCopies<String, Int>(capacity: 10)
        let read = try await copies.values(of: ["pim"]) { _ in
            // The change is forgotten while this read is under way: what it read may be older than the change.
            copies.forget(["pim"])
            return ["pim": 1]
        }
        #expect(read == ["pim": 1])
        #expect(copies.count == 0)
        #expect(try await copies.values(of: ["pim"]) { _ in ["pim": 2] } == ["pim": 2])
        #expect(try await copies.values(of: ["pim"]) { _ in ["pim": 3] } == ["pim": 2], "held since")
    }

    @Test("no more keys are held than the capacity, and with none every read goes to the record")
    func copiesBounded() async throws {
        let copies = HeldCopies<Int, Int>(capacity: 3)
        _ = try await copies.values(of: Array(0..<8)) { keys in Dictionary(uniqueKeysWithValues: keys.map { ($0, $0) }) }
        #expect(copies.count == 3)
        let unheld = HeldCopies<Int, Int>(capacity: 0)
        _ = try await unheld.values(of: [1]) { _ in [1: 1] }
        #expect(try await unheld.values(of: [1]) { _ in [1: 2] } == [1: 2])
        #expect(unheld.count == 0)
    }

    @Test("a person's friendships are held until a change to one of their pairs here, or the feed's, and a friendship ended here shows at once")
    func friendshipsHeldUntilChanged() async throws {
        let world = try await World()
        let pim = try await world.person("pim"), nok = try await world.person("nok")
        try await world.befriend(pim, nok)
        let held = HeldFriendships(record: world.store, capacity: 10)
        #expect(try await held.friendships(of: pim.userID).map(\.friend) == [nok.userID])
        #expect(try await held.friendship(of: nok.userID, with: pim.userID)?.shareWithFriend == .exact)
        #expect(held.heldCount == 2)

        // Another process: Nok shares at building level with Pim. Held until the feed says so, for both.
        #expect(try await world.store.setSharing(.building, until: nil, from: nok.userID, to: pim.userID) != nil)
        #expect(try await held.friendships(of: pim.userID).first?.friendShareWithMe == .exact)
        held.forget([pim.userID, nok.userID])
        #expect(try await held.friendships(of: pim.userID).first?.friendShareWithMe == .building)
        #expect(try await held.friendship(of: nok.userID, with: pim.userID)?.shareWithFriend == .building)

        // This process's own changes: sharing, ending.
        #expect(try await held.setSharing(.none, until: nil, from: nok.userID, to: pim.userID) != nil)
        #expect(try await held.friendships(of: pim.userID).first?.friendShareWithMe == ShareLevel.none)
        #expect(try await held.endFriendship(of: pim.userID, with: nok.userID))
        #expect(try await held.friendships(of: pim.userID).isEmpty)
        #expect(try await held.friendship(of: nok.userID, with: pim.userID) == nil)
    }
}
