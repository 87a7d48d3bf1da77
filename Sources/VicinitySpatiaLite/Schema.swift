import Foundation
import GRDB
import VicinityCore

/// The database schema as named migrations. A migration that has shipped is never edited; changes come as
/// new migrations appended below.
enum Schema {
    /// The migrations the file records, and those of them this version does not know (a newer version applied
    /// them): read before migrating, where the store refuses such a file, and when checking a backup.
    static func recordedMigrations(_ db: Database) throws -> (applied: Set<String>, unknown: Set<String>) {
        let migrator = migrator
        let applied = try migrator.appliedIdentifiers(db)
        return (applied, applied.subtracting(migrator.migrations))
    }

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

        migrator.registerMigration("v3 accounts, sessions, positions and friends") { db in
            // Times are whole milliseconds since 1970-01-01T00:00:00Z (`Timestamp`). `username_key` is the
            // lower-cased username that uniqueness and sign-in compare; `name_key` is "first last" folded by
            // `PeopleMatch.nameKey` for people search: derived columns, so a change of either rule comes with a
            // migration that recomputes them.
            try db.execute(sql: """
                CREATE TABLE account (
                    id TEXT NOT NULL PRIMARY KEY CHECK (length(id) = 20),
                    username TEXT NOT NULL CHECK (length(username) BETWEEN 3 AND 32),
                    username_key TEXT NOT NULL UNIQUE CHECK (username_key = lower(username)),
                    first_name TEXT NOT NULL CHECK (length(first_name) BETWEEN 1 AND 64),
                    last_name TEXT NOT NULL CHECK (length(last_name) BETWEEN 1 AND 64),
                    name_key TEXT NOT NULL,
                    email TEXT CHECK (email IS NULL OR length(email) BETWEEN 3 AND 254),
                    password_hash TEXT NOT NULL CHECK (password_hash GLOB '$2[abxy]$[0-9][0-9]$*'),
                    privacy_mode INTEGER NOT NULL DEFAULT 0 CHECK (privacy_mode IN (0, 1)),
                    created_at INTEGER NOT NULL
                );
                CREATE TABLE session (
                    token_digest BLOB NOT NULL PRIMARY KEY CHECK (length(token_digest) = 32),
                    account_id TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                    created_at INTEGER NOT NULL,
                    expires_at INTEGER NOT NULL CHECK (expires_at > created_at)
                ) WITHOUT ROWID;
                CREATE INDEX session_account ON session(account_id);
                CREATE INDEX session_expiry ON session(expires_at);
                CREATE TABLE user_position (
                    account_id TEXT NOT NULL PRIMARY KEY REFERENCES account(id) ON DELETE CASCADE,
                    lat REAL NOT NULL CHECK (lat BETWEEN -90 AND 90),
                    lon REAL NOT NULL CHECK (lon BETWEEN -180 AND 180),
                    accuracy_m REAL CHECK (accuracy_m IS NULL OR accuracy_m >= 0),
                    status TEXT CHECK (status IS NULL OR length(status) BETWEEN 1 AND 140),
                    label TEXT NOT NULL,
                    on_campus INTEGER CHECK (on_campus IS NULL OR on_campus IN (0, 1)),
                    closest_place_id TEXT,
                    updated_at INTEGER NOT NULL
                );
                CREATE TABLE friendship (
                    account_id TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                    friend_id TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                    since INTEGER NOT NULL,
                    share_position INTEGER NOT NULL DEFAULT 1 CHECK (share_position IN (0, 1)),
                    PRIMARY KEY (account_id, friend_id),
                    CHECK (account_id <> friend_id)
                ) WITHOUT ROWID;
                CREATE INDEX friendship_friend ON friendship(friend_id);
                CREATE TABLE friend_request (
                    id TEXT NOT NULL PRIMARY KEY CHECK (length(id) = 20),
                    from_id TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                    to_id TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                    created_at INTEGER NOT NULL,
                    CHECK (from_id <> to_id)
                );
                CREATE UNIQUE INDEX friend_request_pair ON friend_request(min(from_id, to_id), max(from_id, to_id));
                CREATE INDEX friend_request_from ON friend_request(from_id);
                CREATE INDEX friend_request_to ON friend_request(to_id);
                """)
            // Positions are located things like places: a POINT with an R*Tree, so that the file opens in
            // QGIS and spatial queries over people need no new schema.
            try SpatiaLiteCall.require(db, "SELECT AddGeometryColumn('user_position', 'geom', 4326, 'POINT', 'XY', 1)")
            try SpatiaLiteCall.require(db, "SELECT CreateSpatialIndex('user_position', 'geom')")
        }

