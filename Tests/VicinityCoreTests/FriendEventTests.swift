import Foundation
import Synchronization
import Testing
import VicinityCore

/// The in-memory store, whose appending of events on their own can be made to fail, as a database that goes
/// away (or a server killed) between two transactions does.
private final class EventsOutOfReach: Stores {
    let store = InMemoryStore()
    let eventStore: FailingEvents

    init() { eventStore = FailingEvents(store) }

    var places: InMemoryStore { store }
    var campuses: InMemoryStore { store }
    var accounts: InMemoryStore { store }
    var positions: InMemoryStore { store }
    var friends: InMemoryStore { store }
    var events: FailingEvents { eventStore }
    var votes: InMemoryStore { store }
    var changes: InMemoryStore { store }
    var outbox: InMemoryStore { store }
    var guesses: MemoryGuessingLedger { store.guesses }
    var limits: MemoryWindowLedger { store.limits }
    var streamLeases: MemoryStreamLeases { store.streamLeases }
    var devices: InMemoryStore { store }
    var push: InMemoryStore { store }
}

private final class FailingEvents: EventStore {
    let base: InMemoryStore
    let failing = Mutex(false)

    init(_ base: InMemoryStore) { self.base = base }

    func appendEvents(_ drafts: [EventDraft]) async throws -> [Event] {
        if failing.withLock({ $0 }) { throw StoreError.unavailable("events out of reach in the test") }
        return try await base.appendEvents(drafts)
    }

    func events(for recipient: UserID, after: EventID?, since: Timestamp, limit: Int) async throws -> [Event] {
        try await base.events(for: recipient, after: after, since: since, limit: limit)
    }

    func events(ids: [EventID]) async throws -> [Event] { try await base.events(ids: ids) }
    func deleteEvents(before time: Timestamp) async throws -> Int { try await base.deleteEvents(before: time) }
}

@Suite("Friend requests and their events")
struct FriendEventTests {
    private func person(_ username: String, _ services: Services<EventsOutOfReach>) async throws -> Identity {
        let request = SignUp(
            username: try Username(username), password: try Password("correct horse battery"),
            firstName: try PersonName(username.capitalized, field: "first_name"), lastName: try PersonName("Test", field: "last_name"),
            email: nil)
        _ = try await services.accounts.signUp(request, from: ClientAddress(nil))
        let signedIn = try await services.accounts.signIn(login: username, password: "correct horse battery", from: ClientAddress(nil))
        return try await services.accounts.authenticate(token: signedIn.token.text)
    }

    private func events(_ type: EventType, to user: UserID, in store: InMemoryStore) async throws -> [Event] {
        try await store.events(for: user, after: nil, since: Timestamp(millisecondsSince1970: 0), limit: 100).filter { $0.type == type }
    }

    @Test("a request, a request asked back and an accept never stand without their events, even when appending events alone fails")
    func requestsStandWithTheirEvents() async throws {
        let stores = EventsOutOfReach()
        let services = Services(stores: stores, clock: ManualClock(), hasher: hasher, settings: .standard)
        let ana = try await person("ana", services), ben = try await person("ben", services), cleo = try await person("cleo", services)
        stores.eventStore.failing.withLock { $0 = true }

        // Whatever the call answers, the request and its friend_request event are there together or not at all.
        _ = try? await services.friends.sendRequest(from: ana, to: ben.userID)
        let pending = try await stores.store.friendRequests(of: ben.userID)
        let asked = try await events(.friendRequest, to: ben.userID, in: stores.store)
        #expect(pending.count == asked.count, "a request without its event, or an event without its request")

        // Accepting: the friendship and the sender's friend_accepted event together.
        stores.eventStore.failing.withLock { $0 = false }
        let request: FriendRequest
        if let first = pending.first {
            request = first
        } else {
            guard case .pending(let view) = try await services.friends.sendRequest(from: ana, to: ben.userID) else {
                Issue.record("expected a pending request")
                return
            }
            request = view.request
        }
        stores.eventStore.failing.withLock { $0 = true }
        _ = try? await services.friends.accept(request.id, by: ben)
        let friends = try await stores.store.friendship(of: ana.userID, with: ben.userID) != nil
        let accepted = try await events(.friendAccepted, to: ana.userID, in: stores.store)
        #expect(friends == (accepted.count == 1), "a friendship without its event, or an event without the friendship")
        #expect(accepted.count <= 1)

        // Asking back someone who asked first is the friendship at once, with the first asker's event.
        stores.eventStore.failing.withLock { $0 = false }
        _ = try await services.friends.sendRequest(from: cleo, to: ana.userID)
        stores.eventStore.failing.withLock { $0 = true }
        _ = try? await services.friends.sendRequest(from: ana, to: cleo.userID)
        let crossed = try await stores.store.friendship(of: ana.userID, with: cleo.userID) != nil
        let told = try await events(.friendAccepted, to: cleo.userID, in: stores.store)
        #expect(crossed == (told.count == 1), "a friendship asked back without its event, or an event without the friendship")
    }
}
