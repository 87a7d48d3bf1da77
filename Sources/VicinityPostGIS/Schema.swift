import Foundation

/// The database schema as named migrations, recorded in `vicinity_migration`. A migration that has shipped is
/// never edited; changes come as new migrations appended below. The same rules as the SpatiaLite schema hold
/// as constraints here, so that a row one store refuses the other refuses too.
///
/// Times are whole milliseconds since 1970-01-01T00:00:00Z (`Timestamp`), as in SpatiaLite, so that copying
/// a record between the two stores is exact. Located rows keep their exact latitude and longitude as columns
/// and a `geography(Point, 4326)` generated from them with a GiST index: the index only chooses candidates,
/// GeoCore measures.
enum Schema {
    struct Migration: Sendable {
        var name: String
        var sql: String

        /// The statements one by one, as the extended query protocol takes them: each ends with a line that
        /// ends in a semicolon, which no statement here holds inside it.
        var statements: [String] {
            var result: [String] = []
            var current: [Substring] = []
            for line in sql.split(separator: "\n", omittingEmptySubsequences: false) {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.hasPrefix("--") || trimmed.isEmpty { continue }
                current.append(line)
                if trimmed.hasSuffix(";") {
                    result.append(current.joined(separator: "\n"))
                    current = []
                }
            }
            if !current.isEmpty { result.append(current.joined(separator: "\n")) }
            return result
        }
    }