        migrator.registerMigration("v3 events") { db in
            // AUTOINCREMENT: numbers are never reused after old events are removed, so a client's
            // Last-Event-ID always means "after this one".
            try db.execute(sql: """
                CREATE TABLE event (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    recipient_id TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                    type TEXT NOT NULL CHECK (length(type) BETWEEN 1 AND 64),
                    data TEXT NOT NULL CHECK (json_valid(data) AND json_type(data) = 'object'),
                    created_at INTEGER NOT NULL
                );
                CREATE INDEX event_recipient ON event(recipient_id, id);
                CREATE INDEX event_created ON event(created_at);
                """)
        }

        migrator.registerMigration("v4 votes and ballots") { db in
            // A vote is open until `completed_at` is set (its last participant voted) or `closes_at` passes:
            // the clock decides, so nothing has to run at closing time for readers to see it finished.
            // `finish_announced` records that the finish was told to voters and initiator, exactly once.
            // A ballot's `voter_name` is the voter's display name when voting and `name_key` that name folded
            // by `Ballot.nameKey`, which name conflicts compare: a derived column, recomputed by a migration
            // if the rule changes.
            try db.execute(sql: """
                CREATE TABLE vote (
                    id TEXT NOT NULL PRIMARY KEY CHECK (length(id) = 6 AND id = upper(id)),
                    initiator_id TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                    subject TEXT NOT NULL CHECK (length(subject) BETWEEN 1 AND 200),
                    options TEXT NOT NULL CHECK (json_valid(options) AND json_type(options) = 'array'
                        AND json_array_length(options) BETWEEN 2 AND 20),
                    participants INTEGER NOT NULL CHECK (participants BETWEEN 1 AND 1000),
                    password_hash TEXT NOT NULL CHECK (password_hash GLOB '$2[abxy]$[0-9][0-9]$*'),
                    duration_minutes INTEGER CHECK (duration_minutes IS NULL OR duration_minutes IN (5, 15, 30, 60)),
                    visibility TEXT NOT NULL CHECK (visibility IN ('public', 'private')),
                    anonymous INTEGER NOT NULL CHECK (anonymous IN (0, 1)),
                    lat REAL NOT NULL CHECK (lat BETWEEN -90 AND 90),
                    lon REAL NOT NULL CHECK (lon BETWEEN -180 AND 180),
                    label TEXT NOT NULL,
                    created_at INTEGER NOT NULL,
                    closes_at INTEGER CHECK ((closes_at IS NULL) = (duration_minutes IS NULL)),
                    ballots_cast INTEGER NOT NULL DEFAULT 0 CHECK (ballots_cast BETWEEN 0 AND participants),
                    completed_at INTEGER CHECK ((completed_at IS NOT NULL) = (ballots_cast = participants)),
                    finish_announced INTEGER NOT NULL DEFAULT 0 CHECK (finish_announced IN (0, 1))
                );
                CREATE INDEX vote_initiator ON vote(initiator_id, created_at);
                CREATE INDEX vote_unannounced ON vote(closes_at, completed_at) WHERE finish_announced = 0;
                CREATE TABLE ballot (
                    id TEXT NOT NULL PRIMARY KEY CHECK (length(id) = 20),
                    vote_id TEXT NOT NULL REFERENCES vote(id) ON DELETE CASCADE,
                    voter_id TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                    voter_name TEXT NOT NULL CHECK (length(voter_name) >= 1),
                    name_key TEXT NOT NULL,
                    option_index INTEGER NOT NULL CHECK (option_index BETWEEN 0 AND 19),
                    cast_at INTEGER NOT NULL,
                    counted INTEGER NOT NULL DEFAULT 1 CHECK (counted IN (0, 1)),
                    UNIQUE (vote_id, voter_id)
                );
                CREATE INDEX ballot_voter ON ballot(voter_id);
                """)
            // Votes are located things like places and positions: a POINT with an R*Tree.
            try SpatiaLiteCall.require(db, "SELECT AddGeometryColumn('vote', 'geom', 4326, 'POINT', 'XY', 1)")
            try SpatiaLiteCall.require(db, "SELECT CreateSpatialIndex('vote', 'geom')")
        }

