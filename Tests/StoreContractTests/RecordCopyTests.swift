import Foundation
import GeoCore
import GeoTestSupport
import Logging
import Testing
import VicinityCore
import VicinitySpatiaLite
import VicinityBcrypt
import VicinitySQL

/// Where a record is copied to: another SpatiaLite file, or a PostGIS schema when the test server runs.
enum CopyTarget: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case spatiaLite, postGIS
    var testDescription: String { rawValue }
    static var available: [CopyTarget] { TestPostGIS.url == nil ? [.spatiaLite] : allCases }
}

@Suite("Copying a whole record between stores")
struct RecordCopyTests {
    /// A record with a row in every table and the awkward cases: a footprint with a hole, one-sided sharing, a
    /// pending request, a block, removed events above the highest kept, a voided ballot, an announced finish.
    static func fill(_ store: SpatiaLiteStore) async throws -> (token: String, pim: Account, lastEventGiven: EventID) {
        let hall = hallOfScience
        func square(_ halfSide: Double) -> [Coordinate] {
            let corners = [45.0, 135, 225, 315].map { destination(from: hall, distance: halfSide * 2.0.squareRoot(), bearing: $0) }
            return corners + [corners[0]]
        }
        _ = try await store.upsert(Array(Fixture.geonames.prefix(200)) + [
            try Place(id: PlaceID("csulb-hsci"), name: "Hall of Science", category: "academic", aliases: ["HSCI"],
                      attributes: ["code": "HSCI"], coordinate: hall,
                      footprint: MultiPolygon(try Polygon(exterior: square(40), holes: [square(10)]))),
        ])
        _ = try await store.upsert([try Campus(id: PlaceID("csulb"), name: "CSULB", boundary: MultiPolygon(try Polygon(exterior: square(900))))])

        // A relay configured (none runs): Pim's sign-up leaves a code and a message waiting in the outbox.
        var settings = ServiceSettings.standard
        settings.accounts.mail = MailSettings(relayConfigured: true, requireEmail: false)
        let services = Services(stores: store, hasher: BcryptHasher(cost: .forTesting(4)), settings: settings)
        let address = ClientAddress("192.0.2.1")
        let pim = try await services.accounts.signUp(SignUp(
            username: try Username("pim"), password: try Password("correct horse battery"),
            firstName: try PersonName("Pim", field: "first_name"), lastName: try PersonName("Chaiyo", field: "last_name"),
            email: try Email("pim@student.csulb.edu")), from: address)
        let signedIn = try await services.accounts.signIn(login: "pim", password: "correct horse battery", from: address)
        let nok = try account("nok", first: "Nok"), ana = try account("ana", first: "Ana")
        for person in [nok, ana] { try await store.createAccount(person, passwordHash: someHash) }
        // A phone of Nok's that has reported once, so that every column of a device holds a value.
        let phone = StoredDevice(
            device: Device(owner: nok.id, name: try DeviceName("Pixel"), kind: .owntracks, createdAt: epoch, lastUsedAt: epoch + .seconds(5)),
            secretDigest: DeviceSecret.random().digest, cardsDigest: "names")
        #expect(try await store.addDevice(phone, limit: 10))
        // Pim's browser and iPhone, registered for pushes from the session signed in above; pokes muted.
        for target in [
            PushTarget.webPush(WebPushAddress(stored: "https://push.example.net/send/pim", p256dh: "p256dh", auth: "auth")),
            PushTarget.apns(APNsAddress(stored: String(repeating: "ab", count: 32), topic: "edu.csulb.vicinity")),
        ] {
            #expect(try await store.addPushSubscription(
                PushSubscription(owner: pim.id, target: target, session: signedIn.token.digest, createdAt: epoch), limit: 10) != nil)
        }
        #expect(try await store.setPushPreferences(PushPreferences(owner: pim.id, muted: [.poke])))
        _ = try await store.sendFriendRequest(FriendRequest(id: .random(), from: nok.id, to: pim.id, createdAt: epoch))
        _ = try await store.sendFriendRequest(FriendRequest(id: .random(), from: pim.id, to: nok.id, createdAt: epoch + .seconds(5)))
        _ = try await store.setSharing(.building, from: pim.id, to: nok.id)
        // Nok lets Pim set place alerts on her; Pim watches Hall of Science and a point, told of one arrival.
        _ = try await store.allowWatching(by: nok.id, watcher: pim.id, at: epoch + .seconds(5))
        let watched = Alert(
            id: .random(), watcher: pim.id, watched: nok.id, target: .point(hall), radius: try AlertRadius(meters: 120), createdAt: epoch)
        for alert in [watched, Alert(
            id: .random(), watcher: pim.id, watched: nok.id, target: .place(try PlaceID("csulb-hsci")), radius: .standard, createdAt: epoch)]
        {
            #expect(try await store.addAlert(alert, limit: 10) == .added(alert))
        }
        #expect(try await store.advance(watched, from: nil, to: true, toldAt: epoch + .seconds(6), telling: nil))
        _ = try await store.sendFriendRequest(FriendRequest(id: .random(), from: ana.id, to: pim.id, createdAt: epoch))
        // Ana blocks Pim, which withdraws her request to him; his request to her then waits, held.
        _ = try await store.block(pim.id, by: ana.id, at: epoch + .seconds(6))
        let held = FriendRequest(id: .random(), from: pim.id, to: ana.id, createdAt: epoch + .seconds(7))
        #expect(try await store.sendFriendRequest(held) == .held(held))
        try await store.setPosition(SharedPosition(
            userID: pim.id, coordinate: hall, accuracy: try Accuracy(meters: 12.5), status: try StatusText("Chem lab till 5"),
            label: "Around Hall of Science", onCampus: true, closestPlace: PlaceID("csulb-hsci"), updatedAt: epoch))

        // The third event is the oldest, so removing old events removes the highest number given.
        let events = try await store.appendEvents([10, 20, 0].map { second in
            EventDraft.poke(to: pim.id, from: nok.summary, at: epoch + .seconds(Int64(second)))
        })
        #expect(try await store.deleteEvents(before: epoch + .seconds(5)) == 1)

        // Every column of a vote in use: an extension, a close, a name conflict with a voided ballot, settling
        // announced but not the finish; and a finished anonymous vote announced.
        let open = try makeVote(by: pim.id, participants: 3, duration: .minutes(15))
        let done = try makeVote(by: pim.id, participants: 1, visibility: .private, anonymous: true)
        for vote in [open, done] { #expect(try await store.createVote(vote, passwordHash: someHash)) }
        _ = try await store.updateVote(open.id) { vote in try vote.apply(.extend(.minutes(5)), at: epoch + .seconds(30)) }
        _ = try await store.castBallot(makeBallot(open, by: nok, option: 1))
        var lookAlike = makeBallot(open, by: ana, option: 2)
        lookAlike.voterName = nok.summary.displayName
        guard case .cast = try await store.castBallot(lookAlike) else { throw StoreError.database("ballot refused") }
        _ = try await store.updateVote(open.id) { vote in try vote.apply(.close, at: epoch + .seconds(90)) }
        let voidedAt = epoch + .seconds(100)
        let voided = lookAlike.id
        _ = try await store.setCounted(false, ballot: voided, of: open.id) { vote, ballots in
            try vote.checkCountChange(voided, counted: false, among: ballots, at: voidedAt)
        }
        _ = try await store.castBallot(makeBallot(done, by: nok))
        #expect(Set(try await store.claimAnnouncements(at: epoch + .seconds(120), limit: 10).map(\.id)) == [open.id, done.id])
        return (signedIn.token.text, pim, try #require(events.last?.id))
    }

    @Test("a record copied into another store holds the same rows in every table; people sign in with their old passwords, tokens work and event numbers go on above the highest given",
          arguments: CopyTarget.available)
    func copy(target kind: CopyTarget) async throws {
        let file = TemporaryFile()
        let source = try SpatiaLiteStore(path: file.path, logger: Logger(label: "source"))
        defer { try? source.close() }
        let (token, pim, lastGiven) = try await Self.fill(source)
        let contents = try await source.contents()
        #expect(contents.nextEventNumber == lastGiven.rawValue + 1)
        #expect(contents.tableChecksums.allSatisfy { $0.rows > 0 }, "every table has a row")

        let targetFile = TemporaryFile()
        let schema: PostGISSchema? = kind == .postGIS ? try await PostGISSchema() : nil
        let target: any RecordStore = try schema?.store ?? SpatiaLiteStore(path: targetFile.path, logger: Logger(label: "target"))
        defer { if let target = target as? SpatiaLiteStore { try? target.close() } }
        #expect(try await target.isEmpty())
        try await target.replaceContents(with: contents)
        let copied = try await target.contents()
        #expect(copied.tableChecksums.map(\.rows) == contents.tableChecksums.map(\.rows))
        #expect(copied.tableChecksums.map(\.sha256) == contents.tableChecksums.map(\.sha256))
        #expect(Set(copied.places) == Set(contents.places))
        #expect(Set(copied.votes) == Set(contents.votes))
        #expect(copied.events == contents.events)
        #expect(copied.nextEventNumber == contents.nextEventNumber, "the numbering floor is read back before any event is appended")

        try await Self.checkUsable(target, token: token, pim: pim, lastGiven: lastGiven)

        // Copying again over what is there replaces it, and the copy back is the same record.
        try await target.replaceContents(with: contents)
        let back = TemporaryFile()
        let returned = try SpatiaLiteStore(path: back.path, logger: Logger(label: "back"))
        defer { try? returned.close() }
        try await returned.replaceContents(with: try await target.contents())
        #expect(try await returned.contents().tableChecksums.map(\.sha256) == contents.tableChecksums.map(\.sha256))
        withExtendedLifetime(schema) {}
    }

    /// The copied record works for its people: the old password signs in, the old token authenticates, a
    /// new event is numbered above every number the source gave.
    static func checkUsable<Record: RecordStore>(_ record: Record, token: String, pim: Account, lastGiven: EventID) async throws {
        let services = Services(stores: record, hasher: BcryptHasher(cost: .forTesting(4)))
        #expect(try await services.accounts.authenticate(token: token).userID == pim.id)
        let signedIn = try await services.accounts.signIn(login: "PIM", password: "correct horse battery", from: ClientAddress("192.0.2.9"))
        #expect(signedIn.account == pim)
        let next = try await record.appendEvents([.poke(to: pim.id, from: pim.summary, at: epoch + .seconds(200))])
        #expect(next[0].id.rawValue == lastGiven.rawValue + 1)
    }
}
