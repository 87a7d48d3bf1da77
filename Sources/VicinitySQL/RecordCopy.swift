import Crypto
import Foundation
import GeoCore
import VicinityCore

/// A whole record in one database: every store, and the database's life. What the executable opens from
/// `--db` and hands, generically, to everything it builds; which database that is, nothing past the entry
/// point knows.
public protocol RecordStore: SQLRecordStore, Stores, PlaceStore, CampusStore, ChangeFeed {
    /// Where the record is, as start-up lines and logs may show it: a file path, or a server URL without
    /// its password.
    var location: String { get }

    /// The secret the limits' digests are keyed with (`LimitKeys`) when the operator gives none: shared by every
    /// process that shares the record's ledgers.
    func sharedLimitKeys() async throws -> LimitKeys

    /// Whether the record is on a database server, each read a round trip: a front then holds the sessions,
    /// accounts and friendships it has looked up (`HeldAccounts`, `HeldFriendships`), trading seeing at once what
    /// another front changed for seeing it within the change feed's lag.
    var isRemote: Bool { get }
}

extension RecordStore {
    public var isRemote: Bool { false }

    /// A store whose ledgers live in this process's memory needs no shared secret.
    public func sharedLimitKeys() async throws -> LimitKeys { .random() }

    /// Whether the record holds no place, campus or account; every other row belongs to an account.
    public func isEmpty() async throws -> Bool {
        let places = try await count(), campuses = try await campusCount(), accounts = try await accountCount()
        return places == 0 && campuses == 0 && accounts == 0
    }