        migrator.registerMigration("v5 data revisions") { db in
            // Numbers that every committed write of places (or of campuses) raises, so that a server holding
            // them in memory sees an import made by another process and reloads.
            try db.execute(sql: """
                CREATE TABLE data_revision (
                    name TEXT NOT NULL PRIMARY KEY CHECK (name IN ('places', 'campuses')),
                    revision INTEGER NOT NULL CHECK (revision >= 0)
                );
                INSERT INTO data_revision (name, revision) VALUES ('places', 0), ('campuses', 0);
                """)
        }

        migrator.registerMigration("v5 derived column rules") { db in
            // Which version of its rule each derived column holds. Databases made before this table existed
            // hold an unknown version (0): `DerivedColumns` recomputes such columns when the store opens.
            try db.execute(sql: """
                CREATE TABLE derived_column (
                    name TEXT NOT NULL PRIMARY KEY,
                    rule_version INTEGER NOT NULL CHECK (rule_version >= 0)
                );
                """)
        }

        migrator.registerMigration("v6 change feed") { db in
            // Every change to positions, votes and events: what a server reads to keep its copies in memory
            // in step (ChangeFeed), written by triggers so that no writer can forget it. One writer at a time
            // means numbers are taken in commit order; AUTOINCREMENT never hands out a pruned number again.
            // `created_at` is in milliseconds since 1970, as every time here.
            try db.execute(sql: """
                CREATE TABLE change (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    created_at INTEGER NOT NULL DEFAULT (CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)),
                    kind TEXT NOT NULL CHECK (kind IN ('position', 'vote', 'event')),
                    key TEXT NOT NULL,
                    event_id INTEGER CHECK ((kind = 'event') = (event_id IS NOT NULL))
                );
                CREATE INDEX change_created ON change (created_at);
                -- The newest change pruned: a reader not past it may have lost some, and reloads.
                CREATE TABLE change_pruned (
                    only_row INTEGER NOT NULL PRIMARY KEY CHECK (only_row = 1),
                    through INTEGER NOT NULL
                );
                INSERT INTO change_pruned (only_row, through) VALUES (1, 0);
                CREATE TRIGGER user_position_inserted AFTER INSERT ON user_position
                BEGIN INSERT INTO change (kind, key) VALUES ('position', NEW.account_id); END;
                CREATE TRIGGER user_position_updated AFTER UPDATE ON user_position
                BEGIN INSERT INTO change (kind, key) VALUES ('position', NEW.account_id); END;
                CREATE TRIGGER user_position_deleted AFTER DELETE ON user_position
                BEGIN INSERT INTO change (kind, key) VALUES ('position', OLD.account_id); END;
                CREATE TRIGGER vote_inserted AFTER INSERT ON vote
                BEGIN INSERT INTO change (kind, key) VALUES ('vote', NEW.id); END;
                CREATE TRIGGER vote_updated AFTER UPDATE ON vote
                BEGIN INSERT INTO change (kind, key) VALUES ('vote', NEW.id); END;
                CREATE TRIGGER vote_deleted AFTER DELETE ON vote
                BEGIN INSERT INTO change (kind, key) VALUES ('vote', OLD.id); END;
                CREATE TRIGGER event_inserted AFTER INSERT ON event
                BEGIN INSERT INTO change (kind, key, event_id) VALUES ('event', NEW.recipient_id, NEW.id); END;
                """)
        }

        migrator.registerMigration("v7 vote endings") { db in
            // What an initiator does to a vote and how it ends: one extension of a timed vote
            // (`extended_minutes`, with `closes_at` moved by it), closing early, cancelling, and settling
            // ballots cast under names that read the same before the result is published. `name_conflict` is
            // set by the ballot that makes one; `settling_ms` is the settling time fixed when the vote opened.
            // `revision` counts changes of the row, so that copies in memory keep the newest. Announcements
            // are two now: settling began (to the initiator), and the finish or cancelling (to everyone in it).
            // Votes finished before this migration published their results as they stood, so only votes still
            // open get a name conflict from the ballots they hold.
            try db.execute(sql: """
                ALTER TABLE vote ADD COLUMN extended_minutes INTEGER
                    CHECK (extended_minutes IS NULL OR (duration_minutes IS NOT NULL AND extended_minutes IN (5, 15, 30, 60)));
                ALTER TABLE vote ADD COLUMN closed_at INTEGER CHECK (closed_at IS NULL OR completed_at IS NULL);
                ALTER TABLE vote ADD COLUMN cancelled_at INTEGER;
                ALTER TABLE vote ADD COLUMN name_conflict INTEGER NOT NULL DEFAULT 0
                    CHECK (name_conflict IN (0, 1) AND NOT (name_conflict AND anonymous));
                -- 86400000 ms is VoteRules.standard.settlingTime (24 h) when this migration was written.
                ALTER TABLE vote ADD COLUMN settling_ms INTEGER NOT NULL DEFAULT 86400000 CHECK (settling_ms >= 0);
                ALTER TABLE vote ADD COLUMN published_at INTEGER CHECK (published_at IS NULL OR name_conflict);
                ALTER TABLE vote ADD COLUMN revision INTEGER NOT NULL DEFAULT 0 CHECK (revision >= 0);
                ALTER TABLE vote ADD COLUMN settling_announced INTEGER NOT NULL DEFAULT 0 CHECK (settling_announced IN (0, 1));
                UPDATE vote SET name_conflict = 1
                WHERE NOT anonymous AND completed_at IS NULL
                    AND (closes_at IS NULL OR closes_at > CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER))
                    AND EXISTS (SELECT 1 FROM ballot WHERE ballot.vote_id = vote.id GROUP BY name_key HAVING count(*) > 1);
                """)
        }

