#!/usr/bin/env bash
# A soak (Scripts/bench/soak.py): the release server over the shipped data and 2,000 seeded people (user00000
# with 200 friends) under steady mixed load for N minutes: places nearby and closest, friends and nearby
# friends, position updates, ballots (a new vote whenever one is full), event streams connecting and leaving.
# Every 10 s a row: requests/s, p50 and p99, unexpected answers, the server's resident memory, open
# descriptors, threads, connections and streams open, CPU; then whether each stays flat (the last third of the
# rows against the first).
#
#   Scripts/bench/soak.sh [--postgres] [--minutes N] [--rate R]     defaults: SpatiaLite, 10 minutes, 200 requests/s
#       --postgres: over a PostgreSQL server of the script's own (its own folder, port $VICINITY_SOAK_PG_PORT,
#       default 25439)
#
# The server listens on 127.0.0.1:$VICINITY_SOAK_PORT (default 18571). Everything it starts is stopped and its
# folders removed on exit. Exits 1 when a figure does not stay flat or an answer was not one expected.
set -euo pipefail
cd "$(dirname "$0")/../.."
postgres=false
minutes=10
rate=200
while [ $# -gt 0 ]; do
    case "$1" in
        --postgres) postgres=true ;;
        --minutes) minutes="$2"; shift ;;
        --rate) rate="$2"; shift ;;
        *) echo "usage: $0 [--postgres] [--minutes N] [--rate R]" >&2; exit 64 ;;
    esac
    shift
done
port="${VICINITY_SOAK_PORT:-18571}"
pg_port="${VICINITY_SOAK_PG_PORT:-25439}"

Scripts/setup.sh >/dev/null
swift build -c release --product vicinity >/dev/null
swift build -c release --product vicinity-seed >/dev/null
bin="$PWD/.build/release"
source Scripts/lib/own-postgres.sh
work="$(mktemp -d)"
server=""
cleanup() {
    if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; fi
    # Up to 10 s for a graceful stop, then SIGKILL: the trap never waits for ever.
    for _ in $(seq 1 50); do { [ -n "$server" ] && kill -0 "$server" 2>/dev/null; } || break; sleep 0.2; done
    if [ -n "$server" ]; then kill -9 "$server" 2>/dev/null || true; fi
    stop_own_postgres
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if $postgres; then
    start_own_postgres "$pg_port" vicinity_soak || { echo "set VICINITY_SOAK_PG_PORT to a free port" >&2; exit 1; }
    db="$own_pg_url"
    store="PostgreSQL 15 + PostGIS 3 (own server on port $pg_port)"
else
    db="$work/soak.sqlite"
    store="SpatiaLite"
fi
if ! { VICINITY_BIN="$bin/vicinity" timeout 600 Scripts/load-data.sh "$db" \
        && timeout 600 "$bin/vicinity-seed" "$db" Data/csulb-buildings.csv "$work" 2000 200; } > "$work/setup.log" 2>&1; then
    cat "$work/setup.log" >&2
    exit 1
fi
"$bin/vicinity" serve --port "$port" --db "$db" --log-level warning > "$work/server.log" 2>&1 &
server=$!
for _ in $(seq 1 150); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.2; done
curl -sf "http://127.0.0.1:$port/health" >/dev/null || { echo "the server did not answer within 30 s:" >&2; cat "$work/server.log" >&2; exit 1; }
echo "soak: $store, release build $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), load average at start $(cut -d' ' -f1-3 /proc/loadavg)"
status=0
timeout $(( minutes * 60 + 300 )) python3 Scripts/bench/soak.py "http://127.0.0.1:$port" "$server" "$work" --minutes "$minutes" --rate "$rate" || status=$?
if ! kill -0 "$server" 2>/dev/null; then
    echo "the server is gone; its log, last lines:" >&2
    tail -n 30 "$work/server.log" >&2
    status=1
fi
exit "$status"
