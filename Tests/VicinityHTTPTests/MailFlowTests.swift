import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import MailTestSupport
import Testing
import VicinityBcrypt
import VicinityCore
import VicinityHTTP
@testable import VicinityPostGIS
import VicinitySQL
import VicinityTransports

/// The mail path as people meet it: the HTTP front, the outbox, the sender running with the server, the SMTP
/// client, and a real relay on loopback (aiosmtpd) whose mail the tests read.
private struct MailedFront {
    let relay: TestRelay
    let transport: SMTPMailTransport

    init(relay: TestRelay) throws {
        self.relay = relay
        let configuration = try SMTPConfiguration(url: "smtp://127.0.0.1:\(relay.port)", tls: .disabled)
        transport = SMTPMailTransport(
            client: try SMTPClient(configuration: configuration), from: try Mailbox(parsing: "Vicinity <vicinity@example.edu>"))
    }

    /// Settings with the relay configured and addresses required; retries quick, so that a relay coming back is
    /// used within the test's patience.
    static func settings() -> ServiceSettings {
        var settings = ServiceSettings.standard
        settings.accounts.mail = MailSettings(relayConfigured: true, requireEmail: true)
        settings.votes.verifiedOnlyByDefault = true
        settings.outbox.firstRetry = .milliseconds(200)
        settings.outbox.longestRetry = .milliseconds(400)
        settings.outbox.pollInterval = .milliseconds(100)
        settings.following.behindAfter = .seconds(600)
        return settings
    }

    /// `limitKeys` as the record shares them between fronts (`RecordStore.sharedLimitKeys`), for tests of
    /// several fronts; one front's own otherwise.
    func services<S: Stores>(
        _ stores: S, settings: ServiceSettings = Self.settings(), limitKeys: LimitKeys = .random()
    ) -> Services<S> {
        Services(stores: stores, clock: SystemClock(), hasher: testHasher, mail: transport, settings: settings, limitKeys: limitKeys)
    }
}

/// The mails the relay took, once there are at least `count`: waits on the relay's folder, at most 30 s.
private func mails(_ relay: TestRelay, atLeast count: Int) async throws -> [ReceivedMail] {
    let deadline = ContinuousClock.now + .seconds(30)
    while true {
        let received = try relay.received()
        if received.count >= count || ContinuousClock.now > deadline { return received }
        // Nothing signals across the process boundary: the relay writes files.
        try await Task.sleep(for: .milliseconds(50))
    }
}

