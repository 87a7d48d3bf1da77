import Crypto
import Foundation
import GeoCore

/// Everything a record holds, table by table, as stored: what moving a deployment from one store to another
/// copies. Rows keep their ids, password hashes and token digests, so people sign in with their old
/// passwords afterwards and their tokens still work.
public struct RecordContents: Hashable, Sendable {
    public var places: [Place] = []
    public var campuses: [Campus] = []
    public var accounts: [StoredAccount] = []
    public var sessions: [Session] = []
    public var positions: [SharedPosition] = []
    /// One row per direction of each friendship.
    public var friendships: [FriendshipSide] = []
    public var friendRequests: [FriendRequest] = []
    public var events: [Event] = []
    /// The number the next event is given at least: above every number ever given, also to events already
    /// removed, so that a client's `Last-Event-ID` from before the move still means "after this one".
    public var nextEventNumber: Int64 = 1
    public var votes: [StoredVote] = []
    public var ballots: [Ballot] = []

    public init() {}

    /// One line per table: its name, its row count and a SHA-256 of its rows in a canonical form (sorted,
    /// every field exact: coordinates by their bits), so that two records holding the same rows give the same
    /// lines whatever store holds them and in whatever order it returns them.
    public var tableChecksums: [(table: String, rows: Int, sha256: String)] {
        func line(_ fields: [JSONValue]) -> [UInt8] { JSONValue.array(fields).jsonBytes }
        func exact(_ value: Double) -> JSONValue { .string(String(value.bitPattern, radix: 16)) }
        func exact(_ coordinate: Coordinate) -> [JSONValue] { [exact(coordinate.latitude), exact(coordinate.longitude)] }
        func time(_ value: Timestamp?) -> JSONValue { value.map { .string(String($0.millisecondsSince1970)) } ?? .null }
        func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        func shape(_ multi: MultiPolygon?) -> JSONValue { multi.map { .string(WKB.encode($0).map { String($0, radix: 16) }.joined()) } ?? .null }
        let tables: [(String, [[UInt8]])] = [
            ("places", places.map { place in
                line([.string(place.id.rawValue), .string(place.name), .string(place.category.rawValue),
                      .array(place.aliases.map(JSONValue.string)), .object(place.attributes.mapValues(JSONValue.string))]
                     + exact(place.coordinate) + [shape(place.footprint)])
            }),
            ("campuses", campuses.map { line([.string($0.id.rawValue), .string($0.name), shape($0.boundary)]) }),
            ("accounts", accounts.map { stored in
                let account = stored.account
                return line([.string(account.id.rawValue), .string(account.username.rawValue), .string(account.firstName.rawValue),
                             .string(account.lastName.rawValue), text(account.email?.rawValue), .bool(account.privacyMode),
                             time(account.createdAt), .string(stored.passwordHash.encoded)])
            }),
            ("sessions", sessions.map { session in
                line([.string(session.digest.bytes.map { String($0, radix: 16) }.joined(separator: ".")),
                      .string(session.userID.rawValue), time(session.createdAt), time(session.expiresAt)])
            }),
            ("positions", positions.map { position in
                line([.string(position.userID.rawValue)] + exact(position.coordinate) + [
                    position.accuracy.map { exact($0.distance.meters) } ?? .null, text(position.status?.rawValue),
                    .string(position.label), position.onCampus.map(JSONValue.bool) ?? .null,
                    text(position.closestPlace?.rawValue), time(position.updatedAt)])
            }),
            ("friendships", friendships.map { side in
                line([.string(side.user.rawValue), .string(side.friend.rawValue), time(side.since), .bool(side.sharesPosition)])
            }),
            ("friend requests", friendRequests.map { request in
                line([.string(request.id.rawValue), .string(request.from.rawValue), .string(request.to.rawValue), time(request.createdAt)])
            }),
            ("events", events.map { event in
                line([.string(String(event.id.rawValue)), .string(event.recipient.rawValue), .string(event.type.rawValue),
                      .object(event.data), time(event.createdAt)])
            }),
            ("votes", votes.map { stored in
                let vote = stored.vote
                return line([.string(vote.id.rawValue), .string(vote.initiator.rawValue), .string(vote.subject.rawValue),
                             .array(vote.options.texts.map(JSONValue.string)), .string(String(vote.participants.value)),
                             .string(vote.duration.description), .string(vote.visibility.rawValue), .bool(vote.anonymous)]
                            + exact(vote.location) + [.string(vote.label), time(vote.createdAt), .string(String(vote.ballotsCast)),
                             time(vote.completedAt), .string(stored.passwordHash.encoded), .bool(stored.finishAnnounced),
                             text(vote.extendedBy?.description), time(vote.closedAt), time(vote.cancelledAt),
                             .bool(vote.nameConflict), .string(String(vote.settlingTime.wholeMilliseconds)),
                             time(vote.publishedAt), .string(String(vote.revision)), .bool(stored.settlingAnnounced)])
            }),
            ("ballots", ballots.map { ballot in
                line([.string(ballot.id.rawValue), .string(ballot.vote.rawValue), .string(ballot.voter.rawValue),
                      .string(ballot.voterName), .string(String(ballot.option)), time(ballot.castAt), .bool(ballot.counted)])
            }),
        ]
        return tables.map { name, lines in
            var hash = SHA256()
            for line in lines.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                hash.update(data: line)
                hash.update(data: [0x0A])
            }
            return (name, lines.count, hash.finalize().map { String(format: "%02x", $0) }.joined())
        }
    }
}

/// An account with its password hash.
public struct StoredAccount: Hashable, Sendable {
    public var account: Account
    public var passwordHash: PasswordHash

    public init(account: Account, passwordHash: PasswordHash) {
        self.account = account
        self.passwordHash = passwordHash
    }
}

/// One direction of a friendship: whether `user` shares their position with `friend`.
public struct FriendshipSide: Hashable, Sendable {
    public var user: UserID
    public var friend: UserID
    public var since: Timestamp
    public var sharesPosition: Bool

    public init(user: UserID, friend: UserID, since: Timestamp, sharesPosition: Bool) {
        self.user = user
        self.friend = friend
        self.since = since
        self.sharesPosition = sharesPosition
    }
}

/// A vote with what only the store keeps: its password's hash and which announcements were made.
public struct StoredVote: Hashable, Sendable {
    public var vote: Vote
    public var passwordHash: PasswordHash
    /// The initiator was told that the vote settles name conflicts (or it never needed to be).
    public var settlingAnnounced: Bool
    /// Everyone in the vote was told that it finished or was called off.
    public var finishAnnounced: Bool

    public init(vote: Vote, passwordHash: PasswordHash, settlingAnnounced: Bool = false, finishAnnounced: Bool = false) {
        self.vote = vote
        self.passwordHash = passwordHash
        self.settlingAnnounced = settlingAnnounced
        self.finishAnnounced = finishAnnounced
    }
}
