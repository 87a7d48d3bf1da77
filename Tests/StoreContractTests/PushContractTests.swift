import Foundation
import Testing
import VicinityCore
import VicinitySQL

/// An account with one session, for registering devices.
private func signedIn(_ store: any SocialStore, _ username: String) async throws -> (account: Account, session: TokenDigest) {
    let person = try account(username)
    try await store.createAccount(person, passwordHash: someHash)
    let session = try await newSession(store, of: person)
    return (person, session)
}

private func newSession(_ store: any SocialStore, of person: Account) async throws -> TokenDigest {
    let token = SessionToken.random()
    try await store.createSession(Session(digest: token.digest, userID: person.id, createdAt: epoch, expiresAt: epoch + .seconds(3600)))
    return token.digest
}

/// A browser's address as stored: stores keep what the service checked, and check nothing themselves.
private func browser(_ number: Int) -> PushTarget {
    .webPush(WebPushAddress(stored: "https://push.example.net/send/\(number)", p256dh: "key\(number)", auth: "auth\(number)"))
}

private func iPhone(_ number: Int) -> PushTarget {
    .apns(APNsAddress(stored: String(format: "%064x", number), topic: "edu.csulb.vicinity"))
}

/// The pushes waiting now, by device.
private func waitingPushes(_ store: any SocialStore) async throws -> [PushSubscriptionID: [PushNotice]] {
    let claimed = try await store.claimOutbox(at: epoch + .seconds(60), limit: 1000, rules: .standard)
    var pushes: [PushSubscriptionID: [PushNotice]] = [:]
    for message in claimed {
        guard case .push(let delivery)? = message.payload else { continue }
        pushes[delivery.device, default: []].append(delivery.notice)
    }
    return pushes
}