    static let migrations: [Migration] = [
        Migration(name: "v1 extensions", sql: """
            -- In public, not in a record's own schema (?schema=): one installation serves every schema, and
            -- dropping a record's schema never takes PostGIS with it.
            CREATE EXTENSION IF NOT EXISTS postgis SCHEMA public;
            CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public;
            """),

        Migration(name: "v1 places and campuses", sql: """
            CREATE TABLE place (
                id text NOT NULL PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 128),
                name text NOT NULL CHECK (length(btrim(name)) > 0),
                category text NOT NULL CHECK (length(category) BETWEEN 1 AND 64),
                aliases jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(aliases) = 'array'),
                attributes jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(attributes) = 'object'),
                -- Name and aliases folded by NameMatch, one per line: what the trigram index reads.
                search_text text NOT NULL,
                lat double precision NOT NULL CHECK (lat BETWEEN -90 AND 90),
                lon double precision NOT NULL CHECK (lon BETWEEN -180 AND 180),
                location geography(Point, 4326) NOT NULL
                    GENERATED ALWAYS AS (ST_SetSRID(ST_MakePoint(lon, lat), 4326)::geography) STORED,
                footprint geometry(MultiPolygon, 4326)
            );
            CREATE INDEX place_location ON place USING gist (location);
            CREATE INDEX place_category ON place (category);
            CREATE INDEX place_search_text ON place USING gin (search_text gin_trgm_ops);

            CREATE TABLE campus (
                id text NOT NULL PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 128),
                name text NOT NULL CHECK (length(btrim(name)) > 0),
                boundary geometry(MultiPolygon, 4326) NOT NULL
            );
            CREATE INDEX campus_boundary ON campus USING gist (boundary);

            -- Numbers that every committed write of places (or of campuses) raises, so that a server holding
            -- them in memory sees an import made by another process and reloads.
            CREATE TABLE data_revision (
                name text NOT NULL PRIMARY KEY CHECK (name IN ('places', 'campuses')),
                revision bigint NOT NULL CHECK (revision >= 0)
            );
            INSERT INTO data_revision (name, revision) VALUES ('places', 0), ('campuses', 0);
            """),

        Migration(name: "v1 accounts, sessions, positions and friends", sql: """
            CREATE TABLE account (
                id text NOT NULL PRIMARY KEY CHECK (length(id) = 20),
                username text NOT NULL CHECK (length(username) BETWEEN 3 AND 32),
                -- The lower-cased username that uniqueness and sign-in compare.
                username_key text NOT NULL CHECK (username_key = lower(username)),
                first_name text NOT NULL CHECK (length(first_name) BETWEEN 1 AND 64),
                last_name text NOT NULL CHECK (length(last_name) BETWEEN 1 AND 64),
                -- "first last" folded by PeopleMatch.nameKey, for people search.
                name_key text NOT NULL,
                email text CHECK (email IS NULL OR length(email) BETWEEN 3 AND 254),
                password_hash text NOT NULL CHECK (password_hash ~ '^\\$2[abxy]\\$[0-9][0-9]\\$'),
                privacy_mode boolean NOT NULL DEFAULT false,
                created_at bigint NOT NULL,
                CONSTRAINT account_username_unique UNIQUE (username_key)
            );
            CREATE INDEX account_username_prefix ON account (username_key text_pattern_ops);
            CREATE INDEX account_name_key ON account USING gin (name_key gin_trgm_ops);

            CREATE TABLE session (
                token_digest bytea NOT NULL PRIMARY KEY CHECK (length(token_digest) = 32),
                account_id text NOT NULL REFERENCES account (id) ON DELETE CASCADE,
                created_at bigint NOT NULL,
                expires_at bigint NOT NULL CHECK (expires_at > created_at)
            );
            CREATE INDEX session_account ON session (account_id);
            CREATE INDEX session_expiry ON session (expires_at);

            CREATE TABLE user_position (
                account_id text NOT NULL PRIMARY KEY REFERENCES account (id) ON DELETE CASCADE,
                lat double precision NOT NULL CHECK (lat BETWEEN -90 AND 90),
                lon double precision NOT NULL CHECK (lon BETWEEN -180 AND 180),
                accuracy_m double precision CHECK (accuracy_m IS NULL OR accuracy_m >= 0),
                status text CHECK (status IS NULL OR length(status) BETWEEN 1 AND 140),
                label text NOT NULL,
                on_campus boolean,
                closest_place_id text,
                updated_at bigint NOT NULL,
                location geography(Point, 4326) NOT NULL
                    GENERATED ALWAYS AS (ST_SetSRID(ST_MakePoint(lon, lat), 4326)::geography) STORED
            );
            CREATE INDEX user_position_location ON user_position USING gist (location);

            -- One row per direction, each with its own sharing flag.
            CREATE TABLE friendship (
                account_id text NOT NULL REFERENCES account (id) ON DELETE CASCADE,
                friend_id text NOT NULL REFERENCES account (id) ON DELETE CASCADE,
                since bigint NOT NULL,
                share_position boolean NOT NULL DEFAULT true,
                PRIMARY KEY (account_id, friend_id),
                CHECK (account_id <> friend_id)
            );
            CREATE INDEX friendship_friend ON friendship (friend_id);

            CREATE TABLE friend_request (
                id text NOT NULL PRIMARY KEY CHECK (length(id) = 20),
                from_id text NOT NULL REFERENCES account (id) ON DELETE CASCADE,
                to_id text NOT NULL REFERENCES account (id) ON DELETE CASCADE,
                created_at bigint NOT NULL,
                CHECK (from_id <> to_id)
            );
            -- One request per pair, whichever way it goes.
            CREATE UNIQUE INDEX friend_request_pair ON friend_request (least(from_id, to_id), greatest(from_id, to_id));
            CREATE INDEX friend_request_from ON friend_request (from_id);
            CREATE INDEX friend_request_to ON friend_request (to_id);
            """),

        Migration(name: "v1 events", sql: """
            -- An identity that is never reused, so a client's Last-Event-ID always means "after this one".
            -- Numbers are taken in commit order per recipient (EventStore's guarantee): appends to one
            -- recipient hold a lock on that recipient until they commit.
            -- `data` is json, not jsonb: the payload is kept as written.
            CREATE TABLE event (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                recipient_id text NOT NULL REFERENCES account (id) ON DELETE CASCADE,
                type text NOT NULL CHECK (length(type) BETWEEN 1 AND 64),
                data json NOT NULL CHECK (json_typeof(data) = 'object'),
                created_at bigint NOT NULL
            );
            CREATE INDEX event_recipient ON event (recipient_id, id);
            CREATE INDEX event_created ON event (created_at);
            """),

        Migration(name: "v1 votes and ballots", sql: """
            -- A vote is open until completed_at is set (its last participant voted) or closes_at passes: the
            -- clock decides. finish_announced records that the finish was told, exactly once.
            CREATE TABLE vote (
                id text NOT NULL PRIMARY KEY CHECK (length(id) = 6 AND id = upper(id)),
                initiator_id text NOT NULL REFERENCES account (id) ON DELETE CASCADE,
                subject text NOT NULL CHECK (length(subject) BETWEEN 1 AND 200),
                options jsonb NOT NULL CHECK (jsonb_typeof(options) = 'array' AND jsonb_array_length(options) BETWEEN 2 AND 20),
                participants integer NOT NULL CHECK (participants BETWEEN 1 AND 1000),
                password_hash text NOT NULL CHECK (password_hash ~ '^\\$2[abxy]\\$[0-9][0-9]\\$'),
                duration_minutes integer CHECK (duration_minutes IS NULL OR duration_minutes IN (5, 15, 30, 60)),
                visibility text NOT NULL CHECK (visibility IN ('public', 'private')),
                anonymous boolean NOT NULL,
                lat double precision NOT NULL CHECK (lat BETWEEN -90 AND 90),
                lon double precision NOT NULL CHECK (lon BETWEEN -180 AND 180),
                label text NOT NULL,
                created_at bigint NOT NULL,
                closes_at bigint CHECK ((closes_at IS NULL) = (duration_minutes IS NULL)),
                ballots_cast integer NOT NULL DEFAULT 0 CHECK (ballots_cast BETWEEN 0 AND participants),
                completed_at bigint CHECK ((completed_at IS NOT NULL) = (ballots_cast = participants)),
                finish_announced boolean NOT NULL DEFAULT false,
                location geography(Point, 4326) NOT NULL
                    GENERATED ALWAYS AS (ST_SetSRID(ST_MakePoint(lon, lat), 4326)::geography) STORED
            );
            CREATE INDEX vote_initiator ON vote (initiator_id, created_at);
            CREATE INDEX vote_unannounced ON vote (closes_at, completed_at) WHERE NOT finish_announced;
            CREATE INDEX vote_location ON vote USING gist (location);

            -- voter_name is the voter's display name when voting; name_key that name folded by
            -- Ballot.nameKey, which name conflicts compare.
            CREATE TABLE ballot (
                id text NOT NULL PRIMARY KEY CHECK (length(id) = 20),
                vote_id text NOT NULL REFERENCES vote (id) ON DELETE CASCADE,
                voter_id text NOT NULL REFERENCES account (id) ON DELETE CASCADE,
                voter_name text NOT NULL CHECK (length(voter_name) >= 1),
                name_key text NOT NULL,
                option_index integer NOT NULL CHECK (option_index BETWEEN 0 AND 19),
                cast_at bigint NOT NULL,
                counted boolean NOT NULL DEFAULT true,
                UNIQUE (vote_id, voter_id)
            );
            CREATE INDEX ballot_voter ON ballot (voter_id);
            """),

        Migration(name: "v1 derived column rules", sql: """
            -- Which version of its rule each derived column holds (search_text, name_key), as in SpatiaLite.
            CREATE TABLE derived_column (
                name text NOT NULL PRIMARY KEY,
                rule_version integer NOT NULL CHECK (rule_version >= 0)
            );
            """),

        Migration(name: "v2 change feed", sql: """
            -- Every change to positions, votes and events, by whichever process made it: what several fronts
            -- read to keep their copies in memory in step (ChangeFeed). Written by triggers, so no writer can
            -- forget it. `xid` is the writing transaction: a reader takes only complete transactions, by
            -- snapshot, since identity values are not handed out in commit order. `created_at` is the
            -- transaction's start, the same for all its rows, so pruning takes a transaction whole.
            CREATE TABLE change (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
                created_at bigint NOT NULL DEFAULT (extract(epoch FROM transaction_timestamp()) * 1000)::bigint,
                kind text NOT NULL CHECK (kind IN ('position', 'vote', 'event')),
                key text NOT NULL,
                event_id bigint CHECK ((kind = 'event') = (event_id IS NOT NULL))
            );
            CREATE INDEX change_xid ON change (xid);
            CREATE INDEX change_created ON change (created_at);
            -- The newest transaction whose changes were pruned, and how many prunings removed any: a reader
            -- whose cursor is from an earlier pruning and not past that transaction may have lost some, and
            -- reloads.
            CREATE TABLE change_pruned (
                only_row boolean NOT NULL PRIMARY KEY DEFAULT true CHECK (only_row),
                through xid8 NOT NULL,
                generation bigint NOT NULL CHECK (generation >= 0)
            );
            INSERT INTO change_pruned (through, generation) VALUES ('0', 0);
            -- One line each: migrations are split into statements at lines that end in a semicolon.
            CREATE FUNCTION note_position_change() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$ BEGIN INSERT INTO change (kind, key) VALUES ('position', CASE WHEN TG_OP = 'DELETE' THEN OLD.account_id ELSE NEW.account_id END); RETURN NULL; END $$;
            CREATE FUNCTION note_vote_change() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$ BEGIN INSERT INTO change (kind, key) VALUES ('vote', CASE WHEN TG_OP = 'DELETE' THEN OLD.id ELSE NEW.id END); RETURN NULL; END $$;
            CREATE FUNCTION note_event() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$ BEGIN INSERT INTO change (kind, key, event_id) VALUES ('event', NEW.recipient_id, NEW.id); RETURN NULL; END $$;
            CREATE TRIGGER user_position_change AFTER INSERT OR UPDATE OR DELETE ON user_position FOR EACH ROW EXECUTE FUNCTION note_position_change();
            CREATE TRIGGER vote_change AFTER INSERT OR UPDATE OR DELETE ON vote FOR EACH ROW EXECUTE FUNCTION note_vote_change();
            CREATE TRIGGER event_change AFTER INSERT ON event FOR EACH ROW EXECUTE FUNCTION note_event();
            """),

        Migration(name: "v2 guessing limits", sql: """
            -- Failed password checks per key (an account, a person at a vote) and per client address, shared
            -- by every server over this database (GuessingLedger): `state` is GuessingBook's state as JSON,
            -- changed only under the row's lock. `kept_until` (ms) is when it holds nothing worth keeping.
            CREATE TABLE guessing (
                scope text NOT NULL CHECK (scope IN ('sign-in', 'vote-password')),
                kind text NOT NULL CHECK (kind IN ('address', 'key')),
                name text NOT NULL,
                state jsonb NOT NULL CHECK (jsonb_typeof(state) = 'object'),
                kept_until bigint NOT NULL,
                PRIMARY KEY (scope, kind, name)
            );
            CREATE INDEX guessing_kept_until ON guessing (kept_until);
            """),

        Migration(name: "v3 window limits", sql: """
            -- Sliding-window limits (sign-ups, vote openings, pokes, lookups of unknown vote ids) shared by every
            -- server over this database (WindowLedger): `state` is a WindowState as JSON, changed only under
            -- the row's lock. `kept_until` (ms) is when it holds nothing worth keeping.
            CREATE TABLE window_limit (
                scope text NOT NULL
                    CHECK (scope IN ('sign-ups', 'vote-openings', 'pokes', 'vote-lookups', 'vote-lookups-from-address')),
                name text NOT NULL,
                state jsonb NOT NULL CHECK (jsonb_typeof(state) = 'object'),
                kept_until bigint NOT NULL,
                PRIMARY KEY (scope, name)
            );
            CREATE INDEX window_limit_kept_until ON window_limit (kept_until);
            """),

        Migration(name: "v4 vote endings", sql: """
            -- What an initiator does to a vote and how it ends, as in SpatiaLite's "v7 vote endings": one
            -- extension of a timed vote (closes_at moved by it), closing early, cancelling, and settling ballots
            -- under names that read the same before the result is published. name_conflict is set by the ballot
            -- that makes one; settling_ms is fixed when the vote opens; revision counts changes of the row, so
            -- that copies in memory keep the newest. Votes finished before this published their results as they
            -- stood, so only votes still open get a name conflict from the ballots they hold. 86400000 ms is
            -- VoteRules.standard.settlingTime (24 h) when this migration was written.
            ALTER TABLE vote
                ADD COLUMN extended_minutes integer
                    CHECK (extended_minutes IS NULL OR (duration_minutes IS NOT NULL AND extended_minutes IN (5, 15, 30, 60))),
                ADD COLUMN closed_at bigint CHECK (closed_at IS NULL OR completed_at IS NULL),
                ADD COLUMN cancelled_at bigint,
                ADD COLUMN name_conflict boolean NOT NULL DEFAULT false CHECK (NOT (name_conflict AND anonymous)),
                ADD COLUMN settling_ms bigint NOT NULL DEFAULT 86400000 CHECK (settling_ms >= 0),
                ADD COLUMN published_at bigint CHECK (published_at IS NULL OR name_conflict),
                ADD COLUMN revision integer NOT NULL DEFAULT 0 CHECK (revision >= 0),
                ADD COLUMN settling_announced boolean NOT NULL DEFAULT false;
            UPDATE vote SET name_conflict = true
            WHERE NOT anonymous AND completed_at IS NULL
                AND (closes_at IS NULL OR closes_at > (extract(epoch FROM clock_timestamp()) * 1000)::bigint)
                AND EXISTS (SELECT 1 FROM ballot WHERE ballot.vote_id = vote.id GROUP BY name_key HAVING count(*) > 1);
            """),

        Migration(name: "v5 vote times", sql: """
            -- What the vote rules work out (StoredVote), as in SpatiaLite's "v8 vote times": whether a vote takes
            -- ballots until voting ends, when voting ends, from when it is final, from when an announcement is owed. The store compares
            -- them and decides nothing; they are derived columns (DerivedColumns), filled from every vote when the
            -- store opens. Claims read the partial index by due time.
            ALTER TABLE vote
                ADD COLUMN taking_ballots boolean,
                ADD COLUMN voting_ends_at bigint,
                ADD COLUMN final_at bigint,
                ADD COLUMN announcement_due_at bigint;
            DROP INDEX vote_unannounced;
            CREATE INDEX vote_announcement_due ON vote (announcement_due_at) WHERE announcement_due_at IS NOT NULL;
            """),

        Migration(name: "v6 accounts and mail", sql: """
            -- As SpatiaLite's "v9 accounts and mail": confirmed and waiting addresses (the addresses kept before
            -- this migration were never confirmed, so they wait), accounts without a password, disabled accounts,
            -- sessions opened with a code, the codes (bcrypt hashes), the outbox, events naming who they are
            -- about, ballots and votes that outlive their people's accounts, votes for verified voters only, and
            -- the window limits on codes.
            ALTER TABLE account
                ALTER COLUMN password_hash DROP NOT NULL,
                ADD COLUMN email_key text CHECK (email_key IS NULL OR email_key = lower(email)),
                ADD COLUMN pending_email text CHECK (pending_email IS NULL OR length(pending_email) BETWEEN 3 AND 254),
                ADD COLUMN disabled boolean NOT NULL DEFAULT false;
            UPDATE account SET pending_email = email, email = NULL WHERE email IS NOT NULL;
            CREATE UNIQUE INDEX account_email_key ON account (email_key) WHERE email_key IS NOT NULL;
            ALTER TABLE session ADD COLUMN by_code boolean NOT NULL DEFAULT false;
            CREATE TABLE mail_code (
                account_id text NOT NULL REFERENCES account (id) ON DELETE CASCADE,
                purpose text NOT NULL CHECK (purpose IN ('verify-email', 'sign-in')),
                email text NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
                code_hash text NOT NULL CHECK (code_hash ~ '^\\$2[abxy]\\$[0-9][0-9]\\$'),
                created_at bigint NOT NULL,
                expires_at bigint NOT NULL CHECK (expires_at > created_at),
                tries_left integer NOT NULL CHECK (tries_left >= 0),
                PRIMARY KEY (account_id, purpose)
            );
            CREATE TABLE outbox (
                id text NOT NULL PRIMARY KEY CHECK (length(id) = 20),
                account_id text REFERENCES account (id) ON DELETE CASCADE,
                payload jsonb CHECK (payload IS NULL OR jsonb_typeof(payload) = 'object'),
                created_at bigint NOT NULL,
                due_at bigint NOT NULL,
                expires_at bigint NOT NULL,
                attempts integer NOT NULL CHECK (attempts >= 0),
                claimed_until bigint,
                state text NOT NULL CHECK (state IN ('pending', 'sent', 'dropped')),
                settled_at bigint CHECK ((settled_at IS NULL) = (state = 'pending')),
                last_error text,
                available_at bigint CHECK ((available_at IS NULL) = (state <> 'pending')),
                CHECK (state = 'pending' OR payload IS NULL)
            );
            CREATE INDEX outbox_available ON outbox (available_at) WHERE available_at IS NOT NULL;
            CREATE INDEX outbox_account ON outbox (account_id);
            CREATE INDEX outbox_settled ON outbox (settled_at) WHERE settled_at IS NOT NULL;
            ALTER TABLE event ADD COLUMN about_id text;
            CREATE INDEX event_about ON event (about_id) WHERE about_id IS NOT NULL;
            ALTER TABLE vote
                ADD COLUMN verified_only boolean NOT NULL DEFAULT false,
                ALTER COLUMN initiator_id DROP NOT NULL,
                DROP CONSTRAINT vote_initiator_id_fkey,
                ADD CONSTRAINT vote_initiator_id_fkey FOREIGN KEY (initiator_id) REFERENCES account (id) ON DELETE SET NULL;
            ALTER TABLE ballot
                ALTER COLUMN voter_id DROP NOT NULL,
                ALTER COLUMN voter_name DROP NOT NULL,
                ALTER COLUMN name_key DROP NOT NULL,
                DROP CONSTRAINT ballot_voter_id_fkey,
                ADD CONSTRAINT ballot_voter_id_fkey FOREIGN KEY (voter_id) REFERENCES account (id) ON DELETE SET NULL;
            ALTER TABLE window_limit
                DROP CONSTRAINT window_limit_scope_check,
                ADD CONSTRAINT window_limit_scope_check CHECK (scope IN ('sign-ups', 'vote-openings', 'pokes', 'vote-lookups',
                    'vote-lookups-from-address', 'codes-for-account', 'codes-to-address', 'codes-from-client'));
            """),
        Migration(name: "v7 waiting address key", sql: """
            -- As SpatiaLite's "v10 waiting address key": an account made with an address and no password signs in
            -- with the code mailed to that address while it waits, found by the address ignoring case.
            ALTER TABLE account ADD COLUMN pending_email_key text
                CHECK (pending_email_key IS NULL OR pending_email_key = lower(pending_email));
            UPDATE account SET pending_email_key = lower(pending_email);
            CREATE INDEX account_pending_email_key ON account (pending_email_key) WHERE pending_email_key IS NOT NULL;
            """),
        Migration(name: "v8 limit keys", sql: """
            -- The limits count under keyed digests (HMAC-SHA256) of usernames, addresses and ids, never the
            -- text itself: the secret every server shares lives here unless the operator gives one in a file
            -- (`serve --limits-key-file`). Counts kept in the clear until now are dropped: at most a day of
            -- failures and windows is forgotten, once.
            CREATE TABLE service_secret (
                name text PRIMARY KEY,
                value text NOT NULL CHECK (length(value) >= 43)
            );
            DELETE FROM guessing;
            DELETE FROM window_limit;
            """),
        Migration(name: "v9 stream leases", sql: """
            -- Every server's open event streams, one row each, so that the cap on a person's streams holds over
            -- all of them (StreamLeaseLedger): a server renews its rows while their streams are open, and the
            -- rows of a server that died stop counting when `expires_at` (ms) passes.
            CREATE TABLE stream_lease (
                id text PRIMARY KEY CHECK (length(id) = 20),
                account_id text NOT NULL REFERENCES account (id) ON DELETE CASCADE,
                opened_at bigint NOT NULL,
                expires_at bigint NOT NULL CHECK (expires_at > opened_at)
            );
            CREATE INDEX stream_lease_account ON stream_lease (account_id);
            """),
        Migration(name: "v10 devices", sql: """
            -- Phone apps (OwnTracks, Traccar Client) report positions with passwords of their own, kept as the
            -- SHA-256 of a 256-bit secret and looked up by it on every report.
            CREATE TABLE device (
                id text PRIMARY KEY CHECK (length(id) = 20),
                account_id text NOT NULL REFERENCES account (id) ON DELETE CASCADE,
                name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 64),
                kind text NOT NULL CHECK (kind IN ('owntracks', 'traccar')),
                secret_digest bytea NOT NULL UNIQUE CHECK (length(secret_digest) = 32),
                created_at bigint NOT NULL,
                last_used_at bigint,
                cards_digest text
            );
            CREATE INDEX device_account ON device (account_id);
            ALTER TABLE window_limit
                DROP CONSTRAINT window_limit_scope_check,
                ADD CONSTRAINT window_limit_scope_check CHECK (scope IN ('sign-ups', 'vote-openings', 'pokes', 'vote-lookups',
                    'vote-lookups-from-address', 'codes-for-account', 'codes-to-address', 'codes-from-client', 'device-reports'));
            """),
        Migration(name: "v11 push", sql: """
            -- Browsers and the iOS app registered for pushes, each held by one person (a device registered again
            -- by someone else moves to them) and gone with the session that registered it, so that a shared
            -- device tells the next person nothing of the last; the kinds of event each person mutes; and the
            -- waiting pushes' device, so that removing a device takes its pushes with it, and the person each names,
            -- so that deleting their account takes the pushes about them.
            CREATE TABLE push_subscription (
                id text PRIMARY KEY CHECK (length(id) = 20),
                account_id text NOT NULL REFERENCES account (id) ON DELETE CASCADE,
                session_digest bytea NOT NULL REFERENCES session (token_digest) ON DELETE CASCADE,
                kind text NOT NULL CHECK (kind IN ('webpush', 'apns')),
                endpoint text CHECK (char_length(endpoint) <= 2048),
                p256dh text,
                auth text,
                apns_token text,
                apns_topic text,
                target_key text NOT NULL UNIQUE,
                created_at bigint NOT NULL,
                CHECK ((kind = 'webpush') = (endpoint IS NOT NULL AND p256dh IS NOT NULL AND auth IS NOT NULL)),
                CHECK ((kind = 'apns') = (apns_token IS NOT NULL AND apns_topic IS NOT NULL))
            );
            CREATE INDEX push_subscription_account ON push_subscription (account_id);
            CREATE INDEX push_subscription_session ON push_subscription (session_digest);
            CREATE TABLE push_preference (
                account_id text PRIMARY KEY REFERENCES account (id) ON DELETE CASCADE,
                muted text NOT NULL
            );
            ALTER TABLE outbox ADD COLUMN push_subscription_id text REFERENCES push_subscription (id) ON DELETE CASCADE;
            CREATE INDEX outbox_push_subscription ON outbox (push_subscription_id) WHERE push_subscription_id IS NOT NULL;
            ALTER TABLE outbox ADD COLUMN about_id text;
            CREATE INDEX outbox_about ON outbox (about_id) WHERE about_id IS NOT NULL;
            """),
        Migration(name: "v12 blocks", sql: """
            -- As SpatiaLite's "v13 blocks": people blocking others, one row per blocker and blocked person, gone
            -- with either account, read by the blocked person's id too; and the window limit on requests to one
            -- person, which keeps someone who was declined from asking again and again.
            CREATE TABLE account_block (
                blocker_id text NOT NULL REFERENCES account (id) ON DELETE CASCADE,
                blocked_id text NOT NULL REFERENCES account (id) ON DELETE CASCADE,
                created_at bigint NOT NULL,
                PRIMARY KEY (blocker_id, blocked_id),
                CHECK (blocker_id <> blocked_id)
            );
            CREATE INDEX account_block_blocked ON account_block (blocked_id);
            ALTER TABLE window_limit
                DROP CONSTRAINT window_limit_scope_check,
                ADD CONSTRAINT window_limit_scope_check CHECK (scope IN ('sign-ups', 'vote-openings', 'pokes', 'vote-lookups',
                    'vote-lookups-from-address', 'codes-for-account', 'codes-to-address', 'codes-from-client', 'device-reports',
                    'friend-requests'));
            """),
        Migration(name: "v13 share levels", sql: """
            -- As SpatiaLite's "v14 share levels": a friendship side shares the exact position, the closest
            -- building only, or nothing (yes was exact); each person's level for new friends; and when a position
            -- came into its building area.
            ALTER TABLE friendship ADD COLUMN share text NOT NULL DEFAULT 'exact' CHECK (share IN ('exact', 'building', 'none'));
            UPDATE friendship SET share = CASE WHEN share_position THEN 'exact' ELSE 'none' END;
            ALTER TABLE friendship DROP COLUMN share_position;
            ALTER TABLE account ADD COLUMN default_share text NOT NULL DEFAULT 'exact'
                CHECK (default_share IN ('exact', 'building', 'none'));
            ALTER TABLE user_position ADD COLUMN area_since bigint NOT NULL DEFAULT 0;
            UPDATE user_position SET area_since = updated_at;
            """),
        Migration(name: "v14 share until", sql: """
            -- As SpatiaLite's "v15 share until": a level given for a while, and when it ends (ms); and the
            -- window limit on rounds of visibility notices per person.
            ALTER TABLE friendship ADD COLUMN share_until bigint;
            CREATE INDEX friendship_share_until ON friendship (share_until) WHERE share_until IS NOT NULL;
            ALTER TABLE window_limit
                DROP CONSTRAINT window_limit_scope_check,
                ADD CONSTRAINT window_limit_scope_check CHECK (scope IN ('sign-ups', 'vote-openings', 'pokes', 'vote-lookups',
                    'vote-lookups-from-address', 'codes-for-account', 'codes-to-address', 'codes-from-client', 'device-reports',
                    'friend-requests', 'visibility-notices'));
            """),
        Migration(name: "v15 alerts", sql: """
            -- As SpatiaLite's "v16 alerts": alerts friends set on each other, with what was last worked out of each,
            -- and the permissions place alerts need, gone with either account.
            CREATE TABLE watch_permission (
                person_id text NOT NULL REFERENCES account (id) ON DELETE CASCADE,
                watcher_id text NOT NULL REFERENCES account (id) ON DELETE CASCADE,
                since bigint NOT NULL,
                PRIMARY KEY (person_id, watcher_id),
                CHECK (person_id <> watcher_id)
            );
            CREATE INDEX watch_permission_watcher ON watch_permission (watcher_id);
            CREATE TABLE friend_alert (
                id text PRIMARY KEY,
                watcher_id text NOT NULL REFERENCES account (id) ON DELETE CASCADE,
                watched_id text NOT NULL REFERENCES account (id) ON DELETE CASCADE,
                target text NOT NULL CHECK (target IN ('place', 'campus', 'point', 'nearby')),
                place_id text,
                lat double precision,
                lon double precision,
                radius_m double precision NOT NULL CHECK (radius_m >= 0),
                created_at bigint NOT NULL,
                inside boolean,
                told_at bigint,
                CHECK (watcher_id <> watched_id),
                CHECK ((place_id IS NOT NULL) = (target IN ('place', 'campus'))),
                CHECK ((lat IS NOT NULL AND lon IS NOT NULL) = (target = 'point'))
            );
            CREATE INDEX friend_alert_watcher ON friend_alert (watcher_id);
            CREATE INDEX friend_alert_watched ON friend_alert (watched_id);
            """),
        Migration(name: "v16 alert changes", sql: """
            -- As SpatiaLite's "v17 alert changes": every alert set, moved on or removed (also by a cascade) notes one
            -- change, for the person it watches, which every front's alerts in memory follow.
            ALTER TABLE change DROP CONSTRAINT change_kind_check, ADD CONSTRAINT change_kind_check CHECK (kind IN ('position', 'vote', 'event', 'alert'));
            CREATE FUNCTION note_alert_change() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$ BEGIN INSERT INTO change (kind, key) VALUES ('alert', CASE WHEN TG_OP = 'DELETE' THEN OLD.watched_id ELSE NEW.watched_id END); RETURN NULL; END $$;
            CREATE TRIGGER friend_alert_change AFTER INSERT OR UPDATE OR DELETE ON friend_alert FOR EACH ROW EXECUTE FUNCTION note_alert_change();
            """),
        Migration(name: "v17 session changes", sql: """
            -- As SpatiaLite's "v18 session changes": a session ended anywhere notes a change for its account, and
            -- every front forgets the sessions of that account it holds.
            ALTER TABLE change DROP CONSTRAINT change_kind_check, ADD CONSTRAINT change_kind_check CHECK (kind IN ('position', 'vote', 'event', 'alert', 'session'));
            CREATE FUNCTION note_session_end() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$ BEGIN INSERT INTO change (kind, key) VALUES ('session', OLD.account_id); RETURN NULL; END $$;
            CREATE TRIGGER session_end AFTER DELETE ON session FOR EACH ROW EXECUTE FUNCTION note_session_end();
            """),
        Migration(name: "v18 account and friendship changes", sql: """
            -- As SpatiaLite's "v19 account and friendship changes": every front holds the accounts others see and
            -- the friendships it has read (`HeldAccounts`, `HeldFriendships`), so a changed or deleted account notes
            -- a change for it, and a friendship side made, changed or removed (also by a cascade) one for each of its
            -- two people.
            ALTER TABLE change DROP CONSTRAINT change_kind_check, ADD CONSTRAINT change_kind_check CHECK (kind IN ('position', 'vote', 'event', 'alert', 'session', 'account', 'friendship'));
            CREATE FUNCTION note_account_change() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$ BEGIN INSERT INTO change (kind, key) VALUES ('account', OLD.id); RETURN NULL; END $$;
            CREATE TRIGGER account_change AFTER UPDATE OR DELETE ON account FOR EACH ROW EXECUTE FUNCTION note_account_change();
            CREATE FUNCTION note_friendship_change() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$ BEGIN IF TG_OP = 'DELETE' THEN INSERT INTO change (kind, key) VALUES ('friendship', OLD.account_id), ('friendship', OLD.friend_id); ELSE INSERT INTO change (kind, key) VALUES ('friendship', NEW.account_id), ('friendship', NEW.friend_id); END IF; RETURN NULL; END $$;
            CREATE TRIGGER friendship_change AFTER INSERT OR UPDATE OR DELETE ON friendship FOR EACH ROW EXECUTE FUNCTION note_friendship_change();
            """),
        Migration(name: "v19 change notes by statement", sql: """
            -- The three tables every move writes (positions, alerts, events) note their changes once per statement,
            -- from its transition table, instead of once per row: a group commit writes its positions, its alert
            -- changes and its events in one statement each, and a row's note cost a call of a function with its own
            -- search_path and an insert prepared again for each row. The notes are the rows they were, events'
            -- in the order of their numbers.
            DROP TRIGGER user_position_change ON user_position;
            DROP TRIGGER friend_alert_change ON friend_alert;
            DROP TRIGGER event_change ON event;
            DROP FUNCTION note_position_change();
            DROP FUNCTION note_alert_change();
            DROP FUNCTION note_event();
            CREATE FUNCTION note_position_rows() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$ BEGIN IF TG_OP = 'DELETE' THEN INSERT INTO change (kind, key) SELECT 'position', account_id FROM gone; ELSE INSERT INTO change (kind, key) SELECT 'position', account_id FROM made; END IF; RETURN NULL; END $$;
            CREATE TRIGGER user_position_made AFTER INSERT ON user_position REFERENCING NEW TABLE AS made FOR EACH STATEMENT EXECUTE FUNCTION note_position_rows();
            CREATE TRIGGER user_position_changed AFTER UPDATE ON user_position REFERENCING NEW TABLE AS made FOR EACH STATEMENT EXECUTE FUNCTION note_position_rows();
            CREATE TRIGGER user_position_gone AFTER DELETE ON user_position REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION note_position_rows();
            CREATE FUNCTION note_alert_rows() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$ BEGIN IF TG_OP = 'DELETE' THEN INSERT INTO change (kind, key) SELECT 'alert', watched_id FROM gone; ELSE INSERT INTO change (kind, key) SELECT 'alert', watched_id FROM made; END IF; RETURN NULL; END $$;
            CREATE TRIGGER friend_alert_made AFTER INSERT ON friend_alert REFERENCING NEW TABLE AS made FOR EACH STATEMENT EXECUTE FUNCTION note_alert_rows();
            CREATE TRIGGER friend_alert_changed AFTER UPDATE ON friend_alert REFERENCING NEW TABLE AS made FOR EACH STATEMENT EXECUTE FUNCTION note_alert_rows();
            CREATE TRIGGER friend_alert_gone AFTER DELETE ON friend_alert REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION note_alert_rows();
            CREATE FUNCTION note_event_rows() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$ BEGIN INSERT INTO change (kind, key, event_id) SELECT 'event', recipient_id, id FROM made ORDER BY id; RETURN NULL; END $$;
            CREATE TRIGGER event_made AFTER INSERT ON event REFERENCING NEW TABLE AS made FOR EACH STATEMENT EXECUTE FUNCTION note_event_rows();
            """),
        Migration(name: "v20 alert moves in the feed", sql: """
            -- As SpatiaLite's "v20 alert moves in the feed": an update of an alert's state alone (inside, told_at:
            -- what a move writes) notes the alert and the state it left, which every front's memory takes as it
            -- is; any other update notes as before.
            ALTER TABLE change ADD COLUMN alert_id text CHECK (alert_id IS NULL OR kind = 'alert'), ADD COLUMN alert_inside boolean, ADD COLUMN alert_told_at bigint;
            DROP TRIGGER friend_alert_changed ON friend_alert;
            CREATE FUNCTION note_alert_updates() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$ BEGIN INSERT INTO change (kind, key, alert_id, alert_inside, alert_told_at) SELECT 'alert', made.watched_id, moved.id, moved.inside, moved.told_at FROM made LEFT JOIN was ON was.id = made.id LEFT JOIN LATERAL (SELECT made.id, made.inside, made.told_at WHERE (was.watcher_id, was.watched_id, was.target, was.place_id, was.lat, was.lon, was.radius_m, was.created_at) IS NOT DISTINCT FROM (made.watcher_id, made.watched_id, made.target, made.place_id, made.lat, made.lon, made.radius_m, made.created_at)) AS moved ON true; RETURN NULL; END $$;
            CREATE TRIGGER friend_alert_changed AFTER UPDATE ON friend_alert REFERENCING OLD TABLE AS was NEW TABLE AS made FOR EACH STATEMENT EXECUTE FUNCTION note_alert_updates();
            """),
    ]
}
