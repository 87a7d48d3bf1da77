#!/usr/bin/env bash
# A PostgreSQL 15 server with PostGIS 3 for Vicinity's tests and for trying it out, on loopback, in a folder of
# its own; installs Debian's packages when they are missing.
#
#   Scripts/postgres.sh start    start it (a new cluster the first time), with a `vicinity` database that has
#                                PostGIS; does nothing when it already runs. Prints the URL.
#   Scripts/postgres.sh stop     stop it (the cluster stays for the next start)
#   Scripts/postgres.sh restart  stop it (fast: open sessions are ended) and start it again, as an operator's
#                                restart or a failover does to clients
#   Scripts/postgres.sh crash    stop it as a power cut would (`pg_ctl stop -m immediate`: no checkpoint, every
#                                session dropped; the next start recovers from the WAL)
#   Scripts/postgres.sh destroy  stop it and remove its folder
#   Scripts/postgres.sh url      print the URL to give `--db` (postgres://vicinity@127.0.0.1:PORT/vicinity)
#   Scripts/postgres.sh fresh NAME  start it, (re)create an empty database NAME with PostGIS and pg_trgm, and
#                                print its URL: what the tests and the contract check run against
#   Scripts/postgres.sh status   exit 0 when it answers
#
# VICINITY_PG_DIR (default /tmp/vicinity-postgres) and VICINITY_PG_PORT (default 25432) choose the folder and
# the port. The server listens on 127.0.0.1 only and trusts local connections: it is for tests and trials on
# one machine, not for production, which runs its own PostgreSQL.
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib/packages.sh

folder="${VICINITY_PG_DIR:-/tmp/vicinity-postgres}"
port="${VICINITY_PG_PORT:-25432}"
user=vicinity
database=vicinity
url="postgres://$user@127.0.0.1:$port/$database"

# The default ports (this one, the crash check's and the soak's) lie below the kernel's ephemeral range
# (net.ipv4.ip_local_port_range, 32768-60999 on Debian): a port inside it can be held for a moment by any outgoing
# connection on the machine, and a server started then fails with "Address already in use". A check under load once
# did exactly that, so a port chosen inside the range is named before it is tried.
warn_if_ephemeral() {
    local low high
    read -r low high < /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || return 0
    if [ "$port" -ge "$low" ] && [ "$port" -le "$high" ]; then
        echo "postgres.sh: port $port lies in the kernel's ephemeral range ($low-$high); an outgoing connection may hold it" >&2
    fi
}

run_as_postgres=()
[ "$(id -u)" -eq 0 ] && run_as_postgres=(runuser -u postgres --)

binaries() { ls -d /usr/lib/postgresql/15/bin 2>/dev/null; }

answers() { pg_isready -q -h 127.0.0.1 -p "$port" 2>/dev/null; }

start() {
    ensure_packages postgresql-15 postgresql-15-postgis-3 postgresql-client-15
    local bin
    bin="$(binaries)"
    if answers; then echo "$url"; return 0; fi
    warn_if_ephemeral
    mkdir -p "$folder"
    if [ ! -s "$folder/data/PG_VERSION" ]; then
        mkdir -p "$folder/data" "$folder/socket"
        [ "$(id -u)" -eq 0 ] && chown -R postgres "$folder"
        "${run_as_postgres[@]}" "$bin/initdb" -D "$folder/data" -A trust -U "$user" -E UTF8 --locale=C.UTF-8 >/dev/null
    fi
    # fsync stays on: tests of durability and concurrency need the real thing. A start that fails says why (the
    # end of the server's log) and is tried once more, as a check that must start its own server would rather
    # report a cause than stop on "could not start server".
    local attempt
    for attempt in 1 2; do
        "${run_as_postgres[@]}" "$bin/pg_ctl" -D "$folder/data" -l "$folder/postgres.log" -w -t 60 start -o \
            "-p $port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$folder/socket -c max_connections=300" >/dev/null \
            && break
        echo "postgres.sh: PostgreSQL did not start on port $port (attempt $attempt); the end of its log:" >&2
        tail -n 20 "$folder/postgres.log" >&2 || true
        [ "$attempt" = 2 ] && return 1
        sleep 2
    done
    psql -h 127.0.0.1 -p "$port" -U "$user" -d postgres -v ON_ERROR_STOP=1 -qtA \
        -c "SELECT 1 FROM pg_database WHERE datname = '$database'" | grep -q 1 \
        || psql -h 127.0.0.1 -p "$port" -U "$user" -d postgres -v ON_ERROR_STOP=1 -q -c "CREATE DATABASE $database"
    PGOPTIONS=--client-min-messages=warning psql -h 127.0.0.1 -p "$port" -U "$user" -d "$database" -v ON_ERROR_STOP=1 -q \
        -c "CREATE EXTENSION IF NOT EXISTS postgis" -c "CREATE EXTENSION IF NOT EXISTS pg_trgm"
    echo "$url"
}

# An empty database of its own, made anew each time: tests and checks never see what an earlier run left.
fresh() {
    local name="$1"
    [[ "$name" =~ ^[a-z_][a-z0-9_]*$ ]] || { echo "postgres.sh: a database name is lower-case letters, digits and _" >&2; exit 64; }
    start >/dev/null
    PGOPTIONS=--client-min-messages=warning psql -h 127.0.0.1 -p "$port" -U "$user" -d postgres -v ON_ERROR_STOP=1 -q \
        -c "DROP DATABASE IF EXISTS $name WITH (FORCE)" -c "CREATE DATABASE $name"
    PGOPTIONS=--client-min-messages=warning psql -h 127.0.0.1 -p "$port" -U "$user" -d "$name" -v ON_ERROR_STOP=1 -q \
        -c "CREATE EXTENSION postgis" -c "CREATE EXTENSION pg_trgm"
    echo "postgres://$user@127.0.0.1:$port/$name?sslmode=disable"
}

stop() {
    local bin
    bin="$(binaries)" || return 0
    [ -s "$folder/data/PG_VERSION" ] || return 0
    "${run_as_postgres[@]}" "$bin/pg_ctl" -D "$folder/data" -m fast -w stop >/dev/null 2>&1 || true
}

crash() {
    local bin
    bin="$(binaries)" || return 0
    [ -s "$folder/data/PG_VERSION" ] || return 0
    "${run_as_postgres[@]}" "$bin/pg_ctl" -D "$folder/data" -m immediate -w stop >/dev/null 2>&1 || true
}

case "${1:-}" in
    start) start ;;
    crash) crash ;;
    fresh) fresh "${2:?usage: Scripts/postgres.sh fresh NAME}" ;;
    stop) stop ;;
    restart) stop; start >/dev/null ;;
    destroy) stop; rm -rf "$folder" ;;
    url) echo "$url" ;;
    status) answers ;;
    *) echo "usage: Scripts/postgres.sh start|stop|restart|crash|destroy|url|status|fresh NAME" >&2; exit 64 ;;
esac