@Suite("Push devices and the pushes events make: store contract")
struct PushContractTests {
    @Test("a device is held by one person: registered again it keeps its id, registered by someone else it moves to them, and the limit holds however adds race",
          arguments: StoreKind.available)
    func devices(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let (ana, anaSession) = try await signedIn(store, "ana")
        let (ben, benSession) = try await signedIn(store, "ben")

        let first = try #require(try await store.addPushSubscription(
            PushSubscription(owner: ana.id, target: browser(1), session: anaSession, createdAt: epoch), limit: 3))
        let again = try #require(try await store.addPushSubscription(
            PushSubscription(owner: ana.id, target: browser(1), session: anaSession, createdAt: epoch + .seconds(5)), limit: 3))
        #expect(again.id == first.id && again.createdAt == first.createdAt, "the same device, kept")
        #expect(try await store.pushSubscriptions(of: ana.id).map(\.id) == [first.id])

        let moved = try #require(try await store.addPushSubscription(
            PushSubscription(owner: ben.id, target: browser(1), session: benSession, createdAt: epoch + .seconds(10)), limit: 3))
        #expect(moved.id != first.id && moved.owner == ben.id)
        #expect(try await store.pushSubscriptions(of: ana.id).isEmpty, "Ana's pushes no longer reach the device Ben signed in on")
        #expect(try await store.pushSubscription(first.id) == nil)

        // Eight adds of different devices race for Ana's three places.
        let anaID = ana.id
        let added = try await withThrowingTaskGroup(of: PushSubscription?.self) { group in
            for index in 0..<8 {
                group.addTask {
                    try await subject.store(for: index).addPushSubscription(
                        PushSubscription(owner: anaID, target: iPhone(index), session: anaSession, createdAt: epoch + .milliseconds(Int64(index))),
                        limit: 3)
                }
            }
            return try await group.reduce(into: [PushSubscription]()) { if let added = $1 { $0.append(added) } }
        }
        #expect(added.count == 3)
        #expect(Set(try await store.pushSubscriptions(of: ana.id).map(\.id)) == Set(added.map(\.id)))

        let stranger = SessionToken.random().digest
        #expect(try await store.addPushSubscription(
            PushSubscription(owner: ben.id, target: browser(9), session: stranger, createdAt: epoch), limit: 3) == nil,
            "a session that does not exist registers nothing")
        #expect(try await store.removePushSubscription(moved.id, of: ana.id) == false, "not Ana's")
        #expect(try await store.removePushSubscription(moved.id, of: ben.id))
        #expect(try await store.pushSubscriptions(of: ben.id).isEmpty)
    }

    @Test("an event writes one push for each of its recipient's devices unless they mute its kind, and the pushes go with their device or its session",
          arguments: StoreKind.available)
    func fanOut(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let (ana, laptop) = try await signedIn(store, "ana")
        let phone = try await newSession(store, of: ana)
        let (ben, _) = try await signedIn(store, "ben")
        let onLaptop = try #require(try await store.addPushSubscription(
            PushSubscription(owner: ana.id, target: browser(1), session: laptop, createdAt: epoch), limit: 10))
        let onPhone = try #require(try await store.addPushSubscription(
            PushSubscription(owner: ana.id, target: iPhone(1), session: phone, createdAt: epoch), limit: 10))

        let events = try await store.appendEvents([
            try poke(to: ana.id, from: ben), try poke(to: ben.id, from: ana),
            .friendAccepted(to: ana.id, friend: ben.summary, at: epoch + .seconds(1)),
        ])
        let pushes = try await waitingPushes(store)
        #expect(pushes.keys.sorted() == [onLaptop.id, onPhone.id].sorted(), "Ben has no device: nothing waits for him")
        for device in [onLaptop.id, onPhone.id] {
            #expect(pushes[device]?.map(\.event).sorted() == [events[0].id, events[2].id], "one push per device per event")
        }
        let pokeNotice = try #require(pushes[onPhone.id]?.first { $0.type == .poke })
        #expect(pokeNotice == PushNotice(events[0]), "the notice as the rule makes it, read back whole")

        #expect(try await store.setPushPreferences(PushPreferences(owner: ana.id, muted: [.poke])))
        #expect(try await store.pushPreferences(of: ana.id).muted == [.poke])
        #expect(try await store.pushPreferences(of: ben.id).muted.isEmpty, "nothing muted until chosen")
        _ = try await store.appendEvents([
            try poke(to: ana.id, number: 5, from: ben),
            .friendRequest(FriendRequest(id: .random(), from: ben.id, to: ana.id, createdAt: epoch + .seconds(2)), from: ben.summary),
        ])
        #expect(try await store.pendingOutboxCount() == 4 + 2, "the request pushes to both devices; the muted poke to none")

        // Removing a device takes its waiting pushes; ending the session that registered the other takes it and its.
        #expect(try await store.removePushSubscription(onLaptop.id, of: ana.id))
        #expect(try await store.pendingOutboxCount() == 3, "the laptop's three pushes went with it, the two claimed among them")
        try await store.deleteSession(phone)
        #expect(try await store.pushSubscription(onPhone.id) == nil)
        #expect(try await store.pendingOutboxCount() == 0)
    }

    @Test("a push to a device that is gone is dropped with the device and the other pushes waiting for it, in one settle",
          arguments: StoreKind.available)
    func gone(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let (ana, session) = try await signedIn(store, "ana")
        let (ben, _) = try await signedIn(store, "ben")
        let device = try #require(try await store.addPushSubscription(
            PushSubscription(owner: ana.id, target: browser(1), session: session, createdAt: epoch), limit: 10))
        _ = try await store.appendEvents([try poke(to: ana.id, number: 1, from: ben), try poke(to: ana.id, number: 2, from: ben)])
        var claimed = try #require(try await store.claimOutbox(at: epoch + .seconds(1), limit: 1, rules: .standard).first)
        claimed.settle(.gone(reason: "subscription gone (the push service answered 410)"), at: epoch + .seconds(2), rules: .standard)
        #expect(try await store.settleOutbox(claimed, attempt: 1, removing: device.id))
        #expect(try await store.pushSubscription(device.id) == nil)
        #expect(try await store.pendingOutboxCount() == 0, "the other push went with its device")
        #expect(try await store.claimOutbox(at: epoch + .seconds(3), limit: 10, rules: .standard).isEmpty)
    }

    @Test("a pass's outcomes are written together: those still under their claim count, one taken over since changes nothing",
          arguments: StoreKind.available)
    func batchSettle(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let (ana, session) = try await signedIn(store, "ana")
        let (ben, _) = try await signedIn(store, "ben")
        _ = try #require(try await store.addPushSubscription(
            PushSubscription(owner: ana.id, target: browser(1), session: session, createdAt: epoch), limit: 10))
        _ = try await store.appendEvents((1...3).map { number in try poke(to: ana.id, number: number, from: ben) })
        let rules = OutboxRules.standard
        let claimed = try await store.claimOutbox(at: epoch + .seconds(1), limit: 10, rules: rules)
        #expect(claimed.count == 3)
        // The third's claim lapses and another sender takes it over before this pass records its outcomes.
        let later = epoch + .seconds(1) + rules.claim + .seconds(1)
        let overtaken = try await store.claimOutbox(at: later, limit: 10, rules: rules)
        #expect(Set(overtaken.map(\.id)) == Set(claimed.map(\.id)), "every claim lapsed; all are taken again")
        var settlements = claimed.map { message in
            var sent = message
            sent.settle(.delivered, at: epoch + .seconds(2), rules: rules)
            return OutboxSettlement(sent, attempt: 1)
        }
        settlements[2].attempt = 2
        #expect(try await store.settleOutbox(settlements) == [false, false, true], "only the settle under the latest claim counts")
        #expect(try await store.pendingOutboxCount() == 2)
    }

    @Test("deleting an account deletes the pushes waiting to tell others of it, as it deletes the events about it, and its own devices and choices",
          arguments: StoreKind.available)
    func deletion(kind: StoreKind) async throws {
        let subject = try await SocialSubject(kind), store = subject.store
        defer { withExtendedLifetime(subject) {} }
        let (ana, anaSession) = try await signedIn(store, "ana")
        let (ben, benSession) = try await signedIn(store, "ben")
        _ = try #require(try await store.addPushSubscription(
            PushSubscription(owner: ana.id, target: browser(1), session: anaSession, createdAt: epoch), limit: 10))
        let bens = try #require(try await store.addPushSubscription(
            PushSubscription(owner: ben.id, target: browser(2), session: benSession, createdAt: epoch), limit: 10))
        #expect(try await store.setPushPreferences(PushPreferences(owner: ben.id, muted: [.voteResult])))
        _ = try await store.appendEvents([try poke(to: ana.id, number: 1, from: ben), try poke(to: ben.id, number: 2, from: ana)])
        #expect(try await store.pendingOutboxCount() == 2)
        #expect(try await store.deleteAccount(ben.id, at: epoch, cancel: { _ in false }, announcements: { _, _ in [] }))
        #expect(try await store.pendingOutboxCount() == 0, "Ben's poke of Ana goes with him, and so does Ana's of him")
        #expect(try await store.pushSubscription(bens.id) == nil)
        #expect(try await store.pushPreferences(of: ben.id).muted.isEmpty)
    }
}

