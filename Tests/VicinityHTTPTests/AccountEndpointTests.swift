import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import VicinityCore
import VicinityHTTP

@Suite("Request bodies, read in one place")
struct RequestBodyTests {
    @Test("a sign-up with every member wrong names every bad member, unknown ones included, and creates nothing")
    func everyBadMember() async throws {
        let store = InMemoryStore()
        try await withApp(store) { client in
            let response = try await client.call(.post, "/v1/users", json: """
                {"username":"_x","password":"short","first_name":"  ","last_name":7,"email":"nope","admin":true}
                """)
            #expect(response.status == .badRequest)
            #expect(response.headers[.contentType] == "application/problem+json")
            let problem: ProblemWire = try response.decoded()
            #expect(problem.fields == ["username", "password", "first_name", "last_name", "email", "admin"])
            #expect(problem.errors?.first { $0.field == "last_name" }?.message == "must be a string")
            #expect(problem.errors?.first { $0.field == "admin" }?.message == "is not a field of this request")
            let missing: ProblemWire = try await client.call(.post, "/v1/users", json: #"{"username":null}"#).decoded()
            #expect(missing.errors?.allSatisfy { $0.message == "is required" } == true)
            #expect(missing.fields == ["username", "first_name", "last_name"], "a password may be left out for an address")
        }
        #expect(try await store.accountCount() == 0)
    }

    @Test("a body must be JSON (415), at most 64 KiB (413), valid and an object (400)")
    func bodyShape() async throws {
        try await withApp(InMemoryStore()) { client in
            let valid = #"{"username":"alice","password":"correct horse battery","first_name":"A","last_name":"B"}"#
            let form = try await client.call(.post, "/v1/users", json: valid, headers: [.contentType: "application/x-www-form-urlencoded"])
            #expect(form.status == .unsupportedMediaType)
            #expect(form.headers[.contentType] == "application/problem+json")
            let none = try await client.execute(uri: "/v1/users", method: .post, body: ByteBuffer(string: valid))
            #expect(none.status == .unsupportedMediaType)
            let charset = try await client.call(.post, "/v1/users", json: valid, headers: [.contentType: "Application/JSON; charset=utf-8"])
            #expect(charset.status == .created)

            let huge = #"{"username":"bob","password":"correct horse battery","first_name":"A","last_name":""# + String(repeating: "b", count: 70_000) + #""}"#
            #expect(try await client.call(.post, "/v1/users", json: huge).status == .contentTooLarge)

            for (body, message) in [
                ("", "is required: a JSON object"), ("{\"username\":", "is not valid JSON"), ("[1,2]", "must be a JSON object"),
                ("\"text\"", "must be a JSON object"), ("{} {}", "is not valid JSON"),
            ] {
                let problem: ProblemWire = try await client.call(.post, "/v1/users", json: body).decoded()
                #expect(problem.status == 400, "\(body)")
                #expect(problem.fields == ["body"], "\(body)")
                #expect(problem.errors?.first?.message.hasPrefix(message) == true, "\(body): \(problem.errors ?? [])")
            }
        }
    }

    @Test("position bodies: lat and lon required and in range, accuracy and status checked, null status is none")
    func positionBody() async throws {
        try await withApp(try await store(csulbRows)) { client in
            let alice = try await client.person("alice")
            let bad: ProblemWire = try await client.call(
                .put, "/v1/me/position", as: alice,
                json: #"{"lat":91,"lon":"east","accuracy_m":-1,"status":"\#(String(repeating: "x", count: 141))"}"#
            ).decoded()
            #expect(bad.fields == ["lat", "lon", "accuracy_m", "status"])
            #expect(try await client.call(.get, "/v1/me/position", as: alice).status == .notFound, "nothing was stored")
            let nullStatus = try await client.call(
                .put, "/v1/me/position", as: alice, json: #"{"lat":33.779842,"lon":-118.112526,"status":null,"accuracy_m":null}"#)
            #expect(nullStatus.status == .ok)
            #expect(nullStatus.object?["status"] is NSNull)
        }
    }

    @Test("PATCH /v1/me changes only what it names, removes the e-mail with null and refuses null elsewhere")
    func patchMe() async throws {
        // A relay configured, none running: the code for a new address waits in the outbox.
        var settings = ServiceSettings.standard
        settings.accounts.mail = MailSettings(relayConfigured: true, requireEmail: false)
        try await withApp(InMemoryStore(), settings: settings) { client in
            let alice = try await client.person("alice", first: "Alice", last: "Ng")
            let email = try await client.call(.patch, "/v1/me", as: alice, json: #"{"email":"alice@csulb.edu","last_name":" Nguyễn "}"#)
            #expect(email.status == .ok)
            #expect(email.object?["pending_email"] as? String == "alice@csulb.edu" && email.object?["email"] is NSNull,
                    "the address waits for its code")
            #expect(email.object?["last_name"] as? String == "Nguyễn")
            #expect(email.object?["first_name"] as? String == "Alice")
            let removed = try await client.call(.patch, "/v1/me", as: alice, json: #"{"email":null}"#)
            #expect(removed.object?["email"] is NSNull && removed.object?["pending_email"] is NSNull)
            let nulls: ProblemWire = try await client.call(
                .patch, "/v1/me", as: alice, json: #"{"privacy_mode":null,"first_name":null,"username":"other"}"#
            ).decoded()
            #expect(nulls.fields == ["first_name", "privacy_mode", "username"])
            #expect(try await client.call(.get, "/v1/me", as: alice).object?["privacy_mode"] as? Bool == false)
            let lonely: ProblemWire = try await client.call(.patch, "/v1/me", as: alice, json: #"{"current_password":"x"}"#).decoded()
            #expect(lonely.fields == ["current_password"])
        }
    }
}

@Suite("Signing in and out")
struct AuthenticationTests {
    @Test("signed-in operations answer 401 with a Bearer challenge to no token, a malformed one and an unknown one")
    func unauthenticated() async throws {
        try await withApp(InMemoryStore()) { client in
            let none = try await client.call(.get, "/v1/me")
            #expect(none.status == .unauthorized)
            #expect(none.headers[.wwwAuthenticate] == #"Bearer realm="vicinity""#)
            for header in ["Bearer", "Basic YWxpY2U6c2VjcmV0", "Bearer not-a-token", "Bearer " + SessionToken.random().text] {
                let response = try await client.execute(uri: "/v1/me", method: .get, headers: [.authorization: header])
                #expect(response.status == .unauthorized, "\(header)")
                #expect(response.headers[.wwwAuthenticate] == #"Bearer realm="vicinity", error="invalid_token""#)
            }
            // HEAD of a signed-in GET is checked the same way.
            #expect(try await client.call(.head, "/v1/friends").status == .unauthorized)
            // Guests' operations ignore a token, even a bad one.
            let guest = try await client.execute(
                uri: "/v1/distance?from=0,0&to=0,1", method: .get, headers: [.authorization: "Bearer nonsense"])
            #expect(guest.status == .ok)
        }
    }

    @Test("a token works for its lifetime, then 401; signing in answers 201 with the token, no-store")
    func lifetime() async throws {
        let clock = ManualClock()
        try await withApp(InMemoryStore(), clock: clock) { client in
            _ = try await client.call(.post, "/v1/users", json: #"{"username":"alice","password":"\#(testPassword)","first_name":"A","last_name":"B"}"#)
            let signIn = try await client.call(.post, "/v1/sessions", json: #"{"username":"ALICE","password":"\#(testPassword)"}"#)
            #expect(signIn.status == .created)
            #expect(signIn.headers[.cacheControl] == "no-store")
            #expect(signIn.object?["expires_at"] as? String == (clock.now + .seconds(30 * 24 * 3600)).rfc3339)
            #expect((signIn.object?["user"] as? [String: Any])?["username"] as? String == "alice")
            let token = try #require(signIn.object?["token"] as? String)
            let alice = Person(id: "", username: "alice", token: token)
            #expect(try await client.call(.get, "/v1/me", as: alice).status == .ok)
            clock.advance(by: .seconds(30 * 24 * 3600))
            #expect(try await client.call(.get, "/v1/me", as: alice).status == .unauthorized)
        }
    }

    @Test("wrong passwords are slowed, then locked out with 429 and Retry-After, the right password included")
    func lockout() async throws {
        let clock = ManualClock()
        try await withApp(InMemoryStore(), clock: clock) { client in
            _ = try await client.person("alice")
            var statuses: [HTTPResponse.Status] = []
            for _ in 0..<5 {
                statuses.append(try await client.call(.post, "/v1/sessions", json: #"{"username":"alice","password":"guess1234"}"#).status)
            }
            #expect(statuses == Array(repeating: .unauthorized, count: 5))
            #expect(clock.sleeps == [.seconds(1), .seconds(2)])
            let locked = try await client.call(.post, "/v1/sessions", json: #"{"username":"alice","password":"\#(testPassword)"}"#)
            #expect(locked.status == .tooManyRequests)
            #expect(locked.headers[.retryAfter] == "900", "15 minutes from the 5th failure")
            // Unknown usernames answer exactly as wrong passwords do.
            let unknown = try await client.call(.post, "/v1/sessions", json: #"{"username":"nobody","password":"guess1234"}"#)
            let wrong = try await client.call(.post, "/v1/sessions", json: #"{"username":"bob","password":"guess1234"}"#)
            #expect(unknown.status == .unauthorized && unknown.text == wrong.text)
            clock.advance(by: .seconds(900))
            #expect(try await client.call(.post, "/v1/sessions", json: #"{"username":"alice","password":"\#(testPassword)"}"#).status == .created)
        }
    }

    @Test("a classroom of 50 signs up and in at once from one address")
    func classroom() async throws {
        try await withApp(InMemoryStore()) { client in
            let statuses = try await withThrowingTaskGroup(of: [HTTPResponse.Status].self) { group in
                for student in 0..<50 {
                    group.addTask {
                        let up = try await client.call(.post, "/v1/users", json: """
                            {"username":"student\(student)","password":"\(testPassword)","first_name":"S","last_name":"\(student)"}
                            """)
                        let inside = try await client.call(.post, "/v1/sessions", json: #"{"username":"student\#(student)","password":"\#(testPassword)"}"#)
                        return [up.status, inside.status]
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(statuses.count == 100)
            #expect(statuses.allSatisfy { $0 == .created })
        }
    }

    @Test("changing the password needs the current one (403 otherwise) and signs out every other device")
    func passwordChange() async throws {
        try await withApp(InMemoryStore()) { client in
            let phone = try await client.person("alice")
            let laptopSignIn = try await client.call(.post, "/v1/sessions", json: #"{"username":"alice","password":"\#(testPassword)"}"#)
            let laptop = Person(id: phone.id, username: "alice", token: try #require(laptopSignIn.object?["token"] as? String))
            let wrong = try await client.call(.patch, "/v1/me", as: phone, json: #"{"password":"new password 1","current_password":"guess"}"#)
            #expect(wrong.status == .forbidden)
            let changed = try await client.call(
                .patch, "/v1/me", as: phone, json: #"{"password":"new password 1","current_password":"\#(testPassword)"}"#)
            #expect(changed.status == .ok)
            #expect(try await client.call(.get, "/v1/me", as: phone).status == .ok)
            #expect(try await client.call(.get, "/v1/me", as: laptop).status == .unauthorized)
            #expect(try await client.call(.post, "/v1/sessions", json: #"{"username":"alice","password":"new password 1"}"#).status == .created)
        }
    }

    @Test("usernames are unique ignoring case: 409")
    func duplicateUsername() async throws {
        try await withApp(InMemoryStore()) { client in
            _ = try await client.person("Alice")
            let again = try await client.call(.post, "/v1/users", json: #"{"username":"aLICE","password":"\#(testPassword)","first_name":"A","last_name":"B"}"#)
            #expect(again.status == .conflict)
            #expect(try again.decoded(as: ProblemWire.self).detail == "This username is taken.")
        }
    }

    @Test("pokes are limited per friend: the fourth in ten minutes is 429 with Retry-After")
    func pokeLimit() async throws {
        try await withApp(InMemoryStore()) { client in
            let anna = try await client.person("anna")
            let ben = try await client.person("ben")
            try await client.befriend(anna, ben)
            for _ in 0..<3 { #expect(try await client.call(.post, "/v1/friends/\(ben.id)/pokes", as: anna).status == .created) }
            let limited = try await client.call(.post, "/v1/friends/\(ben.id)/pokes", as: anna)
            #expect(limited.status == .tooManyRequests)
            #expect(limited.headers[.retryAfter] == "600")
            #expect(try await client.call(.post, "/v1/friends/\(anna.id)/pokes", as: ben).status == .created)
        }
    }

    @Test("a wrong method on a friend route is 405 naming what the literal path answers")
    func methodNotAllowed() async throws {
        try await withApp(InMemoryStore()) { client in
            let nearby = try await client.call(.patch, "/v1/friends/nearby")
            #expect(nearby.status == .methodNotAllowed)
            #expect(nearby.headers[.allow] == "GET, HEAD")
            let me = try await client.call(.post, "/v1/me")
            #expect(me.headers[.allow] == "GET, HEAD, PATCH, DELETE")
            let friend = try await client.call(.put, "/v1/friends/abc")
            #expect(friend.headers[.allow] == "GET, HEAD, PATCH, DELETE")
        }
    }
}