/// The six-digit code of the last mail to `address`.
private func code(_ relay: TestRelay, to address: String, mailNumber: Int) async throws -> String {
    let received = try await mails(relay, atLeast: mailNumber)
    let mail = try #require(received.last { $0.rcptTos.contains(address) }, "no mail to \(address)")
    return String(try #require(mail.body.split(separator: "\n").first { $0.count == 6 && $0.allSatisfy(\.isNumber) }))
}

@Suite("Accounts over a real mail relay", .enabled(if: RelayTools.available, RelayTools.howToInstall))
struct MailFlowTests {
    @Test("sign up with an address, confirm its code, sign in by code, reset the password, export, and delete")
    func wholeLife() async throws {
        let relay = try await TestRelay()
        let front = try MailedFront(relay: relay)
        let store = InMemoryStore()
        let app = buildApplication(services: front.services(store), port: 0, metrics: sharedRegistry, logger: LogRecorder().logger)
        try await app.test(.live) { client in
            let missing = try await client.call(.post, "/v1/users", json: #"{"username":"nok","password":"\#(testPassword)","first_name":"Nok","last_name":"Test"}"#)
            #expect(missing.status == .badRequest && missing.text.contains("email"), "an address is required")
            let signUp = try await client.call(.post, "/v1/users", json: """
                {"username":"nok","password":"\(testPassword)","first_name":"Nok","last_name":"Test","email":"Nok@student.csulb.edu"}
                """)
            #expect(signUp.status == .created, "\(signUp.text)")
            #expect(signUp.object?["email"] is NSNull && signUp.object?["pending_email"] as? String == "Nok@student.csulb.edu")
            let first = try await code(relay, to: "Nok@student.csulb.edu", mailNumber: 1)
            let mail = try #require(try relay.received().first)
            #expect(mail.fromAddress == "vicinity@example.edu" && mail.subject?.contains(first) == true)
            #expect(mail.headers.contains { $0.name == "Message-ID" } && mail.headers.contains { $0.name == "Date" })

            let session = try await client.call(.post, "/v1/sessions", json: #"{"username":"nok","password":"\#(testPassword)"}"#)
            let nok = Person(id: "", username: "nok", token: try #require(session.object?["token"] as? String))
            let wrong = try await client.call(.post, "/v1/me/email-verification/confirm", as: nok, json: #"{"code":"\#(first == "000000" ? "000001" : "000000")"}"#)
            #expect(wrong.status == .forbidden)
            let confirmed = try await client.call(.post, "/v1/me/email-verification/confirm", as: nok, json: #"{"code":"\#(first)"}"#)
            #expect(confirmed.status == .ok && confirmed.object?["email_verified"] as? Bool == true, "\(confirmed.text)")

            // Forgot the password: a code by mail, then a new password without the old one.
            let asked = try await client.call(.post, "/v1/sign-in-codes", json: #"{"email":"nok@STUDENT.csulb.edu"}"#)
            #expect(asked.status == .accepted)
            let signInCode = try await code(relay, to: "Nok@student.csulb.edu", mailNumber: 2)
            let byCode = try await client.call(.post, "/v1/sessions", json: #"{"email":"nok@student.csulb.edu","code":"\#(signInCode)"}"#)
            #expect(byCode.status == .created, "\(byCode.text)")
            let reset = Person(id: "", username: "nok", token: try #require(byCode.object?["token"] as? String))
            let newPassword = try await client.call(.put, "/v1/me/password", as: reset, json: #"{"password":"a brand new passphrase"}"#)
            #expect(newPassword.status == .ok, "\(newPassword.text)")
            #expect(try await client.call(.get, "/v1/me", as: nok).status == .unauthorized, "the other session ended")
            #expect(try await client.call(.post, "/v1/sessions", json: #"{"email":"nok@student.csulb.edu","password":"\#(testPassword)"}"#).status == .unauthorized)
            #expect(try await client.call(.post, "/v1/sessions", json: #"{"email":"nok@student.csulb.edu","password":"a brand new passphrase"}"#).status == .created)

            let export = try await client.call(.get, "/v1/me/export", as: reset)
            #expect(export.status == .ok && (export.object?["account"] as? [String: Any])?["username"] as? String == "nok")
            #expect(export.headers[.contentDisposition]?.contains("attachment") == true)

            let deleted = try await client.call(.delete, "/v1/me", as: reset, json: "{}")
            #expect(deleted.status == .noContent, "\(deleted.text)")
            #expect(try await client.call(.get, "/v1/me", as: reset).status == .unauthorized)
            #expect(try await client.call(.post, "/v1/sessions", json: #"{"email":"nok@student.csulb.edu","password":"a brand new passphrase"}"#).status == .unauthorized)
        }
        #expect(try relay.received().count == 2, "one mail per code, none twice")
    }

    @Test("with the relay down for a while, the code arrives once it is back, once")
    func relayDown() async throws {
        let relay = try await TestRelay()
        let port = relay.port, folder = relay.folder
        relay.removesFolder = false
        let front = try MailedFront(relay: relay)
        relay.stop()
        let app = buildApplication(services: front.services(InMemoryStore()), port: 0, metrics: sharedRegistry, logger: LogRecorder().logger)
        try await app.test(.live) { client in
            let signUp = try await client.call(.post, "/v1/users", json: """
                {"username":"pim","password":"\(testPassword)","first_name":"Pim","last_name":"Test","email":"pim@student.csulb.edu"}
                """)
            #expect(signUp.status == .created, "a request that mails answers once the message is recorded, relay or not")
            // Tries meet a closed port for a while.
            try await Task.sleep(for: .seconds(1))
            let back = try await TestRelay(port: port, folder: folder)
            let received = try await mails(back, atLeast: 1)
            #expect(received.count == 1 && received.first?.rcptTos == ["pim@student.csulb.edu"])
            // And no second copy comes later.
            try await Task.sleep(for: .seconds(1))
            #expect(try back.received().count == 1)
        }
        try? FileManager.default.removeItem(at: folder)
    }

    @Test("a sign-in code asked for an unknown, an unverified and a verified address gets the same status and body; only the verified one is mailed")
    func noEnumeration() async throws {
        let relay = try await TestRelay()
        let front = try MailedFront(relay: relay)
        var settings = MailedFront.settings()
        settings.accounts.codes.sendsPerAddress = RateLimit(limit: 1000, window: .seconds(3600))
        settings.accounts.codes.sendsPerAccount = RateLimit(limit: 1000, window: .seconds(3600))
        settings.accounts.codes.sendsFromClient = RateLimit(limit: 1000, window: .seconds(3600))
        let store = InMemoryStore()
        let services = front.services(store, settings: settings)
        // A verified address, and one waiting for its code.
        _ = try await services.accounts.signUp(
            SignUp(username: try Username("known"), password: try Password(testPassword), firstName: try PersonName("Known", field: "first_name"),
                   lastName: try PersonName("Test", field: "last_name"), email: try Email("known@csulb.edu")), from: ClientAddress(nil))
        let knownCredentials = try #require(try await store.credentials(usernameKey: "known"))
        var known = try #require(try await store.storedAccount(id: knownCredentials.account.id))
        known.account.email = try Email("known@csulb.edu")
        known.account.pendingEmail = nil
        _ = try await store.updateAccount(known, ending: .none)
        _ = try await services.accounts.signUp(
            SignUp(username: try Username("waiting"), password: try Password(testPassword), firstName: try PersonName("Wait", field: "first_name"),
                   lastName: try PersonName("Test", field: "last_name"), email: try Email("waiting@csulb.edu")), from: ClientAddress(nil))
        let app = buildApplication(services: services, port: 0, metrics: sharedRegistry, logger: LogRecorder().logger)
        try await app.test(.live) { client in
            let addresses = ["known@csulb.edu", "nobody@csulb.edu", "waiting@csulb.edu"]
            var answers: Set<String> = []
            for _ in 0..<15 {
                for address in addresses {
                    let response = try await client.call(.post, "/v1/sign-in-codes", json: #"{"email":"\#(address)"}"#)
                    answers.insert("\(response.status.code) \(response.text)")
                }
            }
            #expect(answers.count == 1, "one status and body for all: \(answers)")
            // Time is not asserted here (tests share the machine): the request records one message whatever the
            // address, and the address is looked up by the sender later, off the request's path.
            // Wrong passwords for a known and an unknown address read alike too.
            let unknown = try await client.call(.post, "/v1/sessions", json: #"{"email":"nobody@csulb.edu","password":"wrong password"}"#)
            let wrong = try await client.call(.post, "/v1/sessions", json: #"{"email":"known@csulb.edu","password":"wrong password"}"#)
            #expect(unknown.status == .unauthorized && wrong.status == .unauthorized && unknown.text == wrong.text)
            // 15 codes reach the verified address, none the others (beyond the waiting one's own sign-up code).
            let received = try await mails(relay, atLeast: 16)
            try await Task.sleep(for: .milliseconds(500))
            let all = try relay.received()
            #expect(all.filter { $0.rcptTos == ["known@csulb.edu"] }.count == 16 && all.filter { $0.rcptTos == ["waiting@csulb.edu"] }.count == 1,
                    "\(received.map(\.rcptTos))")
            #expect(!all.contains { $0.rcptTos == ["nobody@csulb.edu"] })
        }
    }

    @Test("a wrong password for a verified, a waiting and an unknown address takes as long, and so does asking a code for each: no difference near a password check's time")
    func sameTiming() async throws {
        let relay = try await TestRelay()
        let front = try MailedFront(relay: relay)
        var settings = MailedFront.settings()
        // Enough room that no answer here is slowed or refused by the limits, which count alike anyway.
        settings.accounts.codes.sendsPerAddress = RateLimit(limit: 1000, window: .seconds(3600))
        settings.accounts.codes.sendsFromClient = RateLimit(limit: 1000, window: .seconds(3600))
        settings.accounts.signIn.failuresBeforeSlowdown = 1000
        settings.accounts.signIn.failuresPerLock = 1000
        settings.accounts.signIn.failuresPerAddress = RateLimit(limit: 1000, window: .seconds(3600))
        // The service's least cost, so that a check skipped for an unknown address would show.
        let hasher = BcryptHasher(cost: try BcryptCost(Int(BcryptCost.minimum)))
        let store = InMemoryStore()
        let services = Services(stores: store, clock: SystemClock(), hasher: hasher, mail: front.transport, settings: settings)
        for (username, address) in [("known", "known@csulb.edu"), ("waiting", "waiting@csulb.edu")] {
            _ = try await services.accounts.signUp(
                SignUp(username: try Username(username), password: try Password(testPassword), firstName: try PersonName("Timed", field: "first_name"),
                       lastName: try PersonName("Test", field: "last_name"), email: try Email(address)), from: ClientAddress(nil))
        }
        let knownCredentials = try #require(try await store.credentials(usernameKey: "known"))
        var known = try #require(try await store.storedAccount(id: knownCredentials.account.id))
        known.account.email = known.account.pendingEmail
        known.account.pendingEmail = nil
        _ = try await store.updateAccount(known, ending: .none)
        // One password check at that cost, timed here, in this run: the difference a skipped check would make.
        let hash = try await hasher.hash(try Password(testPassword))
        var checks: [Duration] = []
        for _ in 0..<5 {
            let started = ContinuousClock.now
            _ = try await hasher.verify("wrong password", against: hash)
            checks.append(ContinuousClock.now - started)
        }
        let check = checks.sorted()[2]

        let app = buildApplication(services: services, port: 0, metrics: sharedRegistry, logger: LogRecorder().logger)
        try await app.test(.live) { client in
            let addresses = ["known@csulb.edu", "waiting@csulb.edu", "nobody@csulb.edu"]
            for (path, body) in [("/v1/sessions", #""password":"wrong password""#), ("/v1/sign-in-codes", "")] {
                var times: [String: [Duration]] = [:]
                // Interleaved, so that whatever else the machine does falls on every address alike.
                for _ in 0..<15 {
                    for address in addresses {
                        let started = ContinuousClock.now
                        _ = try await client.call(.post, path, json: #"{"email":"\#(address)"\#(body.isEmpty ? "" : ",")\#(body)}"#)
                        times[address, default: []].append(ContinuousClock.now - started)
                    }
                }
                let medians = addresses.map { times[$0, default: []].sorted()[7] }
                let spread = (medians.max() ?? .zero) - (medians.min() ?? .zero)
                #expect(spread < check / 2, "\(path): medians \(medians) for \(addresses), a password check takes \(check)")
            }
        }
    }
}

private let postgresURL = testPostgresURL

@Suite("Mail with two fronts over one PostGIS database", .enabled(if: postgresURL != nil && RelayTools.available, "needs PostgreSQL and aiosmtpd: run Scripts/test.sh"))
struct TwoFrontMailTests {
    @Test("both fronts send: each message leaves once, and the limits on codes are counted together")
    func oncePerMessage() async throws {
        let relay = try await TestRelay()
        let front = try MailedFront(relay: relay)
        let url = try #require(postgresURL)
        let configuration = try testPostGISConfiguration(url, schemaPrefix: "mail", maximumConnections: 4)
        try await PostGISStore.withStore(configuration, logger: Logger(label: "front a")) { first in
            try await PostGISStore.withStore(configuration, logger: Logger(label: "front b")) { second in
                let keys = try await first.sharedLimitKeys()
                let a = buildApplication(
                    services: front.services(first, limitKeys: keys), port: 0, metrics: sharedRegistry, logger: LogRecorder().logger)
                let b = buildApplication(
                    services: front.services(second, limitKeys: try await second.sharedLimitKeys()), port: 0,
                    metrics: sharedRegistry, logger: LogRecorder().logger)
                try await a.test(.live) { clientA in
                    try await b.test(.live) { clientB in
                        for index in 0..<6 {
                            let client = index % 2 == 0 ? clientA : clientB
                            let signUp = try await client.call(.post, "/v1/users", json: """
                                {"username":"student\(index)","password":"\(testPassword)","first_name":"S","last_name":"\(index)","email":"s\(index)@csulb.edu"}
                                """)
                            #expect(signUp.status == .created, "\(signUp.text)")
                        }
                        // Five codes an hour to one address, counted across both fronts.
                        var statuses: [Int] = []
                        for index in 0..<6 {
                            let client = index % 2 == 0 ? clientA : clientB
                            statuses.append(try await client.call(.post, "/v1/sign-in-codes", json: #"{"email":"shared@csulb.edu"}"#).status.code)
                        }
                        #expect(statuses == [202, 202, 202, 202, 202, 429])
                        let received = try await mails(relay, atLeast: 6)
                        try await Task.sleep(for: .seconds(1))
                        #expect(try relay.received().count == 6, "one mail per sign-up, whichever front sent it: \(received.map(\.rcptTos))")
                        #expect(Set(try relay.received().flatMap(\.rcptTos)) == Set((0..<6).map { "s\($0)@csulb.edu" }))
                    }
                }
                try await first.dropSchema()
            }
        }
    }
}
