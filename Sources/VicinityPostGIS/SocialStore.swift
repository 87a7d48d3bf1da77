import PostgresNIO
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
    public var streamLeases: PostGISStore { self }
    public var votes: PostGISStore { self }
    public var outbox: PostGISStore { self }
    public var devices: PostGISStore { self }
    public var push: PostGISStore { self }

    /// The secret kept in `service_secret`, made by the first server to ask: every server then keys the shared
    /// ledgers (`guessing`, `window_limit`) alike.
    public func sharedLimitKeys() async throws -> LimitKeys {
        let made = Base64URL.encode(LimitKeys.randomSecret())
        // A server that lost the race to make it waits for the winner's commit, which its statement's snapshot
        // does not show: the second statement reads it.
        var found: String?
        for _ in 0..<2 where found == nil {
            found = try await rows("""
                WITH made AS (
                    INSERT INTO service_secret (name, value) VALUES ('limit-keys', \(made)) ON CONFLICT (name) DO NOTHING
                    RETURNING value)
                SELECT value FROM made UNION ALL SELECT value FROM service_secret WHERE name = 'limit-keys'
                """).first?.decode("value", as: String.self)
        }
        guard let text = found, let secret = Base64URL.decode(text) else {
            throw StoreError.corrupt("service_secret holds no readable limit-keys secret")
        }
        do { return try LimitKeys(secret: secret) } catch { throw StoreError.corrupt("service_secret's limit-keys secret: \(error)") }
    }
}

/// Open event streams counted in the database, so that the cap on a person's streams holds over every server.
extension PostGISStore: StreamLeaseLedger {}

/// The advisory locks this store takes besides the shared plans' (`SQLLockKey.Space`, whose numbers it
/// leaves alone), each keyed by a hash of what it guards.
enum LockSpace {
    /// One schema's side load of places (`SideLoad`), keyed by the schema's name.
    static let placeLoad: Int32 = 3
}
