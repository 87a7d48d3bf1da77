import GRDB

/// The database schema as named migrations. A migration that has shipped is never edited; changes come as
/// new migrations appended below.
enum Schema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()

        migrator.registerMigration("v1 spatial metadata") { db in
            // Inside a migration's transaction only the 0 (no own transaction) form is safe: the 1 form
            // commits or rolls back the surrounding transaction in SpatiaLite 5.0.
            if try Int.fetchOne(db, sql: "SELECT CheckSpatialMetaData()") == 0 {
                try SpatiaLiteCall.require(db, "SELECT InitSpatialMetaData(0, 'WGS84')")
            }
        }

        migrator.registerMigration("v1 places") { db in
            try db.execute(sql: """
                CREATE TABLE place (
                    id TEXT NOT NULL PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 128),
                    name TEXT NOT NULL CHECK (length(trim(name)) > 0),
                    category TEXT NOT NULL CHECK (length(category) BETWEEN 1 AND 64),
                    aliases TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(aliases) AND json_type(aliases) = 'array'),
                    attributes TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(attributes) AND json_type(attributes) = 'object'),
                    search_text TEXT NOT NULL,
                    lat REAL NOT NULL CHECK (lat BETWEEN -90 AND 90),
                    lon REAL NOT NULL CHECK (lon BETWEEN -180 AND 180)
                )
                """)
            try SpatiaLiteCall.require(db, "SELECT AddGeometryColumn('place', 'geom', 4326, 'POINT', 'XY', 1)")
            try SpatiaLiteCall.require(db, "SELECT AddGeometryColumn('place', 'footprint', 4326, 'MULTIPOLYGON', 'XY', 0)")
            try SpatiaLiteCall.require(db, "SELECT CreateSpatialIndex('place', 'geom')")
            try db.execute(sql: "CREATE INDEX place_category ON place(category)")
        }

        migrator.registerMigration("v1 campuses") { db in
            try db.execute(sql: """
                CREATE TABLE campus (
                    id TEXT NOT NULL PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 128),
                    name TEXT NOT NULL CHECK (length(trim(name)) > 0)
                )
                """)
            try SpatiaLiteCall.require(db, "SELECT AddGeometryColumn('campus', 'boundary', 4326, 'MULTIPOLYGON', 'XY', 1)")
            try SpatiaLiteCall.require(db, "SELECT CreateSpatialIndex('campus', 'boundary')")
        }

        migrator.registerMigration("v2 place name search") { db in
            // A trigram index over the folded names, kept in step with `place` by triggers: substring search
            // without reading every row. FTS5 and its trigram tokenizer ship in SQLite 3.34 and later.
            try db.execute(sql: """
                CREATE VIRTUAL TABLE place_name_search USING fts5(
                    search_text, content = 'place', content_rowid = 'rowid', tokenize = 'trigram'
                );
                INSERT INTO place_name_search(place_name_search) VALUES ('rebuild');
                CREATE TRIGGER place_name_search_insert AFTER INSERT ON place BEGIN
                    INSERT INTO place_name_search(rowid, search_text) VALUES (new.rowid, new.search_text);
                END;
                CREATE TRIGGER place_name_search_delete AFTER DELETE ON place BEGIN
                    INSERT INTO place_name_search(place_name_search, rowid, search_text)
                    VALUES ('delete', old.rowid, old.search_text);
                END;
                CREATE TRIGGER place_name_search_update AFTER UPDATE OF search_text ON place BEGIN
                    INSERT INTO place_name_search(place_name_search, rowid, search_text)
                    VALUES ('delete', old.rowid, old.search_text);
                    INSERT INTO place_name_search(rowid, search_text) VALUES (new.rowid, new.search_text);
                END;
                """)
        }

        return migrator
    }

    /// Insert or update by id; an identical row is left alone so that re-imports change nothing.
    static let upsertPlace = """
        INSERT INTO place (id, name, category, aliases, attributes, search_text, lat, lon, geom, footprint)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, MakePoint(?8, ?7, 4326), GeomFromWKB(?9, 4326))
        ON CONFLICT(id) DO UPDATE SET
            name = excluded.name, category = excluded.category, aliases = excluded.aliases,
            attributes = excluded.attributes, search_text = excluded.search_text,
            lat = excluded.lat, lon = excluded.lon, geom = excluded.geom, footprint = excluded.footprint
        WHERE name IS NOT excluded.name OR category IS NOT excluded.category OR aliases IS NOT excluded.aliases
            OR attributes IS NOT excluded.attributes OR lat IS NOT excluded.lat OR lon IS NOT excluded.lon
            OR footprint IS NOT excluded.footprint
        """

    static let upsertCampus = """
        INSERT INTO campus (id, name, boundary) VALUES (?1, ?2, GeomFromWKB(?3, 4326))
        ON CONFLICT(id) DO UPDATE SET name = excluded.name, boundary = excluded.boundary
        WHERE name IS NOT excluded.name OR boundary IS NOT excluded.boundary
        """
}

/// SpatiaLite's management functions answer 1 for success and 0 for failure instead of raising an error.
enum SpatiaLiteCall {
    static func require(_ db: Database, _ sql: String) throws {
        guard try Int.fetchOne(db, sql: sql) == 1 else { throw StoreError.spatiaLite("\(sql) failed") }
    }
}
