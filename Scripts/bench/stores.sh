#!/usr/bin/env bash
# The two stores side by side, one run, release build: SpatiaLite against PostgreSQL + PostGIS.
#   Scripts/bench/stores.sh [--quick] [--points N] [--users N] [--seconds S]
#
# Uses Scripts/postgres.sh's server (a fresh database of its own) and a SpatiaLite file in a temporary folder:
#   1. N uniform points (Scripts/bench/make-points.py, seed 2026; default 1,000,000) imported by
#      `vicinity import places` into each, timed; and the same CSV loaded by PostGIS alone in the same server
#      (COPY into a table, then a primary key and a GiST index on geography, with the same 512 MiB for index
#      builds that the store's bulk load takes): the yardstick for the import.
#   2. USERS synthetic people (default 10,000) seeded into each (vicinity-seed: signed in, sharing positions).
#   3. A server over each, one after the other: its start-up line (places and positions loaded into memory, and
#      how long), then, at 64 connections with wrk: the /v1/distance floor, W1 (the closest place), W2 (the 20
#      nearest within 1000 m) and PUT /v1/me/position (every request a different user; answered after the
#      commit: SpatiaLite with synchronous=NORMAL in WAL mode, PostgreSQL with its default synchronous_commit=on,
#      which waits for the WAL flush); then two reads signed in, each request another person
#      (Scripts/lib/signed-in-reads.lua): GET /v1/friends and GET /v1/votes/nearby at the person's position.
# Prints the figures and a Markdown table; saves the table under docs/results/. --quick: 100,000 points,
# 1,000 users, 3 s per run.
set -euo pipefail
cd "$(dirname "$0")/../.."

source Scripts/lib/bench-size.sh "$@"

source Scripts/lib/packages.sh
source Scripts/lib/wrk-run.sh
ensure_packages wrk curl python3
Scripts/setup.sh >/dev/null
swift build -c release --product vicinity >/dev/null
swift build -c release --product vicinity-seed >/dev/null
vicinity="$PWD/.build/release/vicinity"
seed="$PWD/.build/release/vicinity-seed"
server_url="$(Scripts/postgres.sh fresh vicinity_bench)"
yardstick_url="$(Scripts/postgres.sh fresh vicinity_yardstick)"
port=18483
work="$(mktemp -d)"
server=""
trap '[ -n "$server" ] && { kill "$server" 2>/dev/null || true; }; wait 2>/dev/null || true; rm -rf "$work"' EXIT

now() { date +%s.%N; }
elapsed() { python3 -c "print(f'{$(now) - $1:.1f}')"; }
machine="$(bench_machine)"
echo "machine: $machine; the servers, PostgreSQL and wrk share it"
echo "points: $points uniform in a 50 x 50 km square around CSULB (seed 2026); $users users; $seconds s per run"
python3 Scripts/bench/make-points.py "$points" "$work/points.csv"

declare -A figure
# --- Imports ------------------------------------------------------------------------------------------------
start=$(now)
"$vicinity" import places "$work/points.csv" --db "$work/vicinity.sqlite" >/dev/null 2>"$work/import.log"
figure[import_spatialite]=$(elapsed "$start")
start=$(now)
"$vicinity" import places "$work/points.csv" --db "$server_url" >/dev/null 2>>"$work/import.log"
figure[import_postgis]=$(elapsed "$start")
start=$(now)
psql "${yardstick_url%%\?*}" -v ON_ERROR_STOP=1 -q <<SQL
SET maintenance_work_mem = '512MB';
CREATE TABLE staging (id text, name text, category text, lat double precision, lon double precision);
\copy staging FROM '$work/points.csv' WITH (FORMAT csv, HEADER true)
CREATE TABLE place AS
    SELECT id, name, category, lat, lon, ST_SetSRID(ST_MakePoint(lon, lat), 4326)::geography AS location FROM staging;
DROP TABLE staging;
ALTER TABLE place ADD PRIMARY KEY (id);
CREATE INDEX place_location ON place USING gist (location);
SQL
figure[import_yardstick]=$(elapsed "$start")
echo "import: SpatiaLite ${figure[import_spatialite]} s, PostGIS store ${figure[import_postgis]} s, PostGIS alone (COPY, key, GiST) ${figure[import_yardstick]} s"

# --- People --------------------------------------------------------------------------------------------------
mkdir "$work/seed-spatialite" "$work/seed-postgis"
start=$(now)
"$seed" "$work/vicinity.sqlite" Data/csulb-buildings.csv "$work/seed-spatialite" "$users" 200 >/dev/null
echo "seeded SpatiaLite in $(elapsed "$start") s"
start=$(now)
"$seed" "$server_url" Data/csulb-buildings.csv "$work/seed-postgis" "$users" 200 >/dev/null 2>>"$work/import.log"
echo "seeded PostGIS in $(elapsed "$start") s"

