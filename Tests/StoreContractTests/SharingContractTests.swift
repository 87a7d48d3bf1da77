import GeoCore
import Testing
import VicinityCore

@Suite("Sharing for a while: store contract")
struct SharingContractTests {
    @Test("a level given for a while is kept with its end, and once the end passes is claimed once, at the sharer's default, with its events",
          arguments: StoreKind.available)
    func levelEnds(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        var a = try account("anna")
        a.defaultShare = .building
        let b = try account("ben")
        for person in [a, b] { try await store.createAccount(person, passwordHash: someHash) }
        try await store.befriend(a.id, b.id)
        let end = epoch + .seconds(60)
        let set = try await store.setSharing(.exact, until: end, from: a.id, to: b.id)
        #expect(set?.shareWithFriend == .exact && set?.shareWithFriendUntil == end)
        #expect(try await store.friendship(of: b.id, with: a.id)?.friendShareWithMeUntil == end)
        #expect(try await store.friendships(of: b.id).first?.friendShareWithMeUntil == end)

        func announce(at time: Timestamp) async throws -> [EndedSharing] {
            try await store.endSharing(at: time, limit: 10) { ended in
                ended.friend.map { [.sharingEnded(ended, friend: $0, at: time)] } ?? []
            }
        }
        #expect(try await announce(at: end - .milliseconds(1)).isEmpty)
        let ended = try await announce(at: end)
        #expect(ended == [EndedSharing(
            side: FriendshipSide(user: a.id, friend: b.id, since: epoch, share: .exact, until: end), fallback: .building, friend: b.summary)])
        #expect(try await announce(at: end + .seconds(1)).isEmpty, "claimed once")
        let after = try await store.friendship(of: a.id, with: b.id)
        #expect(after?.shareWithFriend == .building && after?.shareWithFriendUntil == nil)
        let told = try await store.events(for: a.id, after: nil, since: epoch, limit: 10).map(\.payload)
        #expect(told == [.sharingEnded(friend: b.summary, share: .building)])

        // A level set again without an end keeps none.
        _ = try await store.setSharing(.exact, until: end + .seconds(60), from: a.id, to: b.id)
        _ = try await store.setSharing(.none, from: a.id, to: b.id)
        #expect(try await announce(at: end + .seconds(3600)).isEmpty)
        #expect(try await store.friendship(of: a.id, with: b.id)?.shareWithFriend == ShareLevel.none)
    }

    @Test("thirty ended levels claimed by six announcers racing through two stores are each claimed, and told, exactly once",
          arguments: StoreKind.available)
    func endsClaimedOnce(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        var sharers: [Account] = []
        for index in 0..<30 {
            let sharer = try account("sharer\(index)"), friend = try account("friend\(index)")
            for person in [sharer, friend] { try await store.createAccount(person, passwordHash: someHash) }
            try await store.befriend(sharer.id, friend.id)
            _ = try await store.setSharing(.building, until: epoch + .seconds(Int64(index + 1)), from: sharer.id, to: friend.id)
            sharers.append(sharer)
        }
        let now = epoch + .seconds(3600)
        let claimed = try await withThrowingTaskGroup(of: [EndedSharing].self) { group in
            for index in 0..<6 {
                let writer = subject.store(for: index)
                group.addTask {
                    var all: [EndedSharing] = []
                    while true {
                        let batch = try await writer.endSharing(at: now, limit: 4) { ended in
                            ended.friend.map { [.sharingEnded(ended, friend: $0, at: now)] } ?? []
                        }
                        all += batch
                        if batch.isEmpty { return all }
                    }
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(claimed.count == 30)
        #expect(Set(claimed.map(\.side.user)) == Set(sharers.map(\.id)))
        for sharer in sharers {
            #expect(try await store.events(for: sharer.id, after: nil, since: epoch, limit: 10).count == 1)
        }
    }
}
