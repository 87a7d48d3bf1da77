#!/usr/bin/env bash
# One front against two behind nginx, over one PostgreSQL, one run, release build; then the change feed's lag
# and the fault run (Scripts/check/faults.py) on the two fronts.
#   Scripts/bench/fronts.sh [--quick] [--points N] [--users N] [--seconds S]
#
# 1. N uniform points (Scripts/bench/make-points.py, seed 2026; default 1,000,000) imported into a fresh
#    database, and USERS synthetic people (default 10,000) seeded (vicinity-seed, 200 friends for user00000).
# 2. Scripts/cluster.sh with one front: wrk at 64 connections on the front itself and through nginx; then
#    with two fronts through nginx: the /v1/distance floor, W1 (the closest place) and PUT /v1/me/position
#    (each request a different user), and each front's peak memory.
# 3. The change feed's lag (Scripts/bench/feed_lag.py): a position written through front A, asked for
#    through front B, idle and under 64 connections of position updates through nginx.
# 4. The fault run on the two fronts: 100 event streams, PostgreSQL stopped and started, then SIGKILL of one front.
# Prints the figures and a Markdown table; saves it under docs/results/. --quick: 100,000 points, 1,000 users,
# 3 s per run.
set -euo pipefail
cd "$(dirname "$0")/../.."

source Scripts/lib/bench-size.sh "$@"

source Scripts/lib/packages.sh
source Scripts/lib/wrk-run.sh
ensure_packages wrk curl python3 nginx-light
Scripts/setup.sh >/dev/null
swift build -c release --product vicinity >/dev/null
swift build -c release --product vicinity-seed >/dev/null
work="$(mktemp -d)"
export VICINITY_BIN="$PWD/.build/release/vicinity" VICINITY_CLUSTER_DB=vicinity_fronts
export VICINITY_CLUSTER_DIR="$work/cluster" VICINITY_CLUSTER_FRONT_PORT=18582
balancer=18581
trap 'Scripts/cluster.sh stop >/dev/null 2>&1 || true; Scripts/postgres.sh start >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
url="$(Scripts/postgres.sh fresh "$VICINITY_CLUSTER_DB")"

machine="$(bench_machine)"
echo "machine: $machine; the fronts, nginx, PostgreSQL and wrk share it"
python3 Scripts/bench/make-points.py "$points" "$work/points.csv"
"$VICINITY_BIN" import places "$work/points.csv" --db "$url" >/dev/null 2>"$work/import.log"
mkdir "$work/seed"
.build/release/vicinity-seed "$url" Data/csulb-buildings.csv "$work/seed" "$users" 200 >/dev/null 2>>"$work/import.log"
echo "data: $points uniform points around CSULB and the shipped data; $users users; $seconds s per run at 64 connections"
# The loads move everyone but user00000 and its first 200 friends, whom the lag probe and the fault run use.
tail -n +202 "$work/seed/sessions.txt" > "$work/load-sessions.txt"

duration="$seconds"
declare -A figure
measure() {
    local key="$1" label="$2"; shift 2
    local rps p50 p99 errors
    read -r rps p50 p99 errors <<<"$(wrk_measure 64 "$@")"
    if [ -n "$errors" ]; then echo "$label: wrk saw $errors answers that were not 2xx" >&2; exit 1; fi
    printf "  %-40s %10s req/s  p50 %9s  p99 %9s\n" "$label" "$rps" "$p50" "$p99"
    figure[$key]="$rps ($p99)"
}
# The three workloads against BASE, their figures under KEY.
workloads() {
    local key="$1" base="$2"
    VICINITY_PATH="/v1/distance?from=%.7f,-118.1&to=33.78,%.7f" measure "floor_$key" "/v1/distance (floor)" "$base/" -s Scripts/lib/random-centre.lua
    VICINITY_PATH="/v1/places/closest?lat=%.7f&lon=%.7f" measure "w1_$key" "W1 closest" "$base/" -s Scripts/lib/random-centre.lua
    SESSIONS="$work/load-sessions.txt" measure "positions_$key" "PUT /v1/me/position" "$base/v1/me/position" -s Scripts/lib/position-updates.lua
}
peak_memory() {
    local total=""
    while read -r pid _; do total+="$(awk '/VmHWM/ { printf "%.0f", $2 / 1024 }' "/proc/$pid/status") MiB, "; done < "$VICINITY_CLUSTER_DIR/fronts"
    echo "${total%, }"
}
front_a="http://127.0.0.1:$VICINITY_CLUSTER_FRONT_PORT"
front_b="http://127.0.0.1:$((VICINITY_CLUSTER_FRONT_PORT + 1))"