        migrator.registerMigration("v8 vote times") { db in
            // What the vote rules work out (`StoredVote`): whether a vote takes ballots until voting ends, when
            // voting ends, from when it is final, from when an announcement is owed. Stores compare them and decide nothing; they are
            // derived columns (`DerivedColumns`), filled from every vote when the store opens, as they are after
            // any change of their rule. The claim of announcements reads the partial index by due time instead
            // of the columns the old condition read.
            try db.execute(sql: """
                ALTER TABLE vote ADD COLUMN taking_ballots INTEGER CHECK (taking_ballots IN (0, 1));
                ALTER TABLE vote ADD COLUMN voting_ends_at INTEGER;
                ALTER TABLE vote ADD COLUMN final_at INTEGER;
                ALTER TABLE vote ADD COLUMN announcement_due_at INTEGER;
                DROP INDEX vote_unannounced;
                CREATE INDEX vote_announcement_due ON vote(announcement_due_at) WHERE announcement_due_at IS NOT NULL;
                """)
        }

        migrator.registerMigration("v9 accounts and mail") { db in
            // Accounts as the apps describe them: an address confirmed with a mailed code (`email`, unique
            // ignoring case through `email_key`) beside one waiting for its code (`pending_email`; the
            // addresses kept before this migration were never confirmed, so they wait), accounts without a
            // password until they set one, accounts an operator disabled, sessions opened with a code, the
            // codes themselves (as bcrypt hashes), and the outbox of mail waiting to leave. Events name who they
            // are about (`about_id`, a derived column), ballots and votes outlive their people's accounts
            // (naming nobody), and votes may take verified voters only.
            try db.execute(sql: """
                ALTER TABLE account ADD COLUMN email_key TEXT CHECK (email_key IS NULL OR email_key = lower(email));
                ALTER TABLE account ADD COLUMN pending_email TEXT
                    CHECK (pending_email IS NULL OR length(pending_email) BETWEEN 3 AND 254);
                ALTER TABLE account ADD COLUMN disabled INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1));
                UPDATE account SET pending_email = email, email = NULL WHERE email IS NOT NULL;
                CREATE UNIQUE INDEX account_email_key ON account(email_key) WHERE email_key IS NOT NULL;
                ALTER TABLE session ADD COLUMN by_code INTEGER NOT NULL DEFAULT 0 CHECK (by_code IN (0, 1));
                CREATE TABLE mail_code (
                    account_id TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                    purpose TEXT NOT NULL CHECK (purpose IN ('verify-email', 'sign-in')),
                    email TEXT NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
                    code_hash TEXT NOT NULL CHECK (code_hash GLOB '$2[abxy]$[0-9][0-9]$*'),
                    created_at INTEGER NOT NULL,
                    expires_at INTEGER NOT NULL CHECK (expires_at > created_at),
                    tries_left INTEGER NOT NULL CHECK (tries_left >= 0),
                    PRIMARY KEY (account_id, purpose)
                ) WITHOUT ROWID;
                CREATE TABLE outbox (
                    id TEXT NOT NULL PRIMARY KEY CHECK (length(id) = 20),
                    account_id TEXT REFERENCES account(id) ON DELETE CASCADE,
                    payload TEXT CHECK (payload IS NULL OR (json_valid(payload) AND json_type(payload) = 'object')),
                    created_at INTEGER NOT NULL,
                    due_at INTEGER NOT NULL,
                    expires_at INTEGER NOT NULL,
                    attempts INTEGER NOT NULL CHECK (attempts >= 0),
                    claimed_until INTEGER,
                    state TEXT NOT NULL CHECK (state IN ('pending', 'sent', 'dropped')),
                    settled_at INTEGER CHECK ((settled_at IS NULL) = (state = 'pending')),
                    last_error TEXT,
                    available_at INTEGER CHECK ((available_at IS NULL) = (state <> 'pending')),
                    CHECK (state = 'pending' OR payload IS NULL)
                );
                CREATE INDEX outbox_available ON outbox(available_at) WHERE available_at IS NOT NULL;
                CREATE INDEX outbox_account ON outbox(account_id);
                CREATE INDEX outbox_settled ON outbox(settled_at) WHERE settled_at IS NOT NULL;
                ALTER TABLE event ADD COLUMN about_id TEXT;
                CREATE INDEX event_about ON event(about_id) WHERE about_id IS NOT NULL;
                ALTER TABLE vote ADD COLUMN verified_only INTEGER NOT NULL DEFAULT 0 CHECK (verified_only IN (0, 1));
                """)
            // Constraints that only loosen (a NOT NULL dropped, a foreign key that sets null rather than cascades)
            // change nothing on disk: SQLite's documented way is to edit the table's text in the schema, not to
            // copy the table (which for `vote` would mean moving its SpatiaLite geometry and R*Tree).
            try SchemaText.loosen(db, table: "account", [
                ("password_hash TEXT NOT NULL CHECK", "password_hash TEXT CHECK"),
            ])
            try SchemaText.loosen(db, table: "vote", [
                ("initiator_id TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE",
                 "initiator_id TEXT REFERENCES account(id) ON DELETE SET NULL"),
            ])
            try SchemaText.loosen(db, table: "ballot", [
                ("voter_id TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE", "voter_id TEXT REFERENCES account(id) ON DELETE SET NULL"),
                ("voter_name TEXT NOT NULL CHECK", "voter_name TEXT CHECK"),
                ("name_key TEXT NOT NULL,", "name_key TEXT,"),
            ])
        }

