import GeoCore
import Testing
import VicinityCore

@Suite("Block store contract")
struct BlockContractTests {
    @Test("a block ends the friendship and the blocker's requests, holds the blocked person's, refuses the blocker's and keeps its first time",
          arguments: StoreKind.available)
    func blocking(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let a = try account("anna"), b = try account("ben"), c = try account("cleo")
        for person in [a, b, c] { try await store.createAccount(person, passwordHash: someHash) }
        try await store.befriend(a.id, b.id)
        let ac = FriendRequest(id: .random(), from: a.id, to: c.id, createdAt: epoch)
        #expect(try await store.sendFriendRequest(ac) == .sent(ac))

        let blocked = try await store.block(b.id, by: a.id, at: epoch + .seconds(1))
        #expect(blocked == BlockOutcome(block: Block(blocker: a.id, blocked: b.id, createdAt: epoch + .seconds(1)), isNew: true, endedFriendship: true))
        #expect(try await store.friendship(of: a.id, with: b.id) == nil)
        #expect(try await store.friendships(of: b.id).isEmpty)
        let again = try await store.block(b.id, by: a.id, at: epoch + .seconds(9))
        #expect(again == BlockOutcome(block: blocked.block, isNew: false, endedFriendship: false), "the first block stands")

        // The blocked person's request is kept, held; the blocker's own is refused and changes nothing.
        let ba = FriendRequest(id: .random(), from: b.id, to: a.id, createdAt: epoch + .seconds(2))
        #expect(try await store.sendFriendRequest(ba) == .held(ba))
        #expect(try await store.sendFriendRequest(FriendRequest(id: .random(), from: b.id, to: a.id, createdAt: epoch + .seconds(3)))
            == .alreadyRequested(ba))
        #expect(try await store.sendFriendRequest(FriendRequest(id: .random(), from: a.id, to: b.id, createdAt: epoch + .seconds(3)))
            == .senderBlocks, "asking back does not turn the held request into a friendship")
        #expect(try await store.acceptFriendRequest(ba.id, recipient: a.id, at: epoch + .seconds(4)) == nil)
        #expect(try await store.friendship(of: a.id, with: b.id) == nil)

        // A request the blocker had sent before goes with the block.
        _ = try await store.block(c.id, by: a.id, at: epoch + .seconds(5))
        #expect(try await store.friendRequests(of: c.id).isEmpty)

        #expect(Set(try await store.blocks(involving: a.id)) == [blocked.block, Block(blocker: a.id, blocked: c.id, createdAt: epoch + .seconds(5))])
        #expect(try await store.blocks(involving: b.id) == [blocked.block])
        #expect(try await store.relationships(of: a.id, with: [b.id]) == [b.id: .requestReceived(ba.id)], "the store keeps the held request")

        // Unblocking lifts one block only; the held request is then an ordinary pending one.
        #expect(try await store.unblock(b.id, by: a.id))
        #expect(try await store.unblock(b.id, by: a.id) == false)
        #expect(try await store.unblock(a.id, by: c.id) == false, "the other side placed none")
        #expect(try await store.acceptFriendRequest(ba.id, recipient: a.id, at: epoch + .seconds(6)) == ba)
        #expect(try await store.friendship(of: a.id, with: b.id) != nil)
        #expect(try await store.blocks(involving: a.id) == [Block(blocker: a.id, blocked: c.id, createdAt: epoch + .seconds(5))])
    }

    @Test("two people may block each other, and blocks go with either account", arguments: StoreKind.available)
    func mutualBlocksAndDeletion(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let a = try account("anna"), b = try account("ben"), c = try account("cleo")
        for person in [a, b, c] { try await store.createAccount(person, passwordHash: someHash) }
        _ = try await store.block(b.id, by: a.id, at: epoch)
        _ = try await store.block(a.id, by: b.id, at: epoch + .seconds(1))
        _ = try await store.block(c.id, by: b.id, at: epoch + .seconds(2))
        #expect(try await store.blocks(involving: a.id).count == 2)
        #expect(try await store.unblock(b.id, by: a.id))
        #expect(try await store.blocks(involving: a.id) == [Block(blocker: b.id, blocked: a.id, createdAt: epoch + .seconds(1))])
        #expect(try await store.deleteAccount(b.id, at: epoch + .seconds(3), cancel: { _ in false }, announcements: { _, _ in [] }))
        #expect(try await store.blocks(involving: a.id).isEmpty)
        #expect(try await store.blocks(involving: c.id).isEmpty)
    }

    @Test("forty pairs, each blocked while the blocked person accepts and asks back through another store, never end friends beside a block",
          arguments: StoreKind.available)
    func blockRacingFriendship(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        var pairs: [(blocker: Account, blocked: Account, request: FriendRequest)] = []
        for index in 0..<40 {
            let blocker = try account("blocker\(index)"), blocked = try account("blocked\(index)")
            for person in [blocker, blocked] { try await store.createAccount(person, passwordHash: someHash) }
            let request = FriendRequest(id: .random(), from: blocker.id, to: blocked.id, createdAt: epoch)
            _ = try await store.sendFriendRequest(request)
            pairs.append((blocker, blocked, request))
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, pair) in pairs.enumerated() {
                let blockerStore = subject.store(for: index), blockedStore = subject.store(for: index + 1)
                group.addTask { _ = try await blockerStore.block(pair.blocked.id, by: pair.blocker.id, at: epoch + .seconds(1)) }
                group.addTask { _ = try await blockedStore.acceptFriendRequest(pair.request.id, recipient: pair.blocked.id, at: epoch + .seconds(1)) }
                group.addTask {
                    _ = try await blockedStore.sendFriendRequest(
                        FriendRequest(id: .random(), from: pair.blocked.id, to: pair.blocker.id, createdAt: epoch + .seconds(1)))
                }
            }
            try await group.waitForAll()
        }
        for pair in pairs {
            #expect(try await store.friendship(of: pair.blocker.id, with: pair.blocked.id) == nil)
            #expect(try await store.blocks(involving: pair.blocker.id).map(\.blocked) == [pair.blocked.id])
            #expect(try await store.friendRequests(of: pair.blocker.id).allSatisfy { $0.from == pair.blocked.id },
                    "only the blocked person's request may wait")
        }
    }
}