# --- One front --------------------------------------------------------------------------------------------
Scripts/cluster.sh start --port "$balancer" --fronts 1 | sed -n 1p
echo "one front, asked directly:"
workloads one "$front_a"
echo "one front, through nginx:"
workloads one_nginx "http://127.0.0.1:$balancer"
figure[memory_one]="$(peak_memory)"
Scripts/cluster.sh stop >/dev/null

# --- Two fronts -------------------------------------------------------------------------------------------
Scripts/cluster.sh start --port "$balancer" --fronts 2 | sed -n 1p
echo "two fronts, through nginx:"
workloads two "http://127.0.0.1:$balancer"
echo "change feed lag, front A to front B:"
figure[lag_idle]="$(python3 Scripts/bench/feed_lag.py "$front_a" "$front_b" "$work/seed" --samples 200)"
echo "  idle: ${figure[lag_idle]}"
lag_seconds=$(( seconds * 3 ))
SESSIONS="$work/load-sessions.txt" wrk -t 2 -c 64 -d "${lag_seconds}s" -s Scripts/lib/position-updates.lua \
    "http://127.0.0.1:$balancer/v1/me/position" > "$work/lag-load.txt" &
load=$!
sleep 1
figure[lag_load]="$(python3 Scripts/bench/feed_lag.py "$front_a" "$front_b" "$work/seed" --samples 300)"
wait "$load"
figure[lag_load_rps]="$(awk '/Requests\/sec/ { print $2 }' "$work/lag-load.txt")"
echo "  under 64 connections of position updates through nginx (${figure[lag_load_rps]} req/s): ${figure[lag_load]}"
figure[memory_two]="$(peak_memory)"
echo "fault run (100 streams, PostgreSQL stopped 8 s, then SIGKILL of front A):"
python3 Scripts/check/faults.py "http://127.0.0.1:$balancer" "$VICINITY_CLUSTER_DIR" "$work/seed" | tee "$work/faults.txt" | sed 's/^/  /'
Scripts/cluster.sh stop >/dev/null

# --- The table ----------------------------------------------------------------------------------------------
mkdir -p docs/results
report="docs/results/fronts-$(date -u +%Y%m%dT%H%M%SZ).md"
{
    echo "# One front against two, over one PostgreSQL"
    echo
    echo "$(date -u +%Y-%m-%d), one run of \`Scripts/bench/fronts.sh $*\` at commit $(git rev-parse --short HEAD), release build."
    echo "Machine: $machine; the fronts, nginx ($(nginx -v 2>&1 | cut -d/ -f2)), PostgreSQL and wrk share it, on loopback."
    echo "$points points, $users users; $seconds s per run at 64 connections; requests/s (p99)."
    echo
    echo "| | one front, directly | one front, through nginx | two fronts, through nginx |"
    echo "|---|---|---|---|"
    echo "| /v1/distance (floor) | ${figure[floor_one]} | ${figure[floor_one_nginx]} | ${figure[floor_two]} |"
    echo "| W1 closest | ${figure[w1_one]} | ${figure[w1_one_nginx]} | ${figure[w1_two]} |"
    echo "| PUT /v1/me/position | ${figure[positions_one]} | ${figure[positions_one_nginx]} | ${figure[positions_two]} |"
    echo "| peak memory per front | ${figure[memory_one]} | | ${figure[memory_two]} |"
    echo
    echo "Change feed, a position written through front A until front B shows it:"
    echo "- idle: ${figure[lag_idle]}"
    echo "- under 64 connections of position updates through nginx (${figure[lag_load_rps]} req/s): ${figure[lag_load]}"
    echo
    echo "Fault run (Scripts/check/faults.py: 100 event streams, position writers, readers and pokes through nginx;"
    echo "PostgreSQL stopped 8 s and started with both fronts up, then front A killed with SIGKILL):"
    echo
    sed 's/^/    /' "$work/faults.txt"
} > "$report"
echo
cat "$report"
echo "saved: $report"