    /// Every table's rows, from one consistent view of the record: a write committing meanwhile is wholly in
    /// it or wholly not.
    public func contents() async throws -> RecordContents {
        try await run(
            .select(Place.self) { places in
                .select(Campus.self) { campuses in
                    .select(StoredAccount.self) { accounts in
                        .select(Session.self) { sessions in
                            .select(SharedPosition.self) { positions in
                                .select(FriendshipSide.self) { friendships in
                                    .select(FriendRequest.self) { requests in
                                     .select(Block.self) { blocks in
                                      .select(WatchPermission.self) { watches in
                                      .select(Alert.self) { alerts in
                                        .select(Event.self, order: [.ascending("id")]) { events in
                                            .lastNumber(Event.table) { lastGiven in
                                                .select(StoredVote.self) { votes in
                                                    .select(Ballot.self) { ballots in
                                                      .select(StoredDevice.self) { devices in
                                                       .select(PushSubscription.self) { pushDevices in
                                                        .select(PushPreferences.self) { pushPreferences in
                                                        .done(RecordContents(
                                                            places: places, campuses: campuses, accounts: accounts,
                                                            sessions: sessions, positions: positions,
                                                            friendships: friendships, friendRequests: requests,
                                                            blocks: blocks, watches: watches, alerts: alerts,
                                                            events: events,
                                                            nextEventNumber: max(lastGiven, events.last?.id.rawValue ?? 0) + 1,
                                                            votes: votes, ballots: ballots, devices: devices,
                                                            pushDevices: pushDevices, pushPreferences: pushPreferences))
                                                        }
                                                       }
                                                      }
                                                     }
                                                    }
                                                  }
                                                 }
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }, access: .snapshot)
    }

    /// Replaces everything the record holds with `contents`, all or nothing: ids, hashes, token digests and
    /// event numbers kept, the next event numbered at least `contents.nextEventNumber`, and the revisions of
    /// places and campuses raised so that servers holding them in memory reload.
    public func replaceContents(with contents: RecordContents) async throws {
        try validateBatch(contents.places)
        let tables = RecordContents.tables
        var writes: [SQLWrite] = tables.reversed().map { .delete($0.table, where: .all) }
        writes += tables.map { .insertMany($0.table, $0.rows(contents)) }
        writes += ["places", "campuses"].map { .increment(DataRevision.table, column: "revision", where: .equals("name", .text($0))) }
        writes.append(.continueNumbering(
            Event.table, after: max(contents.nextEventNumber - 1, contents.events.map(\.id.rawValue).max() ?? 0)))
        try await run(.writing(writes, result: ()), access: .write)
    }
}

/// Everything a record holds, table by table, as stored: what moving a deployment from one store to another
/// copies. Rows keep their ids, password hashes and token digests, so people sign in with their old passwords
/// afterwards and their tokens still work.
public struct RecordContents: Hashable, Sendable {
    public var places: [Place] = []
    public var campuses: [Campus] = []
    public var accounts: [StoredAccount] = []
    public var sessions: [Session] = []
    public var positions: [SharedPosition] = []
    /// One row per direction of each friendship.
    public var friendships: [FriendshipSide] = []
    public var friendRequests: [FriendRequest] = []
    public var blocks: [Block] = []
    /// Permissions to set place alerts, and the alerts with what was last worked out of them.
    public var watches: [WatchPermission] = []
    public var alerts: [Alert] = []
    public var events: [Event] = []
    /// The number the next event is given at least: above every number ever given, also to events already
    /// removed, so that a client's `Last-Event-ID` from before the move still means "after this one".
    public var nextEventNumber: Int64 = 1
    public var votes: [StoredVote] = []
    public var ballots: [Ballot] = []
    /// Phone apps' passwords, as digests: the phones keep working after a move.
    public var devices: [StoredDevice] = []
    /// Devices registered for pushes, with their sessions: notifications keep coming after a move.
    public var pushDevices: [PushSubscription] = []
    public var pushPreferences: [PushPreferences] = []

    public init(
        places: [Place] = [], campuses: [Campus] = [], accounts: [StoredAccount] = [], sessions: [Session] = [],
        positions: [SharedPosition] = [], friendships: [FriendshipSide] = [], friendRequests: [FriendRequest] = [],
        blocks: [Block] = [], watches: [WatchPermission] = [], alerts: [Alert] = [], events: [Event] = [], nextEventNumber: Int64 = 1, votes: [StoredVote] = [], ballots: [Ballot] = [],
        devices: [StoredDevice] = [], pushDevices: [PushSubscription] = [], pushPreferences: [PushPreferences] = []
    ) {
        self.places = places
        self.campuses = campuses
        self.accounts = accounts
        self.sessions = sessions
        self.positions = positions
        self.friendships = friendships
        self.friendRequests = friendRequests
        self.blocks = blocks
        self.watches = watches
        self.alerts = alerts
        self.events = events
        self.nextEventNumber = nextEventNumber
        self.votes = votes
        self.ballots = ballots
        self.devices = devices
        self.pushDevices = pushDevices
        self.pushPreferences = pushPreferences
    }

    /// One table of a record: its name in reports, and its rows as stored.
    struct Table: Sendable {
        let name: String
        let table: SQLTable
        let rows: @Sendable (RecordContents) -> [[SQLValue]]

        init<Record: SQLRecord>(_ name: String, _ path: any KeyPath<RecordContents, [Record]> & Sendable) {
            self.name = name
            table = Record.table
            rows = { contents in contents[keyPath: path].map(\.sqlValues) }
        }
    }

    /// Every table, parents before the tables whose rows name them.
    static let tables: [Table] = [
        Table("places", \.places), Table("campuses", \.campuses), Table("accounts", \.accounts),
        Table("sessions", \.sessions), Table("positions", \.positions), Table("friendships", \.friendships),
        Table("friend requests", \.friendRequests), Table("blocks", \.blocks),
        Table("watch permissions", \.watches), Table("alerts", \.alerts), Table("events", \.events), Table("votes", \.votes),
        Table("ballots", \.ballots), Table("devices", \.devices), Table("push devices", \.pushDevices),
        Table("push preferences", \.pushPreferences),
    ]

    /// One line per table: its name, its row count and a SHA-256 of its rows in a canonical form (each row's
    /// stored values, every field exact: numbers by their bits; lines sorted), so that two records holding the
    /// same rows give the same lines whatever store holds them and in whatever order it returns them.
    public var tableChecksums: [(table: String, rows: Int, sha256: String)] {
        Self.tables.map { table in
            let lines = table.rows(self).map(Self.canonicalLine)
            var hash = SHA256()
            for line in lines.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
                hash.update(data: line)
                hash.update(data: [0x0A])
            }
            return (table.name, lines.count, hash.finalize().map { String(format: "%02x", $0) }.joined())
        }
    }

    /// A row's values as one line of JSON, each value tagged with its kind.
    private static func canonicalLine(_ values: [SQLValue]) -> [UInt8] {
        JSONValue.array(values.map { value in
            switch value {
            case .null: .null
            case .integer(let number): .string("i" + String(number))
            case .real(let number): .string("r" + String(number.bitPattern, radix: 16))
            case .text(let text): .string("t" + text)
            case .bytes(let bytes): .string("b" + bytes.map { String($0, radix: 16) }.joined(separator: "."))
            case .bool(let flag): .bool(flag)
            }
        }).jsonBytes
    }
}

/// The numbers every committed write of places (or of campuses) raises, so that a server holding them in
/// memory sees an import made by another process and reloads.
struct DataRevision: SQLRecord {
    var name: String
    var revision: Int

    static let schema = RecordSchema<DataRevision>(
        "data_revision", key: ["name"],
        fields: [
            SQLField("name", .text) { .text($0.name) },
            SQLField("revision", .integer) { .whole($0.revision) },
        ])

    init(row: some SQLRow) throws(StoreError) {
        name = try row.text("name")
        revision = try row.whole("revision")
    }
}