        migrator.registerMigration("v10 waiting address key") { db in
            // An account made with an address and no password has no way in but the code mailed to that
            // address while it waits: the sign-in finds it by the waiting address ignoring case.
            try db.execute(sql: """
                ALTER TABLE account ADD COLUMN pending_email_key TEXT
                    CHECK (pending_email_key IS NULL OR pending_email_key = lower(pending_email));
                UPDATE account SET pending_email_key = lower(pending_email);
                CREATE INDEX account_pending_email_key ON account(pending_email_key) WHERE pending_email_key IS NOT NULL;
                """)
        }

        migrator.registerMigration("v11 devices") { db in
            // Phone apps (OwnTracks, Traccar Client) report positions with passwords of their own, kept as the
            // SHA-256 of a 256-bit secret and looked up by it on every report.
            try db.execute(sql: """
                CREATE TABLE device (
                    id TEXT PRIMARY KEY CHECK (length(id) = 20),
                    account_id TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                    name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
                    kind TEXT NOT NULL CHECK (kind IN ('owntracks', 'traccar')),
                    secret_digest BLOB NOT NULL UNIQUE CHECK (length(secret_digest) = 32),
                    created_at INTEGER NOT NULL,
                    last_used_at INTEGER,
                    cards_digest TEXT
                );
                CREATE INDEX device_account ON device(account_id);
                """)
        }

