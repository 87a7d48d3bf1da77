import Foundation
import GeoCore
import GeoTestSupport
import Logging
import VicinityBcrypt
import VicinityCore
import VicinityImport
import VicinityRecord
import VicinitySQL

/// Fills a database with synthetic people and votes for load tests, never for real use:
///   vicinity-seed DATABASE PLACES.csv OUTPUT_FOLDER [USERS] [FRIENDS] [VOTES] [ALERTS]
/// DATABASE is what `--db` takes: a SpatiaLite file or a postgres:// URL.
/// USERS accounts (default 10,000) named user00000, user00001, ..., all with the password "bench password",
/// each signed in once and sharing a position within 150 m of a random place of PLACES.csv (seeded, so every
/// run makes the same positions); user00000 has FRIENDS friends (default 200). Writes to OUTPUT_FOLDER:
///   sessions.txt   one "TOKEN LAT LON" line per user: a token and a fresh position near a place, for updates
///   friendly.txt   the token of user00000
///   devices.txt    one "BASIC LAT LON" line per user: the user's OwnTracks device as its HTTP Basic credentials
///                  (base64 of "username:secret"), and a fresh position near a place, for the phone benchmarks
///   busy-vote.txt  the id of a permanent public vote at the first place, open to every user (password 482913)
/// and VOTES (default 0) permanent public votes opened by user00000, spread uniformly over the 20 km square
/// centred on the first place: a city's worth of open votes for `GET /v1/votes/nearby`.
/// With ALERTS (even 0), every user is also friends with the next four in a ring (user00000 with user00001 to
/// user00004, ..., the last with the first four), each of them lets the other set place alerts, and holds ALERTS
/// alerts: a place alert (150 m around a random place of PLACES.csv) on each of the next four, then a nearby
/// alert (300 m) on their pair partner (user00000 and user00001, user00002 and user00003, ...), who holds one
/// back, then more place alerts: the alert load of `Scripts/bench/alerts.sh`, on top of the same friendships
/// whatever ALERTS is.
/// The database must already hold the places (`vicinity import places`).

let arguments = CommandLine.arguments
guard arguments.count >= 4 else {
    FileHandle.standardError.write(Data("usage: vicinity-seed DATABASE PLACES.csv OUTPUT_FOLDER [USERS] [FRIENDS] [VOTES]\n".utf8))
    exit(64)
}
let userCount = arguments.count > 4 ? Int(arguments[4]) ?? 10_000 : 10_000
let friendCount = min(arguments.count > 5 ? Int(arguments[5]) ?? 200 : 200, userCount - 1)
let voteCount = arguments.count > 6 ? Int(arguments[6]) ?? 0 : 0
let alertsPerUser: Int? = arguments.count > 7 ? Int(arguments[7]) ?? 0 : nil
let output = URL(fileURLWithPath: arguments[3])
let placeFile = try PlaceFileReader.read(path: arguments[2]).places
let anchors = placeFile.map(\.coordinate)
let started = ContinuousClock.now
let location = try RecordLocation(arguments[1])
try await location.withRecord(logger: Logger(label: "seed")) { store in try await seed(store) }

