import Foundation
import GeoCore
import Logging
import VicinityCore
import VicinityImport
import VicinitySpatiaLite

/// Fills a database with synthetic people for load tests of the friend finder, never for real use:
///   vicinity-seed DATABASE PLACES.csv OUTPUT_FOLDER [USERS] [FRIENDS]
/// USERS accounts (default 10,000) named user00000, user00001, ..., all with the password "bench password",
/// each signed in once and sharing a position within 150 m of a random place of PLACES.csv (seeded, so every
/// run makes the same positions); user00000 has FRIENDS friends (default 200). Writes to OUTPUT_FOLDER:
///   sessions.txt   one "TOKEN LAT LON" line per user: a token and a fresh position near a place, for updates
///   friendly.txt   the token of user00000
/// The database must already hold the places (`vicinity import places`).

struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The point `distance` metres from `start` at `bearing` degrees on the sphere (the direct problem).
func destination(from start: Coordinate, distance: Double, bearing: Double) throws -> Coordinate {
    let delta = distance / Earth.meanRadius.meters, theta = bearing * .pi / 180
    let phi1 = start.latitude * .pi / 180, lambda1 = start.longitude * .pi / 180
    let phi2 = asin(sin(phi1) * cos(delta) + cos(phi1) * sin(delta) * cos(theta))
    let lambda2 = lambda1 + atan2(sin(theta) * sin(delta) * cos(phi1), cos(delta) - sin(phi1) * sin(phi2))
    var longitude = lambda2 * 180 / .pi
    if longitude > 180 { longitude -= 360 } else if longitude < -180 { longitude += 360 }
    return try Coordinate(latitude: phi2 * 180 / .pi, longitude: longitude)
}

let arguments = CommandLine.arguments
guard arguments.count >= 4 else {
    FileHandle.standardError.write(Data("usage: vicinity-seed DATABASE PLACES.csv OUTPUT_FOLDER [USERS] [FRIENDS]\n".utf8))
    exit(64)
}
let userCount = arguments.count > 4 ? Int(arguments[4]) ?? 10_000 : 10_000
let friendCount = min(arguments.count > 5 ? Int(arguments[5]) ?? 200 : 200, userCount - 1)
let output = URL(fileURLWithPath: arguments[3])
let anchors = try PlaceFileReader.read(path: arguments[2]).places.map(\.coordinate)
let store = try SpatiaLiteStore(path: arguments[1], logger: Logger(label: "seed"))
let locator = Locator(places: store, campuses: store)
var generator = SeededGenerator(state: 2026)
let started = ContinuousClock.now

func near(_ generator: inout SeededGenerator) throws -> Coordinate {
    let anchor = anchors[Int.random(in: 0..<anchors.count, using: &generator)]
    return try destination(
        from: anchor, distance: Double.random(in: 0...150, using: &generator), bearing: Double.random(in: 0..<360, using: &generator))
}

// One bcrypt hash for everyone: the seed is about positions and friends, and 10,000 hashes at cost 10 would
// take minutes.
let hash = await BcryptHasher().hash(try Password("bench password"))
let now = Timestamp(Date())
var lines: [String] = []
var ids: [UserID] = []
for index in 0..<userCount {
    let name = String(format: "user%05d", index)
    let account = Account(
        id: .random(), username: try Username(name), firstName: try PersonName("User", field: "first_name"),
        lastName: try PersonName(String(index), field: "last_name"), email: nil, privacyMode: false, createdAt: now)
    try await store.createAccount(account, passwordHash: hash)
    let token = SessionToken.random()
    try await store.createSession(Session(
        digest: token.digest, userID: account.id, createdAt: now, expiresAt: now + .seconds(30 * 24 * 3600)))
    let position = try near(&generator)
    let whereabouts = try await locator.whereabouts(of: position)
    try await store.setPosition(SharedPosition(
        userID: account.id, coordinate: position, accuracy: nil, status: try StatusText("Studying"), label: whereabouts.label,
        onCampus: whereabouts.onCampus, closestPlace: whereabouts.closest?.place.id, updatedAt: now))
    let next = try near(&generator)
    lines.append("\(token.text) \(next.latitude) \(next.longitude)")
    ids.append(account.id)
    if index == 0 { try (token.text + "\n").write(to: output.appendingPathComponent("friendly.txt"), atomically: true, encoding: .utf8) }
}
for friend in ids.dropFirst().prefix(friendCount) {
    _ = try await store.sendFriendRequest(FriendRequest(id: .random(), from: ids[0], to: friend, createdAt: now))
    _ = try await store.sendFriendRequest(FriendRequest(id: .random(), from: friend, to: ids[0], createdAt: now))
}
try (lines.joined(separator: "\n") + "\n").write(to: output.appendingPathComponent("sessions.txt"), atomically: true, encoding: .utf8)
try store.close()
let elapsed = ContinuousClock.now - started
print("seeded \(userCount) users with positions and sessions, and \(friendCount) friends of user00000, in \(elapsed.components.seconds) s")