        migrator.registerMigration("v12 push") { db in
            // Browsers and the iOS app registered for pushes, each held by one person (a device registered again
            // by someone else moves to them) and gone with the session that registered it, so that a shared
            // device tells the next person nothing of the last; the kinds of event each person mutes; and the
            // waiting pushes' device, so that removing a device takes its pushes with it, and the person each
            // names, so that deleting their account takes the pushes about them.
            try db.execute(sql: """
                CREATE TABLE push_subscription (
                    id TEXT PRIMARY KEY CHECK (length(id) = 20),
                    account_id TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                    session_digest BLOB NOT NULL REFERENCES session(token_digest) ON DELETE CASCADE,
                    kind TEXT NOT NULL CHECK (kind IN ('webpush', 'apns')),
                    endpoint TEXT CHECK (length(endpoint) <= 2048),
                    p256dh TEXT,
                    auth TEXT,
                    apns_token TEXT,
                    apns_topic TEXT,
                    target_key TEXT NOT NULL UNIQUE,
                    created_at INTEGER NOT NULL,
                    CHECK ((kind = 'webpush') = (endpoint IS NOT NULL AND p256dh IS NOT NULL AND auth IS NOT NULL)),
                    CHECK ((kind = 'apns') = (apns_token IS NOT NULL AND apns_topic IS NOT NULL))
                );
                CREATE INDEX push_subscription_account ON push_subscription(account_id);
                CREATE INDEX push_subscription_session ON push_subscription(session_digest);
                CREATE TABLE push_preference (
                    account_id TEXT PRIMARY KEY REFERENCES account(id) ON DELETE CASCADE,
                    muted TEXT NOT NULL
                );
                ALTER TABLE outbox ADD COLUMN push_subscription_id TEXT REFERENCES push_subscription(id) ON DELETE CASCADE;
                CREATE INDEX outbox_push_subscription ON outbox(push_subscription_id) WHERE push_subscription_id IS NOT NULL;
                ALTER TABLE outbox ADD COLUMN about_id TEXT;
                CREATE INDEX outbox_about ON outbox(about_id) WHERE about_id IS NOT NULL;
                """)
        }

        migrator.registerMigration("v13 blocks") { db in
            // People blocking others, one row per blocker and blocked person, gone with either account; read by
            // the blocked person's id too, when people search leaves out those who blocked the searcher.
            try db.execute(sql: """
                CREATE TABLE account_block (
                    blocker_id TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                    blocked_id TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                    created_at INTEGER NOT NULL,
                    PRIMARY KEY (blocker_id, blocked_id),
                    CHECK (blocker_id <> blocked_id)
                );
                CREATE INDEX account_block_blocked ON account_block(blocked_id);
                """)
        }

        migrator.registerMigration("v14 share levels") { db in
            // A friendship side shares the exact position, the closest building only, or nothing, instead of
            // yes or no (yes was exact); each person's level for new friends; and when a position came into its
            // building area, the time a friend who sees buildings only is shown (until now: the last fix).
            try db.execute(sql: """
                ALTER TABLE friendship ADD COLUMN share TEXT NOT NULL DEFAULT 'exact'
                    CHECK (share IN ('exact', 'building', 'none'));
                UPDATE friendship SET share = CASE share_position WHEN 1 THEN 'exact' ELSE 'none' END;
                ALTER TABLE friendship DROP COLUMN share_position;
                ALTER TABLE account ADD COLUMN default_share TEXT NOT NULL DEFAULT 'exact'
                    CHECK (default_share IN ('exact', 'building', 'none'));
                ALTER TABLE user_position ADD COLUMN area_since INTEGER NOT NULL DEFAULT 0;
                UPDATE user_position SET area_since = updated_at;
                """)
        }

        migrator.registerMigration("v15 share until") { db in
            // A level given for a while: when it ends (ms), after which the sharer's default holds. Found by
            // the end when the announcer looks for those past it.
            try db.execute(sql: """
                ALTER TABLE friendship ADD COLUMN share_until INTEGER;
                CREATE INDEX friendship_share_until ON friendship(share_until) WHERE share_until IS NOT NULL;
                """)
        }

        migrator.registerMigration("v16 alerts") { db in
            // Alerts friends set on each other, with what was last worked out of each (inside, when last told), and
            // the permissions place alerts need; both gone with either account (and with the friendship, by the
            // rule that ends it). Alerts are read by either person at every move of theirs.
            try db.execute(sql: """
                CREATE TABLE watch_permission (
                    person_id TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                    watcher_id TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                    since INTEGER NOT NULL,
                    PRIMARY KEY (person_id, watcher_id),
                    CHECK (person_id <> watcher_id)
                );
                CREATE INDEX watch_permission_watcher ON watch_permission(watcher_id);
                CREATE TABLE friend_alert (
                    id TEXT PRIMARY KEY,
                    watcher_id TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                    watched_id TEXT NOT NULL REFERENCES account(id) ON DELETE CASCADE,
                    target TEXT NOT NULL CHECK (target IN ('place', 'campus', 'point', 'nearby')),
                    place_id TEXT,
                    lat REAL,
                    lon REAL,
                    radius_m REAL NOT NULL CHECK (radius_m >= 0),
                    created_at INTEGER NOT NULL,
                    inside INTEGER CHECK (inside IN (0, 1)),
                    told_at INTEGER,
                    CHECK (watcher_id <> watched_id),
                    CHECK ((place_id IS NOT NULL) = (target IN ('place', 'campus'))),
                    CHECK ((lat IS NOT NULL AND lon IS NOT NULL) = (target = 'point'))
                );
                CREATE INDEX friend_alert_watcher ON friend_alert(watcher_id);
                CREATE INDEX friend_alert_watched ON friend_alert(watched_id);
                """)
        }

