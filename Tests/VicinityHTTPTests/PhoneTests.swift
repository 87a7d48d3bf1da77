import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import VicinityCore
@testable import VicinityHTTP

/// Hall of Science and the University Library, CSULB (Data/csulb-buildings.csv).
private let hallOfScience = (lat: 33.779842, lon: -118.112526)
private let library = (lat: 33.777457, lon: -118.114427)

private func answerArray(_ response: TestResponse) throws -> [[String: Any]] {
    try #require((try JSONSerialization.jsonObject(with: response.data)) as? [[String: Any]], "\(response.text)")
}

private func myPosition(_ client: any TestClientProtocol, _ person: Person) async throws -> [String: Any]? {
    let mine = try await client.call(.get, "/v1/me/position", as: person)
    return mine.status == .ok ? mine.object : nil
}

@Suite("Phone apps: OwnTracks and Traccar Client")
struct PhoneTests {
    @Test("a device added answers its secret once with what to type into the app; the list shows it without; a removed one is refused at once")
    func devicePasswords() async throws {
        let clock = ManualClock()
        try await withApp(InMemoryStore(), clock: clock) { client in
            let mai = try await client.person("mai", first: "Mai", last: "Tran")
            let added = try await client.call(.post, "/v1/me/devices", as: mai, json: #"{"name":"Pixel 8","kind":"owntracks"}"#)
            #expect(added.status == .created)
            let body = try #require(added.object)
            let secret = try #require(body["secret"] as? String)
            #expect(secret.count == 43, "256 bits in base64url")
            let setup = try #require(body["setup"] as? [String: Any])
            #expect(setup["username"] as? String == "mai" && setup["password"] as? String == secret)
            #expect((setup["url"] as? String)?.hasSuffix("/owntracks") == true)
            #expect(setup["tracker_id"] as? String == "P8")
            // The app's own import link carries the same settings, as OwnTracks reads a configuration message.
            let link = try #require(setup["config_link"] as? String)
            let prefix = "owntracks:///config?inline="
            #expect(link.hasPrefix(prefix))
            let inline = try #require(String(link.dropFirst(prefix.count)).removingPercentEncoding)
            let decoded = try #require(Data(base64Encoded: inline))
            let configuration = try #require(try JSONSerialization.jsonObject(with: decoded) as? [String: Any])
            #expect(configuration["_type"] as? String == "configuration" && configuration["mode"] as? Int == 3)
            #expect(configuration["auth"] as? Bool == true)
            #expect(configuration["url"] as? String == setup["url"] as? String)
            #expect(configuration["username"] as? String == "mai" && configuration["password"] as? String == secret)
            #expect(configuration["deviceId"] as? String == setup["device_id"] as? String)
            #expect(configuration["tid"] as? String == "P8")

            clock.advance(by: .seconds(1))
            let traccar = try await client.call(.post, "/v1/me/devices", as: mai, json: #"{"name":"Old phone","kind":"traccar"}"#)
            let traccarSetup = try #require(traccar.object?["setup"] as? [String: Any])
            #expect(traccarSetup["device_identifier"] as? String == traccar.object?["secret"] as? String)

            let list = try await client.call(.get, "/v1/me/devices", as: mai)
            let devices = try #require(list.object?["devices"] as? [[String: Any]])
            #expect(devices.map { $0["name"] as? String } == ["Pixel 8", "Old phone"])
            #expect(!list.text.contains(secret), "the secret is shown once only")

            let id = try #require(body["id"] as? String)
            let fix = PhonePayloads.ownTracksLocation(lat: hallOfScience.lat, lon: hallOfScience.lon, tst: 1_795_338_000)
            #expect(try await post(client, fix, user: "mai", secret: secret).status == .ok)
            #expect(try await client.call(.delete, "/v1/me/devices/\(id)", as: mai).status == .noContent)
            let refused = try await post(client, fix, user: "mai", secret: secret)
            #expect(refused.status == .unauthorized)
            #expect(refused.headers[.wwwAuthenticate]?.hasPrefix("Basic") == true)
            #expect(try await client.call(.delete, "/v1/me/devices/\(id)", as: mai).status == .notFound)

            let bad = try await client.call(.post, "/v1/me/devices", as: mai, json: #"{"name":"","kind":"pager"}"#)
            #expect(bad.status == .badRequest)
            #expect(bad.text.contains("name") && bad.text.contains("kind"))
        }
    }

    @Test("an OwnTracks location as the app sends it, every member included, sets the position at its fix time and answers the friends in view, names the first time only; the device's last use is kept to the minute")
    func ownTracksLocation() async throws {
        let clock = ManualClock()
        try await withApp(InMemoryStore(), clock: clock) { client in
            let mai = try await client.person("mai", first: "Mai", last: "Tran")
            let ben = try await client.person("ben", first: "Ben", last: "Okafor")
            try await client.befriend(mai, ben)
            try await client.share(ben, library.lat, library.lon, status: "Reading")
            let device = try await addDevice(client, for: mai)
            let tst = clock.now.millisecondsSince1970 / 1000 - 30
            let first = try await post(client, PhonePayloads.ownTracksLocation(lat: hallOfScience.lat, lon: hallOfScience.lon, tst: tst), user: "MAI", secret: device.secret)
            #expect(first.status == .ok, "\(first.text)")
            let items = try answerArray(first)
            #expect(items.map { $0["_type"] as? String } == ["card", "location"])
            #expect(items[0]["name"] as? String == "Ben Okafor" && items[0]["tid"] as? String == "BO")
            #expect(items[1]["lat"] as? Double == library.lat && items[1]["lon"] as? Double == library.lon)
            #expect(items[1]["topic"] as? String == items[0]["topic"] as? String)

            let mine = try #require(try await myPosition(client, mai))
            #expect(mine["lat"] as? Double == hallOfScience.lat && mine["accuracy_m"] as? Double == 12)
            #expect(mine["updated_at"] as? String == Timestamp(millisecondsSince1970: tst * 1000).rfc3339, "the fix's own time")

            let second = try await post(client, PhonePayloads.ownTracksLocation(lat: hallOfScience.lat, lon: hallOfScience.lon, tst: tst + 10), user: "mai", secret: device.secret)
            #expect(try answerArray(second).map { $0["_type"] as? String } == ["location"], "the app knows the name already")
            func lastUsed() async throws -> String? {
                let list = try await client.call(.get, "/v1/me/devices", as: mai)
                return (list.object?["devices"] as? [[String: Any]])?.first?["last_used_at"] as? String
            }
            let firstUse = clock.now
            #expect(try await lastUsed() == firstUse.rfc3339)

            // "Last used" is kept to the minute: a post within it writes nothing, one after it moves it on.
            clock.advance(by: .seconds(30))
            _ = try await post(client, PhonePayloads.ownTracksLocation(lat: library.lat, lon: library.lon, tst: tst + 40), user: "mai", secret: device.secret)
            #expect(try await lastUsed() == firstUse.rfc3339)
            clock.advance(by: .seconds(31))
            _ = try await post(client, PhonePayloads.ownTracksLocation(lat: library.lat, lon: library.lon, tst: tst + 71), user: "mai", secret: device.secret)
            #expect(try await lastUsed() == clock.now.rfc3339)
        }
    }

    @Test("other OwnTracks messages, an empty body and an encrypted one answer [] and change nothing; bad JSON and coordinates answer 400 and change nothing")
    func ownTracksOthers() async throws {
        let logs = LogRecorder()
        try await withApp(InMemoryStore(), logs: logs) { client in
            let mai = try await client.person("mai")
            let device = try await addDevice(client, for: mai)
            for body in PhonePayloads.ownTracksOthers + ["", PhonePayloads.ownTracksEncrypted, PhonePayloads.ownTracksEncrypted] {
                let answer = try await post(client, body, user: "mai", secret: device.secret)
                #expect(answer.status == .ok && answer.text == "[]", "\(body): \(answer.text)")
            }
            #expect(try await myPosition(client, mai) == nil)
            #expect(logs.records.filter { $0.message.contains("encrypted") }.count == 1, "logged once")
            for body in ["{not json", "[1,2]", #"{"_type":"location","lat":91,"lon":0,"tst":1795338000}"#,
                         #"{"_type":"location","lat":"north","lon":0}"#, #"{"_type":"location","lon":-118.1}"#] {
                let answer = try await post(client, body, user: "mai", secret: device.secret)
                #expect(answer.status == .badRequest, "\(body): \(answer.text)")
                #expect(answer.headers[.contentType] == "application/problem+json")
            }
            #expect(try await myPosition(client, mai) == nil)
            #expect(!logs.records.contains { "\($0.message) \($0.metadata)".contains(device.secret) }, "the secret reaches no log")
        }
    }

    @Test("a queued fix older than the position held changes nothing; a fix more than a minute ahead is refused")
    func fixTimes() async throws {
        let clock = ManualClock()
        try await withApp(InMemoryStore(), clock: clock) { client in
            let mai = try await client.person("mai")
            let device = try await addDevice(client, for: mai)
            let now = clock.now.millisecondsSince1970 / 1000
            #expect(try await post(client, PhonePayloads.ownTracksLocation(lat: library.lat, lon: library.lon, tst: now - 5), user: "mai", secret: device.secret).status == .ok)
            let queued = try await post(client, PhonePayloads.ownTracksLocation(lat: hallOfScience.lat, lon: hallOfScience.lon, tst: now - 600), user: "mai", secret: device.secret)
            #expect(queued.status == .ok)
            #expect(try await myPosition(client, mai)?["lat"] as? Double == library.lat)
            let future = try await post(client, PhonePayloads.ownTracksLocation(lat: hallOfScience.lat, lon: hallOfScience.lon, tst: now + 120), user: "mai", secret: device.secret)
            #expect(future.status == .badRequest && future.text.contains("tst"))
            #expect(try await myPosition(client, mai)?["lat"] as? Double == library.lat)
        }
    }

    @Test("a wrong secret, another person's username, a disagreeing X-Limit-U and no credentials all answer 401 alike, with a Basic challenge")
    func refusals() async throws {
        try await withApp(InMemoryStore()) { client in
            let mai = try await client.person("mai")
            _ = try await client.person("ben")
            let device = try await addDevice(client, for: mai)
            let fix = PhonePayloads.ownTracksLocation(lat: hallOfScience.lat, lon: hallOfScience.lon, tst: 1_795_338_000)
            // The last character changed to another that ends 32 bytes of base64url as validly: one in sixteen
            // secrets already ends in "A".
            let wrong = String(device.secret.dropLast()) + (device.secret.hasSuffix("A") ? "E" : "A")
            let answers = [
                try await post(client, fix, user: "mai", secret: wrong),
                try await post(client, fix, user: "ben", secret: device.secret),
                try await post(client, fix, user: "mai", secret: device.secret, headers: [HTTPField.Name("X-Limit-U")!: "ben"]),
                try await client.execute(uri: "/owntracks", method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(string: fix)),
            ]
            for answer in answers {
                #expect(answer.status == .unauthorized)
                #expect(answer.headers[.wwwAuthenticate] == #"Basic realm="vicinity", charset="UTF-8""#)
                #expect(answer.text == answers[0].text)
            }
            #expect(try await myPosition(client, mai) == nil)
            let agreeing = try await post(client, fix, user: "mai", secret: device.secret, headers: [HTTPField.Name("X-Limit-U")!: "Mai", HTTPField.Name("X-Limit-D")!: "phone"])
            #expect(agreeing.status == .ok)
        }
    }

    @Test("Traccar Client's query form, form body and JSON form set the position; an unknown or removed identifier answers 401")
    func traccar() async throws {
        let clock = ManualClock()
        try await withApp(InMemoryStore(), clock: clock) { client in
            let mai = try await client.person("mai")
            let device = try await addDevice(client, for: mai, kind: "traccar")
            let seconds = clock.now.millisecondsSince1970 / 1000
            let query = try await client.execute(
                uri: "/traccar?" + PhonePayloads.traccarQuery(id: device.secret, lat: library.lat, lon: library.lon, timestamp: seconds - 20),
                method: .post)
            #expect(query.status == .ok && query.text.isEmpty, "\(query.text)")
            #expect(try await myPosition(client, mai)?["lat"] as? Double == library.lat)

            let form = try await client.execute(
                uri: "/traccar", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: PhonePayloads.traccarQuery(id: device.secret, lat: hallOfScience.lat, lon: hallOfScience.lon, timestamp: seconds - 10)))
            #expect(form.status == .ok)
            #expect(try await myPosition(client, mai)?["lat"] as? Double == hallOfScience.lat)

            let json = try await client.execute(
                uri: "/traccar", method: .post, headers: [.contentType: "application/json"],
                body: ByteBuffer(string: PhonePayloads.traccarJSON(id: device.secret, lat: library.lat, lon: library.lon, timestamp: (clock.now - .seconds(1)).rfc3339)))
            #expect(json.status == .ok, "\(json.text)")
            let mine = try #require(try await myPosition(client, mai))
            #expect(mine["lat"] as? Double == library.lat && mine["accuracy_m"] as? Double == 9)

            let unknown = try await client.execute(
                uri: "/traccar?" + PhonePayloads.traccarQuery(id: "no-such-device", lat: library.lat, lon: library.lon, timestamp: seconds), method: .get)
            #expect(unknown.status == .unauthorized)
            #expect(try await client.call(.delete, "/v1/me/devices/\(device.id)", as: mai).status == .noContent)
            let removed = try await client.execute(
                uri: "/traccar?" + PhonePayloads.traccarQuery(id: device.secret, lat: library.lat, lon: library.lon, timestamp: seconds), method: .get)
            #expect(removed.status == .unauthorized && removed.text == unknown.text)
        }
    }

    @Test("the friends in an answer follow the privacy rules: hidden from me, privacy mode, stale and not yet shared are absent, and a friend who hides is gone from the next answer")
    func privacy() async throws {
        let clock = ManualClock()
        try await withApp(InMemoryStore(), clock: clock) { client in
            let mai = try await client.person("mai")
            let people = ["ana", "ben", "cai", "dee", "eve"]
            var friends: [String: Person] = [:]
            for name in people {
                let friend = try await client.person(name)
                try await client.befriend(mai, friend)
                friends[name] = friend
            }
            let ana = try #require(friends["ana"]), ben = try #require(friends["ben"]), cai = try #require(friends["cai"])
            let dee = try #require(friends["dee"])
            try await client.share(dee, library.lat, library.lon)
            clock.advance(by: .seconds(25 * 3600))
            for name in ["ana", "ben", "cai"] { try await client.share(try #require(friends[name]), library.lat, library.lon) }
            #expect(try await client.call(.patch, "/v1/friends/\(mai.id)", as: ben, json: #"{"share_position":false}"#).status == .ok)
            #expect(try await client.call(.patch, "/v1/me", as: cai, json: #"{"privacy_mode":true}"#).status == .ok)
            let device = try await addDevice(client, for: mai)
            let tst = clock.now.millisecondsSince1970 / 1000
            func seen() async throws -> [String] {
                let answer = try await post(client, PhonePayloads.ownTracksLocation(lat: hallOfScience.lat, lon: hallOfScience.lon, tst: tst), user: "mai", secret: device.secret)
                return try answerArray(answer).filter { $0["_type"] as? String == "location" }.compactMap { $0["topic"] as? String }
            }
            // Ben hides from Mai, Cai is in privacy mode, Dee's position is a day old, Eve shares none.
            #expect(try await seen() == ["owntracks/ana/vicinity"])
            #expect(try await client.call(.patch, "/v1/me", as: ana, json: #"{"privacy_mode":true}"#).status == .ok)
            #expect(try await seen() == [])
        }
    }

    @Test("deleting the account removes its devices")
    func deletion() async throws {
        try await withApp(InMemoryStore()) { client in
            let mai = try await client.person("mai")
            let device = try await addDevice(client, for: mai)
            let deleted = try await client.call(.delete, "/v1/me", as: mai, json: #"{"password":"\#(testPassword)"}"#)
            #expect(deleted.status == .noContent, "\(deleted.text)")
            let fix = PhonePayloads.ownTracksLocation(lat: hallOfScience.lat, lon: hallOfScience.lon, tst: 1_795_338_000)
            #expect(try await post(client, fix, user: "mai", secret: device.secret).status == .unauthorized)
        }
    }
}