# --- Servers -------------------------------------------------------------------------------------------------
duration="$seconds"
# One wrk run at 64 connections: a line on standard error, "requests/s p50 p99" on standard output.
measure() {
    local label="$1"; shift
    local rps p50 p99 errors
    read -r rps p50 p99 errors <<<"$(wrk_measure 64 "$@")"
    if [ -n "$errors" ]; then echo "$label: wrk saw $errors answers that were not 2xx" >&2; exit 1; fi
    printf "  %-30s %10s req/s  p50 %9s  p99 %9s\n" "$label" "$rps" "$p50" "$p99" >&2
    echo "$rps $p50 $p99"
}
run_store() {
    local name="$1" database="$2" seeds="$3" base="http://127.0.0.1:$port"
    "$vicinity" serve --port "$port" --db "$database" --log-level warning > "$work/server-$name.log" 2>&1 &
    server=$!
    for _ in $(seq 1 600); do curl -sf "$base/health" >/dev/null && break; sleep 0.2; done
    local line
    line="$(grep -m1 'Vicinity serving' "$work/server-$name.log")"
    echo "$name: ${line#*from }"
    figure[startup_$name]="$(grep -o 'loaded in [0-9.]* m\?s' <<<"$line" | sed 's/loaded in //')"
    figure[floor_$name]=$(VICINITY_PATH="/v1/distance?from=%.7f,-118.1&to=33.78,%.7f" measure "/v1/distance (floor)" "$base/" -s Scripts/lib/random-centre.lua)
    figure[w1_$name]=$(VICINITY_PATH="/v1/places/closest?lat=%.7f&lon=%.7f" measure "W1 closest" "$base/" -s Scripts/lib/random-centre.lua)
    figure[w2_$name]=$(VICINITY_PATH="/v1/places/nearby?lat=%.7f&lon=%.7f&radius=1000&limit=20" measure "W2 20 nearest in 1000 m" "$base/" -s Scripts/lib/random-centre.lua)
    figure[positions_$name]=$(SESSIONS="$seeds/sessions.txt" measure "PUT /v1/me/position" "$base/v1/me/position" -s Scripts/lib/position-updates.lua)
    figure[friends_$name]=$(SESSIONS="$seeds/sessions.txt" READ_PATH="/v1/friends" measure "GET /v1/friends signed in" "$base/" -s Scripts/lib/signed-in-reads.lua)
    figure[votes_$name]=$(SESSIONS="$seeds/sessions.txt" READ_PATH="/v1/votes/nearby?lat={lat}&lon={lon}" measure "GET /v1/votes/nearby signed in" "$base/" -s Scripts/lib/signed-in-reads.lua)
    figure[memory_$name]="$(awk '/VmHWM/ { printf "%.0f MiB", $2 / 1024 }' "/proc/$server/status")"
    kill "$server"; wait "$server" 2>/dev/null || true; server=""
}
run_store spatialite "$work/vicinity.sqlite" "$work/seed-spatialite"
run_store postgis "$server_url" "$work/seed-postgis"

# --- The table ------------------------------------------------------------------------------------------------
rps() { awk '{ print $1 }' <<<"$1"; }
p99() { awk '{ print $3 }' <<<"$1"; }
ratio() { python3 -c "print(f'{float(\"$1\".rstrip(\"k\")) / float(\"$2\".rstrip(\"k\")):.2f}')"; }
mkdir -p docs/results
report="docs/results/stores-$(date -u +%Y%m%dT%H%M%SZ).md"
{
    echo "# SpatiaLite and PostGIS behind the same server"
    echo
    echo "$(date -u +%Y-%m-%d), one run of \`Scripts/bench/stores.sh $*\` at commit $(git rev-parse --short HEAD), release build."
    echo "Machine: $machine; the server, PostgreSQL $(psql "${server_url%%\?*}" -tAc 'SHOW server_version' | awk '{ print $1 }') (Scripts/postgres.sh's settings) and wrk share it, on loopback."
    echo "$points points, $users users; $seconds s per run at 64 connections."
    echo
    echo "| what | SpatiaLite | PostGIS | PostGIS ÷ SpatiaLite |"
    echo "|---|---|---|---|"
    echo "| import of $points places | ${figure[import_spatialite]} s | ${figure[import_postgis]} s | $(ratio "${figure[import_postgis]}" "${figure[import_spatialite]}") |"
    echo "| start-up: places and positions into memory | ${figure[startup_spatialite]} | ${figure[startup_postgis]} | |"
    for key in floor w1 w2 positions friends votes; do
        case "$key" in
            floor) label="/v1/distance (floor), requests/s (p99)" ;;
            w1) label="W1 closest, requests/s (p99)" ;;
            w2) label="W2 20 nearest within 1000 m, requests/s (p99)" ;;
            positions) label="PUT /v1/me/position, requests/s (p99)" ;;
            friends) label="GET /v1/friends, each request another person signed in, requests/s (p99)" ;;
            votes) label="GET /v1/votes/nearby signed in, each request another person at their position, requests/s (p99)" ;;
        esac
        a="${figure[${key}_spatialite]}" b="${figure[${key}_postgis]}"
        echo "| $label | $(rps "$a") ($(p99 "$a")) | $(rps "$b") ($(p99 "$b")) | $(ratio "$(rps "$b")" "$(rps "$a")") |"
    done
    echo "| peak resident memory of the server | ${figure[memory_spatialite]} | ${figure[memory_postgis]} | |"
    echo
    echo "PostGIS alone loads the same CSV (COPY, primary key, GiST on geography) in ${figure[import_yardstick]} s: the store's"
    echo "import takes $(ratio "${figure[import_postgis]}" "${figure[import_yardstick]}") times that."
} > "$report"
echo
cat "$report"
echo "saved: $report"