        migrator.registerMigration("v17 alert changes") { db in
            // Every front works out moves against the alerts it holds in memory (`HeldAlerts`), so alerts join
            // the change feed: each row set, moved on or removed (also with an account, by the cascade) notes one
            // change, for the person it watches, whose alerts read again find it (in the one copy both people's
            // lists share) or find it gone. Widening the kinds a change may have only loosens its CHECK, which
            // SQLite's documentation allows in the table's text.
            try SchemaText.loosen(db, table: "change", [
                ("CHECK (kind IN ('position', 'vote', 'event'))", "CHECK (kind IN ('position', 'vote', 'event', 'alert'))"),
            ])
            try db.execute(sql: """
                CREATE TRIGGER friend_alert_inserted AFTER INSERT ON friend_alert
                BEGIN INSERT INTO change (kind, key) VALUES ('alert', NEW.watched_id); END;
                CREATE TRIGGER friend_alert_updated AFTER UPDATE ON friend_alert
                BEGIN INSERT INTO change (kind, key) VALUES ('alert', NEW.watched_id); END;
                CREATE TRIGGER friend_alert_deleted AFTER DELETE ON friend_alert
                BEGIN INSERT INTO change (kind, key) VALUES ('alert', OLD.watched_id); END;
                """)
        }

        migrator.registerMigration("v18 session changes") { db in
            // Every front holds the sessions it has read (`HeldAccounts`), so a session ended anywhere (signed
            // out, ended by a password change, gone with its account or expired) notes a change for its account,
            // and every front forgets that account's sessions.
            try SchemaText.loosen(db, table: "change", [
                ("CHECK (kind IN ('position', 'vote', 'event', 'alert'))", "CHECK (kind IN ('position', 'vote', 'event', 'alert', 'session'))"),
            ])
            try db.execute(sql: """
                CREATE TRIGGER session_deleted AFTER DELETE ON session
                BEGIN INSERT INTO change (kind, key) VALUES ('session', OLD.account_id); END;
                """)
        }

        migrator.registerMigration("v19 account and friendship changes") { db in
            // Every front over a shared record holds the accounts others see and the friendships it has read
            // (`HeldAccounts`, `HeldFriendships`), so a changed or deleted account notes a change for it, and a
            // friendship side made, changed or removed (also by a cascade) one for each of its two people. Noted
            // here too, so that both stores' feeds say the same.
            try SchemaText.loosen(db, table: "change", [
                ("CHECK (kind IN ('position', 'vote', 'event', 'alert', 'session'))",
                 "CHECK (kind IN ('position', 'vote', 'event', 'alert', 'session', 'account', 'friendship'))"),
            ])
            try db.execute(sql: """
                CREATE TRIGGER account_updated AFTER UPDATE ON account
                BEGIN INSERT INTO change (kind, key) VALUES ('account', OLD.id); END;
                CREATE TRIGGER account_deleted AFTER DELETE ON account
                BEGIN INSERT INTO change (kind, key) VALUES ('account', OLD.id); END;
                CREATE TRIGGER friendship_added AFTER INSERT ON friendship
                BEGIN INSERT INTO change (kind, key) VALUES ('friendship', NEW.account_id), ('friendship', NEW.friend_id); END;
                CREATE TRIGGER friendship_updated AFTER UPDATE ON friendship
                BEGIN INSERT INTO change (kind, key) VALUES ('friendship', NEW.account_id), ('friendship', NEW.friend_id); END;
                CREATE TRIGGER friendship_deleted AFTER DELETE ON friendship
                BEGIN INSERT INTO change (kind, key) VALUES ('friendship', OLD.account_id), ('friendship', OLD.friend_id); END;
                """)
        }

