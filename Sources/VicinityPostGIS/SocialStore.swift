import VicinityCore
import VicinitySQL

/// Accounts, sessions, positions, friendships, events and votes: the shared SQL stores' statements and rules
/// (`SQLRecordStore`), run in this database's transactions.
extension PostGISStore: RecordStore {
    public var places: PostGISStore { self }
    public var campuses: PostGISStore { self }
    public var accounts: PostGISStore { self }
    public var positions: PostGISStore { self }
    public var friends: PostGISStore { self }
    public var events: PostGISStore { self }
    public var changes: PostGISStore { self }
    public var guesses: PostGISStore { self }
    public var limits: PostGISStore { self }
    public var votes: PostGISStore { self }
    public var outbox: PostGISStore { self }
}

/// The advisory locks this store takes besides the shared plans' (`SQLLockKey.Space`, whose numbers it
/// leaves alone), each keyed by a hash of what it guards.
enum LockSpace {
    /// One schema's side load of places (`SideLoad`), keyed by the schema's name.
    static let placeLoad: Int32 = 3
}
