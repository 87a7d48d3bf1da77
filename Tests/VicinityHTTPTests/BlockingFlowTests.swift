import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import VicinityCore
import VicinityHTTP

@Suite("Blocking over HTTP")
struct BlockingFlowTests {
    @Test("a blocked person can no longer find, ask or poke the blocker, and nothing they are shown tells them they are blocked")
    func blockedPerson() async throws {
        let store = try await store(csulbRows)
        try await withApp(store) { client in
            let alice = try await client.person("alice", first: "Alice", last: "Ng")
            let bob = try await client.person("bob", first: "Bob", last: "Diaz")
            let carol = try await client.person("carol", first: "Carol", last: "Ito")
            let dave = try await client.person("dave", first: "Dave", last: "Moss")
            try await client.befriend(alice, bob)

            let blocked = try await client.call(.post, "/v1/blocks", as: alice, json: #"{"user":"\#(bob.id)"}"#)
            #expect(blocked.status == .created, "\(blocked.text)")
            #expect((blocked.object?["user"] as? [String: Any])?["id"] as? String == bob.id)
            let since = try #require(blocked.object?["since"] as? String)
            let again = try await client.call(.post, "/v1/blocks", as: alice, json: #"{"user":"\#(bob.id)"}"#)
            #expect(again.status == .ok)
            #expect(again.object?["since"] as? String == since, "the first block stands")

            // The friendship ended for both; a poke reads as to anyone who is no friend.
            #expect(try await client.call(.get, "/v1/friends", as: bob).list("friends").isEmpty)
            #expect(try await client.call(.get, "/v1/friends", as: alice).list("friends").isEmpty)
            let poke = try await client.call(.post, "/v1/friends/\(alice.id)/pokes", as: bob)
            let strangerPoke = try await client.call(.post, "/v1/friends/\(dave.id)/pokes", as: bob)
            #expect(poke.status == .notFound)
            #expect(poke.text == strangerPoke.text)

            // Search: Bob no longer finds Alice; Carol still does; Alice sees whom she blocked.
            #expect(try await client.call(.get, "/v1/users?q=ali", as: bob).list("users").isEmpty)
            #expect(try await client.call(.get, "/v1/users?q=ali", as: carol).list("users").map { $0["id"] as? String } == [alice.id])
            let seen = try #require(try await client.call(.get, "/v1/users?q=bob", as: alice).list("users").first)
            #expect(seen["relationship"] as? String == "blocked")
            #expect(seen["request_id"] is NSNull)

            // Bob's request is answered as Carol's to Dave is, waits in his list, and never reaches Alice.
            let eventsBefore = try await events(of: alice, in: store).count
            let held = try await client.call(.post, "/v1/friend-requests", as: bob, json: #"{"to":"\#(alice.id)"}"#)
            let ordinary = try await client.call(.post, "/v1/friend-requests", as: carol, json: #"{"to":"\#(dave.id)"}"#)
            #expect(held.status == .created)
            #expect(held.status == ordinary.status)
            #expect(Set(held.object?.keys ?? [:].keys) == Set(ordinary.object?.keys ?? [:].keys))
            #expect(held.object?["state"] as? String == "pending")
            let heldID = try #require(held.object?["id"] as? String)
            #expect(try await client.call(.get, "/v1/friend-requests", as: bob).list("outgoing").map { $0["id"] as? String } == [heldID])
            #expect(try await client.call(.get, "/v1/friend-requests", as: alice).list("incoming").isEmpty)
            #expect(try await events(of: alice, in: store).count == eventsBefore, "no friend_request event")
            // With his request waiting, Bob finds Alice as anyone finds someone they asked: not finding her would tell.
            let asked = try await client.call(.get, "/v1/users?q=ali", as: bob).list("users")
            #expect(asked.map { $0["relationship"] as? String } == ["request_sent"])
            let twice = try await client.call(.post, "/v1/friend-requests", as: bob, json: #"{"to":"\#(alice.id)"}"#)
            let carolTwice = try await client.call(.post, "/v1/friend-requests", as: carol, json: #"{"to":"\#(dave.id)"}"#)
            #expect(twice.status == .conflict && twice.text == carolTwice.text)
            #expect(try await client.call(.post, "/v1/friend-requests/\(heldID)/accept", as: alice).status == .notFound)

            // Alice must unblock before she asks Bob herself.
            let refused = try await client.call(.post, "/v1/friend-requests", as: alice, json: #"{"to":"\#(bob.id)"}"#)
            #expect(refused.status == .conflict)
            #expect(refused.text.contains("DELETE /v1/blocks/"))

            // Alice's list and export name Bob; Bob's export says nothing of the block.
            let list = try await client.call(.get, "/v1/blocks", as: alice).list("blocks")
            #expect(list.map { ($0["user"] as? [String: Any])?["id"] as? String } == [bob.id])
            #expect(try await client.call(.get, "/v1/blocks", as: bob).list("blocks").isEmpty)
            #expect(try await client.call(.get, "/v1/me/export", as: alice).list("blocks").count == 1)
            let bobExport = try await client.call(.get, "/v1/me/export", as: bob)
            #expect(bobExport.list("blocks").isEmpty)

            // Unblocked, Bob's waiting request is an ordinary one, which Alice may accept.
            #expect(try await client.call(.delete, "/v1/blocks/\(bob.id)", as: alice).status == .noContent)
            #expect(try await client.call(.delete, "/v1/blocks/\(bob.id)", as: alice).status == .notFound)
            #expect(try await client.call(.get, "/v1/friend-requests", as: alice).list("incoming").map { $0["id"] as? String } == [heldID])
            #expect(try await client.call(.post, "/v1/friend-requests/\(heldID)/accept", as: alice).status == .ok)
            #expect(try await client.call(.get, "/v1/users?q=ali", as: bob).list("users").first?["relationship"] as? String == "friend")
        }
    }

    @Test("blocking oneself, an unknown user, a malformed id or a bad body is refused and changes nothing")
    func badBlocks() async throws {
        let store = try await store(csulbRows)
        try await withApp(store) { client in
            let alice = try await client.person("alice")
            let yourself = try await client.call(.post, "/v1/blocks", as: alice, json: #"{"user":"\#(alice.id)"}"#)
            #expect(yourself.status == .badRequest)
            #expect(yourself.text.contains("cannot be yourself"))
            let unknown = try await client.call(.post, "/v1/blocks", as: alice, json: #"{"user":"\#(UserID.random().rawValue)"}"#)
            #expect(unknown.status == .notFound)
            #expect(try await client.call(.post, "/v1/blocks", as: alice, json: #"{"user":"nobody"}"#).status == .badRequest)
            #expect(try await client.call(.post, "/v1/blocks", as: alice, json: #"{"user":1,"why":"x"}"#).status == .badRequest)
            #expect(try await client.call(.delete, "/v1/blocks/not-an-id", as: alice).status == .notFound)
            #expect(try await client.call(.post, "/v1/blocks", json: #"{"user":"\#(alice.id)"}"#).status == .unauthorized)
            #expect(try await client.call(.get, "/v1/blocks", as: alice).list("blocks").isEmpty)
        }
    }

    @Test("someone who keeps asking a person who declines is stopped after three requests in a week, and may ask again once the first leaves it")
    func repeatedRequests() async throws {
        let clock = ManualClock()
        let store = try await store(csulbRows)
        try await withApp(store, clock: clock) { client in
            let carol = try await client.person("carol")
            let dave = try await client.person("dave")
            for _ in 0..<3 {
                let asked = try await client.call(.post, "/v1/friend-requests", as: carol, json: #"{"to":"\#(dave.id)"}"#)
                #expect(asked.status == .created)
                let id = try #require(asked.object?["id"] as? String)
                #expect(try await client.call(.delete, "/v1/friend-requests/\(id)", as: dave).status == .noContent)
                clock.advance(by: .seconds(24 * 3600))
            }
            let stopped = try await client.call(.post, "/v1/friend-requests", as: carol, json: #"{"to":"\#(dave.id)"}"#)
            #expect(stopped.status == .tooManyRequests)
            // The first of the three leaves the week in 4 days.
            #expect(stopped.headers[.retryAfter] == String(4 * 24 * 3600))
            #expect(try await client.call(.get, "/v1/friend-requests", as: dave).list("incoming").isEmpty, "nothing recorded")
            // Others are not held back by Carol's requests.
            #expect(try await client.call(.post, "/v1/friend-requests", as: dave, json: #"{"to":"\#(carol.id)"}"#).status == .created)
            clock.advance(by: .seconds(4 * 24 * 3600))
            let later = try await client.call(.post, "/v1/friend-requests", as: carol, json: #"{"to":"\#(dave.id)"}"#)
            #expect(later.status == .ok, "Dave had asked meanwhile, so the two are friends")
        }
    }

    private func events(of person: Person, in store: InMemoryStore) async throws -> [Event] {
        try await store.events(for: try #require(UserID(person.id)), after: nil, since: Timestamp(millisecondsSince1970: 0), limit: 1000)
    }
}
