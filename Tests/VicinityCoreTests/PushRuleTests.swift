import Foundation
import Testing
import VicinityCore

private let now = Timestamp(millisecondsSince1970: 1_795_338_000_000)

private func person(_ first: String) throws -> UserSummary {
    UserSummary(
        id: .random(), username: try Username(first.lowercased()), firstName: try PersonName(first, field: "first_name"),
        lastName: try PersonName("Test", field: "last_name"))
}

/// A finished vote's event with everything a result carries: options, tally, winners, the reader's own ballot.
private func resultEvent(to recipient: UserID, vote: VoteID) -> Event {
    let outcome = VoteOutcome(
        options: ["Pyramid lawn", "Library steps"], tally: [7, 3], winners: [0], participants: 10, ballotsCast: 10,
        ballotsCounted: 10, ballotsVoided: 0, settlement: nil, yourBallot: nil)
    return Event(id: EventID(41), draft: EventDraft(
        recipient: recipient,
        payload: .voteFinished(VoteFinishedNotice(
            vote: vote, subject: "Where to meet", reason: .allVoted, ballotsCast: 10, participants: 10, outcome: outcome)),
        createdAt: now))
}

private func device(of owner: UserID, _ number: Int) -> PushSubscription {
    PushSubscription(
        owner: owner, target: .apns(APNsAddress(stored: String(format: "%064x", number), topic: "edu.csulb.vicinity")),
        session: SessionToken.random().digest, createdAt: now)
}

