import GeoCore

/// Failures of a store that are not the caller's input, whichever database is behind it.
public enum StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The database holds something the domain's rules refuse: a row written by hand, or by a bug.
    case corrupt(String)
    /// The database engine refused or failed an operation the store relies on.
    case database(String)
    /// The database cannot be reached now (down, restarting, out of connections); the same request may
    /// succeed later. The HTTP front answers 503 with `Retry-After`.
    case unavailable(String)

    public var description: String {
        switch self {
        case .corrupt(let message): "the database holds data Vicinity cannot read: \(message)"
        case .database(let message): "database: \(message)"
        case .unavailable(let message): "the database is unavailable: \(message)"
        }
    }

    /// The database records `migration`, which this version does not know: a newer version migrated it, and this
    /// one must not read or migrate it. The same words over every store.
    public static func migratedByNewerVersion(recording migration: String) -> StoreError {
        .database(
            "the database was migrated by a newer Vicinity (it records the migration \"\(migration)\", which this version does not know); run that version or newer")
    }
}

extension WKB {
    /// A stored footprint or boundary; bytes that are not a polygon this service reads are a corrupt store.
    public static func decodeStored(_ bytes: [UInt8], of owner: String) throws(StoreError) -> MultiPolygon {
        do { return try decodeMultiPolygon(bytes) } catch { throw .corrupt("the geometry of \(owner): \(error.description)") }
    }
}