/// The seeding itself, generic over the store the location opened.
func seed<Record: RecordStore>(_ store: Record) async throws {
    let locator = Locator(places: store, campuses: store)
    var generator = SeededGenerator(seed: 2026)

    func near(_ generator: inout SeededGenerator) -> Coordinate {
        let anchor = anchors[Int.random(in: 0..<anchors.count, using: &generator)]
        return destination(
            from: anchor, distance: Double.random(in: 0...150, using: &generator), bearing: Double.random(in: 0..<360, using: &generator))
    }

    // One bcrypt hash for everyone: the seed is about positions and friends, and 10,000 hashes at cost 10 would
    // take minutes.
    let hash = try await BcryptHasher().hash(try Password("bench password"))
    let now = Timestamp(Date())
    var lines: [String] = []
    var deviceLines: [String] = []
    var ids: [UserID] = []
    for index in 0..<userCount {
        let name = String(format: "user%05d", index)
        let account = Account(
            id: .random(), username: try Username(name), firstName: try PersonName("User", field: "first_name"),
            lastName: try PersonName(String(index), field: "last_name"), email: nil, privacyMode: false, createdAt: now)
        try await store.createAccount(StoredAccount(account: account, passwordHash: hash), code: nil, message: nil)
        let token = SessionToken.random()
        try await store.createSession(Session(
            digest: token.digest, userID: account.id, createdAt: now, expiresAt: now + .seconds(30 * 24 * 3600)))
        let position = near(&generator)
        let whereabouts = try await locator.whereabouts(of: position)
        try await store.setPosition(SharedPosition(
            userID: account.id, coordinate: position, accuracy: nil, status: try StatusText("Studying"), label: whereabouts.label,
            onCampus: whereabouts.onCampus, closestPlace: whereabouts.closest?.place.id, updatedAt: now))
        let next = near(&generator)
        lines.append("\(token.text) \(next.latitude) \(next.longitude)")
        let secret = DeviceSecret.random()
        let device = Device(owner: account.id, name: try DeviceName("Phone"), kind: .owntracks, createdAt: now)
        _ = try await store.addDevice(StoredDevice(device: device, secretDigest: secret.digest), limit: DeviceRules.standard.maximumPerPerson)
        let phoneFix = near(&generator)
        let basic = Data("\(name):\(secret.text)".utf8).base64EncodedString()
        deviceLines.append("\(basic) \(phoneFix.latitude) \(phoneFix.longitude)")
        ids.append(account.id)
        if index == 0 { try (token.text + "\n").write(to: output.appendingPathComponent("friendly.txt"), atomically: true, encoding: .utf8) }
    }
    for friend in ids.dropFirst().prefix(friendCount) {
        _ = try await store.sendFriendRequest(FriendRequest(id: .random(), from: ids[0], to: friend, createdAt: now))
        _ = try await store.sendFriendRequest(FriendRequest(id: .random(), from: friend, to: ids[0], createdAt: now))
    }
    if let alertsPerUser { try await seedAlerts(store, ids: ids, perUser: alertsPerUser, at: now, generator: &generator) }
    try (lines.joined(separator: "\n") + "\n").write(to: output.appendingPathComponent("sessions.txt"), atomically: true, encoding: .utf8)
    try (deviceLines.joined(separator: "\n") + "\n").write(to: output.appendingPathComponent("devices.txt"), atomically: true, encoding: .utf8)

    // Votes: one busy vote everyone may join, and a city of open ones.
    let voteHash = try await BcryptHasher().hash(try VotePassword("482913").hashable)
    func openVote(at location: Coordinate, participants: Int, subject: String) async throws -> VoteID {
        while true {
            let vote = Vote(
                id: .random(), initiator: ids[0], subject: try VoteSubject(subject), options: try VoteOptions(["Yes", "No", "Later"]),
                participants: try ParticipantCount(participants), duration: .permanent, visibility: .public, anonymous: false,
                location: location, label: try await locator.whereabouts(of: location).label, createdAt: now)
            if try await store.createVote(vote, passwordHash: voteHash) { return vote.id }
        }
    }
    let busy = try await openVote(at: anchors[0], participants: min(userCount, ParticipantCount.maximum), subject: "Busy vote")
    try (busy.rawValue + "\n").write(to: output.appendingPathComponent("busy-vote.txt"), atomically: true, encoding: .utf8)
    let halfSide = 10_000.0
    for index in 0..<voteCount {
        let east = Double.random(in: -halfSide...halfSide, using: &generator)
        let north = Double.random(in: -halfSide...halfSide, using: &generator)
        let point = destination(from: destination(from: anchors[0], distance: abs(north), bearing: north < 0 ? 180 : 0),
                                distance: abs(east), bearing: east < 0 ? 270 : 90)
        _ = try await openVote(at: point, participants: ParticipantCount.maximum, subject: "City vote \(index)")
    }
}
/// The ring of friendships, the permissions and the alerts described above.
func seedAlerts<Record: RecordStore>(
    _ store: Record, ids: [UserID], perUser: Int, at now: Timestamp, generator: inout SeededGenerator
) async throws {
    let ring = min(4, ids.count - 1)
    // Each alert starts where its friend is, as one set through the service does.
    let rule = AlertService(stores: store, clock: SystemClock(), locator: Locator(places: store.places, campuses: store.campuses), positions: .standard)
    for (index, user) in ids.enumerated() {
        for step in 1...max(ring, 1) where ring > 0 {
            let friend = ids[(index + step) % ids.count]
            if try await store.friendship(of: user, with: friend) == nil {
                _ = try await store.sendFriendRequest(FriendRequest(id: .random(), from: user, to: friend, createdAt: now))
                _ = try await store.sendFriendRequest(FriendRequest(id: .random(), from: friend, to: user, createdAt: now))
            }
            _ = try await store.allowWatching(by: friend, watcher: user, at: now)
            _ = try await store.allowWatching(by: user, watcher: friend, at: now)
        }
    }
    for (index, user) in ids.enumerated() where ring > 0 {
        let partner = ids[index ^ 1 < ids.count ? index ^ 1 : index - 1]
        for number in 0..<perUser {
            let target: AlertTarget, watched: UserID, radius: AlertRadius
            if number == ring, partner != user {
                (target, watched, radius) = (.nearby, partner, try AlertRadius(meters: 300))
            } else {
                let place = placeFile[Int.random(in: 0..<placeFile.count, using: &generator)]
                (target, watched, radius) = (.place(place.id), ids[(index + 1 + number % ring) % ids.count], try AlertRadius(meters: 150))
            }
            var alert = Alert(id: .random(), watcher: user, watched: watched, target: target, radius: radius, createdAt: now)
            alert.inside = try await rule.initialState(of: alert)
            _ = try await store.addAlert(alert, limit: AlertRules.standard.perFriend)
        }
    }
}

let elapsed = ContinuousClock.now - started
print("seeded \(userCount) users with positions, sessions and a phone each, \(friendCount) friends of user00000 and \(voteCount + 1) open votes, in \(elapsed.components.seconds) s")