@Suite("What pushes say and whom they reach")
struct PushRuleTests {
    @Test("a vote's result is pushed as being out, with the page to read it, and nothing of its tally, options or winners")
    func resultSaysOnlyThatItIsOut() throws {
        let vote = VoteID.random()
        let notice = PushNotice(resultEvent(to: .random(), vote: vote))
        #expect(notice.body == "The result of “Where to meet” is out.")
        #expect(notice.url == "/#votes/\(vote)" && notice.tag == "vote-\(vote)" && notice.event == EventID(41))
        // The words only: the url and tag hold the vote's random id, whose letters and digits prove nothing.
        let said = [notice.title, notice.body].joined(separator: " ")
        for hidden in ["Pyramid", "Library", "7", "3"] { #expect(!said.contains(hidden), "\(hidden) in \(said)") }
    }

    @Test("pokes, requests, acceptances, conflicts and cancellations each say who or what, and name no place")
    func eachKind() throws {
        let ana = try person("Ana"), vote = VoteID.random()
        let events: [(EventPayload, String)] = [
            (.poke(from: ana), "Ana Test poked you."),
            (.friendRequest(.random(), from: ana), "Ana Test asks to be your friend."),
            (.friendAccepted(friend: ana), "Ana Test accepted your friend request."),
            (.voteConflict(VoteConflictNotice(vote: vote, subject: "Lunch", conflicts: [NameCount(name: "Ana Test", ballots: 2)], settlingUntil: now + .seconds(600))),
             "Some ballots of “Lunch” are under names that read the same: settle them to publish the result."),
            (.voteCancelled(VoteCountNotice(vote: vote, subject: "Lunch", ballotsCast: 2, participants: 5)), "“Lunch” was called off."),
        ]
        for (number, (payload, body)) in events.enumerated() {
            let event = Event(id: EventID(Int64(number + 1)), draft: EventDraft(recipient: .random(), payload: payload, createdAt: now))
            #expect(PushNotice(event).body == body)
            #expect(PushNotice(event).type == event.type)
        }
    }

    @Test("each event reaches every device of its recipient, none of anyone else's, and none when its kind is muted; a poke is worth an hour, a conflict its settling")
    func fanOut() throws {
        let ana = UserID.random(), ben = UserID.random(), poker = try person("Cam")
        let devices = [device(of: ana, 1), device(of: ana, 2), device(of: ben, 3)]
        let poke = Event(id: EventID(1), draft: .poke(to: ana, from: poker, at: now))
        let toBen = Event(id: EventID(2), draft: .poke(to: ben, from: poker, at: now))
        let result = resultEvent(to: ana, vote: .random())
        let messages = PushFanOut.messages(for: [poke, toBen, result], devices: devices, preferences: [PushPreferences(owner: ben, muted: [.poke])])
        let pushes = messages.compactMap { message -> (OutboxMessage, PushDelivery)? in
            guard case .push(let delivery)? = message.payload else { return nil }
            return (message, delivery)
        }
        #expect(pushes.count == 4, "two events for Ana's two devices; Ben muted pokes")
        #expect(pushes.allSatisfy { $0.0.account == ana && [devices[0].id, devices[1].id].contains($0.1.device) })
        #expect(pushes.allSatisfy { $0.1.kind == .apns && $0.0.state == .pending && $0.0.createdAt == now })
        #expect(pushes.filter { $0.1.notice.type == .poke }.allSatisfy { $0.0.expiresAt == now + .seconds(3600) })
        #expect(pushes.filter { $0.1.notice.type == .voteFinished }.allSatisfy { $0.0.expiresAt == now + EventRules.standard.retention })
        #expect(PushFanOut.messages(for: [poke], devices: [], preferences: []).isEmpty)

        let until = now + .seconds(900)
        let conflict = Event(id: EventID(3), draft: EventDraft(
            recipient: ana, payload: .voteConflict(VoteConflictNotice(vote: .random(), subject: "Lunch", conflicts: [], settlingUntil: until)),
            createdAt: now))
        #expect(PushFanOut.expiry(of: conflict) == until)
    }

    @Test("the standard outbox rules' claim outlasts a whole pass of deliveries that each take their deadline")
    func claimCoversAPass() {
        #expect(OutboxRules.standard.coversAPass)
        var tooShort = OutboxRules.standard
        tooShort.claim = tooShort.deliveryDeadline * 3
        #expect(!tooShort.coversAPass, "four rounds of 16 make a pass of 64")
    }

    @Test("a browser's subscription is taken only with an https endpoint on a public host, a P-256 key and a 16-byte secret; an APNs token only in hexadecimal")
    func addresses() throws {
        let key = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
        let auth = "BTBZMqHH6r4Tts7J_aSIgg"
        #expect(try WebPushAddress(endpoint: "https://fcm.googleapis.com/fcm/send/abc", p256dh: key, auth: auth, allowHTTP: false).service == "fcm.googleapis.com")
        #expect(throws: ServiceError.invalid("endpoint", "must be an https URL")) {
            try WebPushAddress(endpoint: "http://push.example.net/1", p256dh: key, auth: auth, allowHTTP: false)
        }
        #expect(try WebPushAddress(endpoint: "http://127.0.0.1:9/1", p256dh: key, auth: auth, allowHTTP: true).endpoint == "http://127.0.0.1:9/1")
        for host in ["127.0.0.1", "10.0.0.7", "[::1]", "localhost", "printer.local", "router.lan", "db.internal", "0x7f.1", "nas.home.arpa", "intranet"] {
            #expect(throws: ServiceError.self, "\(host)") {
                try WebPushAddress(endpoint: "https://\(host)/push/1", p256dh: key, auth: auth, allowHTTP: false)
            }
        }
        #expect(try WebPushAddress(endpoint: "https://push.example.cafe/1", p256dh: key, auth: auth, allowHTTP: false).service == "push.example.cafe")
        for bad in ["https://user:pw@push.example.net/1", "https://push.example.net/1#here"] {
            #expect(throws: ServiceError.self, "\(bad)") { try WebPushAddress(endpoint: bad, p256dh: key, auth: auth, allowHTTP: false) }
        }
        #expect(throws: ServiceError.self) { try WebPushAddress(endpoint: "https://p.example/1", p256dh: String(key.dropLast(2)), auth: auth, allowHTTP: false) }
        #expect(throws: ServiceError.self) { try WebPushAddress(endpoint: "https://p.example/1", p256dh: key, auth: "c2hvcnQ", allowHTTP: false) }
        #expect(throws: ServiceError.self) {
            try WebPushAddress(endpoint: "https://p.example/" + String(repeating: "a", count: 2048), p256dh: key, auth: auth, allowHTTP: false)
        }
        #expect(try APNsAddress(token: String(repeating: "AB", count: 32), topic: "edu.csulb.vicinity").token == String(repeating: "ab", count: 32))
        #expect(throws: ServiceError.self) { try APNsAddress(token: String(repeating: "g", count: 64), topic: "edu.csulb.vicinity") }
        #expect(throws: ServiceError.self) { try APNsAddress(token: String(repeating: "a", count: 63), topic: "edu.csulb.vicinity") }
        #expect(throws: ServiceError.self) { try APNsAddress(token: String(repeating: "a", count: 64), topic: "edu csulb") }
    }
}

@Suite("Base64URL")
struct Base64URLTests {
    @Test("every length from 0 to 70 bytes round-trips and matches Foundation's base64 with the URL alphabet and no padding; non-canonical text is refused")
    func matchesFoundation() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let expected = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(Base64URL.encode(bytes) == expected)
            #expect(Base64URL.decode(expected) == bytes)
        }
        for bad in ["A", "AB==", "AB+/", "AB/c", "AB c", "AR", "AAB", "ä"] { #expect(Base64URL.decode(bad) == nil, "\(bad)") }
        #expect(Base64URL.decode("AQ") == [1] && Base64URL.decode("AAE") == [0, 1] && Base64URL.decode("") == [])
    }
}
