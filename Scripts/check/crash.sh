#!/usr/bin/env bash
# Crash rounds (Scripts/check/crash.py says exactly what is checked): 60 seeded people holding event streams,
# 8 clients writing for them at full pace (position updates, friend requests, accepts and friendships ended,
# pokes, votes opened, ballots, vote closes), the server killed with SIGKILL at a random moment and started
# again; then every acknowledged write and every event is looked for through the API (each person's export,
# and the streams resumed with Last-Event-ID), each must be there exactly once, nothing half done; on
# SpatiaLite, while the server is down, PRAGMA integrity_check, rtreecheck and CheckSpatialIndex of every
# R*Tree. Prints the counts of each round and the totals; fails on any loss, duplicate or half-done change.
#
#   Scripts/check/crash.sh [--quick] [--postgres] [--rounds N] [--seed S]
#       SpatiaLite: 10 rounds of 4-12 s on the release build; --quick: 3 rounds of 2-5 s on the debug build (CI)
#       --postgres: over a PostgreSQL server of the script's own (its own folder, port $VICINITY_CRASH_PG_PORT,
#       default 25438), where rounds also kill PostgreSQL (pg_ctl stop -m immediate) under the running server
#       and start it again: 6 server and 5 PostgreSQL kills; --quick: 2 and 2
#       --rounds N: N rounds (over PostgreSQL, about half of them kill PostgreSQL); --seed S: the same choices
#
# The server listens on 127.0.0.1:$VICINITY_CRASH_PORT (default 18471). Everything it starts is stopped and its
# folders removed on exit, whatever the outcome.
set -euo pipefail
cd "$(dirname "$0")/../.."
configuration=release
postgres=false
rounds=""
extra=()
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) configuration=debug ;;
        --postgres) postgres=true ;;
        --rounds) rounds="$2"; shift ;;
        --seed) extra+=(--seed "$2"); shift ;;
        *) echo "usage: $0 [--quick] [--postgres] [--rounds N] [--seed S]" >&2; exit 64 ;;
    esac
    shift
done
if [ "$configuration" = debug ]; then
    server_kills=3; postgres_kills=0; seconds=(2 5)
    $postgres && { server_kills=2; postgres_kills=2; }
else
    server_kills=10; postgres_kills=0; seconds=(4 12)
    $postgres && { server_kills=6; postgres_kills=5; }
fi
if [ -n "$rounds" ]; then
    server_kills="$rounds"; postgres_kills=0
    $postgres && { postgres_kills=$(( rounds / 2 )); server_kills=$(( rounds - postgres_kills )); }
fi
port="${VICINITY_CRASH_PORT:-18471}"
pg_port="${VICINITY_CRASH_PG_PORT:-25438}"

Scripts/setup.sh >/dev/null
swift build -c "$configuration" --product vicinity >/dev/null
swift build -c "$configuration" --product vicinity-seed >/dev/null
bin="$PWD/.build/$configuration"

source Scripts/lib/own-postgres.sh
work="$(mktemp -d)"
cleanup() {
    if [ -s "$work/server.pid" ]; then kill -9 "$(cat "$work/server.pid")" 2>/dev/null || true; fi
    stop_own_postgres
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if $postgres; then
    start_own_postgres "$pg_port" vicinity_crash || { echo "set VICINITY_CRASH_PG_PORT to a free port" >&2; exit 1; }
    db="$own_pg_url"
    store="PostgreSQL on port $pg_port"
else
    db="$work/crash.sqlite"
    store="SpatiaLite"
fi
if ! { VICINITY_BIN="$bin/vicinity" timeout 600 Scripts/load-data.sh "$db" \
        && timeout 600 "$bin/vicinity-seed" "$db" Data/csulb-buildings.csv "$work" 60 0; } > "$work/setup.log" 2>&1; then
    cat "$work/setup.log" >&2
    exit 1
fi
echo "crash check: $store, $configuration build, rounds of ${seconds[0]}-${seconds[1]} s"
postgres_script=()
$postgres && postgres_script=(--postgres "$PWD/Scripts/postgres.sh")
if ! timeout 3600 python3 Scripts/check/crash.py --vicinity "$bin/vicinity" --db "$db" --port "$port" --work "$work" \
        --sessions "$work/sessions.txt" --server-kills "$server_kills" --postgres-kills "$postgres_kills" \
        --seconds "${seconds[@]}" ${postgres_script[@]+"${postgres_script[@]}"} ${extra[@]+"${extra[@]}"}; then
    echo "the server's log, last lines:" >&2
    tail -n 30 "$work/server.log" >&2 || true
    exit 1
fi