        migrator.registerMigration("v20 alert moves in the feed") { db in
            // An update of an alert's state alone (what a move writes: inside, told_at) notes the alert and the
            // state it left (`Change.alertMoved`), which every front's memory takes as it is (`HeldAlerts`), where
            // every move that moved an alert on cost a read of the watched person's alerts and sent their moves to
            // the record until then. Any other update notes as before.
            try db.execute(sql: """
                ALTER TABLE change ADD COLUMN alert_id TEXT CHECK (alert_id IS NULL OR kind = 'alert');
                ALTER TABLE change ADD COLUMN alert_inside INTEGER CHECK (alert_inside IN (0, 1));
                ALTER TABLE change ADD COLUMN alert_told_at INTEGER;
                DROP TRIGGER friend_alert_updated;
                CREATE TRIGGER friend_alert_moved AFTER UPDATE ON friend_alert
                WHEN \(Self.alertStateAlone)
                BEGIN
                    INSERT INTO change (kind, key, alert_id, alert_inside, alert_told_at)
                    VALUES ('alert', NEW.watched_id, NEW.id, NEW.inside, NEW.told_at);
                END;
                CREATE TRIGGER friend_alert_updated AFTER UPDATE ON friend_alert
                WHEN NOT (\(Self.alertStateAlone))
                BEGIN INSERT INTO change (kind, key) VALUES ('alert', NEW.watched_id); END;
                """)
        }

        return migrator
    }

    /// An update of `friend_alert` that left every column but the state (`inside`, `told_at`) as it was.
    static let alertStateAlone = """
        OLD.id IS NEW.id AND OLD.watcher_id IS NEW.watcher_id AND OLD.watched_id IS NEW.watched_id \
        AND OLD.target IS NEW.target AND OLD.place_id IS NEW.place_id AND OLD.lat IS NEW.lat AND OLD.lon IS NEW.lon \
        AND OLD.radius_m IS NEW.radius_m AND OLD.created_at IS NEW.created_at
        """

    /// Insert or update by id; an identical row is left alone so that re-imports change nothing.
    static let upsertPlace = """
        INSERT INTO place (id, name, category, aliases, attributes, search_text, lat, lon, geom, footprint)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, MakePoint(?8, ?7, 4326), GeomFromWKB(?9, 4326))
        ON CONFLICT(id) DO UPDATE SET
            name = excluded.name, category = excluded.category, aliases = excluded.aliases,
            attributes = excluded.attributes, search_text = excluded.search_text,
            lat = excluded.lat, lon = excluded.lon, geom = excluded.geom, footprint = excluded.footprint
        WHERE name IS NOT excluded.name OR category IS NOT excluded.category OR aliases IS NOT excluded.aliases
            OR attributes IS NOT excluded.attributes OR search_text IS NOT excluded.search_text
            OR lat IS NOT excluded.lat OR lon IS NOT excluded.lon OR footprint IS NOT excluded.footprint
        """

    static let upsertCampus = """
        INSERT INTO campus (id, name, boundary) VALUES (?1, ?2, GeomFromWKB(?3, 4326))
        ON CONFLICT(id) DO UPDATE SET name = excluded.name, boundary = excluded.boundary
        WHERE name IS NOT excluded.name OR boundary IS NOT excluded.boundary
        """
}

/// Edits of a table's `CREATE TABLE` text for the changes SQLite's documentation names as safe without copying
/// the table ("Making Other Kinds Of Table Schema Changes", ALTER TABLE §7: removing NOT NULL, CHECK or FOREIGN
/// KEY constraints): the stored rows read the same under the new text.
enum SchemaText {
    /// Replaces each text of the table's definition; throws, changing nothing, when one is not found.
    static func loosen(_ db: Database, table: String, _ edits: [(old: String, new: String)]) throws {
        guard var sql = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", arguments: [table])
        else { throw StoreError.database("no table \(table) to change") }
        for edit in edits {
            guard sql.contains(edit.old) else { throw StoreError.database("the definition of \(table) holds no \(edit.old)") }
            sql = sql.replacingOccurrences(of: edit.old, with: edit.new)
        }
        let version = try Int.fetchOne(db, sql: "PRAGMA schema_version") ?? 0
        try db.execute(sql: "PRAGMA writable_schema = ON")
        try db.execute(sql: "UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = ?", arguments: [sql, table])
        // Every connection reads the schema again.
        try db.execute(sql: "PRAGMA schema_version = \(version + 1)")
        try db.execute(sql: "PRAGMA writable_schema = OFF")
    }
}

/// SpatiaLite's management functions answer 1 for success and 0 for failure instead of raising an error.
enum SpatiaLiteCall {
    static func require(_ db: Database, _ sql: String) throws {
        guard try Int.fetchOne(db, sql: sql) == 1 else { throw StoreError.database("\(sql) failed") }
    }
}
