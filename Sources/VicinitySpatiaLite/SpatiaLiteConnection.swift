import CSpatiaLite
import GRDB
import VicinityCore
import GRDBSQLite

/// Per-connection SpatiaLite set-up, run by GRDB on every connection it opens (`prepareDatabase`).
enum SpatiaLiteConnection {
    /// Loads SpatiaLite's SQL functions into the connection and ties the lifetime of SpatiaLite's
    /// per-connection cache to the connection: the cache is handed to SQLite as the user data of a
    /// marker function whose destructor SQLite calls when the connection closes.
    static func initialise(_ db: Database) throws {
        guard let connection = db.sqliteConnection else { throw StoreError.database("connection is closed") }
        guard let cache = spatialite_alloc_connection() else {
            throw StoreError.database("could not allocate the connection cache")
        }
        spatialite_init_ex(connection, cache, 0)
        let status = sqlite3_create_function_v2(
            connection, "vicinity_spatialite_cache", 0, SQLITE_UTF8, cache,
            { context, _, _ in sqlite3_result_null(context) }, nil, nil,
            { cache in if let cache { spatialite_cleanup_ex(cache) } }
        )
        guard status == SQLITE_OK else {
            spatialite_cleanup_ex(cache)
            throw StoreError.database("could not register the cache destructor (SQLite code \(status))")
        }
    }

    /// The SpatiaLite library version, for start-up logs and health reports.
    static var libraryVersion: String { String(cString: spatialite_version()) }
}
