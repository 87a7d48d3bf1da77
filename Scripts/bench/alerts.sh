#!/usr/bin/env bash
# What alerts cost position updates (W5), one run, release build, on SpatiaLite and on PostGIS:
#   Scripts/bench/alerts.sh [SECONDS_PER_RUN] [USERS]      defaults 10 and 10000
# For each store, two databases with the shipped data and USERS people seeded alike (vicinity-seed: signed in,
# sharing positions, each friends with the next four in a ring and allowing them place alerts), one where nobody
# holds an alert and one where everyone holds 5 (four place alerts, 150 m around random CSULB buildings, on
# their ring friends, and a mutual 300 m nearby alert with a partner). A server over each in turn, two rounds
# alternating: the /v1/distance floor, then PUT /v1/me/position at 64 connections, every request a different
# user: W5 as the other benchmarks run it (Scripts/lib/position-updates.lua: each user sent to a spot near a
# building, the alerts read at every move), and a walk across 250 m in four steps
# (Scripts/lib/position-walks.lua) that crosses the alerts' edges, so that they change state and tell at a rate
# no campus reaches. Prints each run, then the ratios with ÷ without per store (the target, for W5, is ≥ 0.8),
# and saves a table under docs/results/.
set -euo pipefail
cd "$(dirname "$0")/../.."
duration="${1:-10}"
users="${2:-10000}"
port="${VICINITY_BENCH_PORT:-18484}"

source Scripts/lib/packages.sh
source Scripts/lib/wrk-run.sh
ensure_packages wrk curl python3
Scripts/setup.sh >/dev/null
swift build -c release --product vicinity >/dev/null
swift build -c release --product vicinity-seed >/dev/null
vicinity="$PWD/.build/release/vicinity"
seed="$PWD/.build/release/vicinity-seed"
work="$(mktemp -d)"
server=""
trap '[ -n "$server" ] && { kill "$server" 2>/dev/null || true; }; wait 2>/dev/null || true; rm -rf "$work"' EXIT
machine="$(bench_machine)"
echo "machine: $machine; the servers, PostgreSQL and wrk share it"

declare -A database
database[spatialite_without]="$work/without.sqlite"
database[spatialite_with]="$work/with.sqlite"
database[postgis_without]="$(Scripts/postgres.sh fresh vicinity_alerts_without)"
database[postgis_with]="$(Scripts/postgres.sh fresh vicinity_alerts_with)"
# Seeded into SpatiaLite, then copied whole into PostGIS (`vicinity copy`: the same rows, tokens included): one
# write per row through the store would take half an hour over PostgreSQL, each commit waiting for its flush.
for variant in without with; do
    alerts=0
    [ "$variant" = with ] && alerts=5
    VICINITY_BIN="$vicinity" Scripts/load-data.sh "${database[spatialite_$variant]}" >/dev/null
    mkdir "$work/spatialite_$variant"
    start=$(date +%s)
    "$seed" "${database[spatialite_$variant]}" Data/csulb-buildings.csv "$work/spatialite_$variant" "$users" 200 0 "$alerts" >/dev/null 2>>"$work/seed.log"
    echo "seeded $variant ($alerts alerts each) in $(( $(date +%s) - start )) s"
    "$vicinity" copy --from "${database[spatialite_$variant]}" --to "${database[postgis_$variant]}" >/dev/null 2>>"$work/seed.log"
    cp -r "$work/spatialite_$variant" "$work/postgis_$variant"
done

# Every client here is on one address: wrk's 64 connections stay under one client's cap.
export VICINITY_MAX_CONNECTIONS_PER_CLIENT=1024
declare -A runs
run() {
    local name="$1" base="http://127.0.0.1:$port" rps p50 p99 errors
    "$vicinity" serve --port "$port" --db "${database[$name]}" --log-level warning > "$work/server-$name.log" 2>&1 &
    server=$!
    for _ in $(seq 1 600); do curl -sf "$base/health" >/dev/null && break; sleep 0.2; done
    [ "$round" = 1 ] && echo "  $name: $(grep -m1 -o '([0-9]* places, [0-9]* positions and [0-9]* alerts in memory' "$work/server-$name.log" | tr -d '(')"
    read -r rps p50 p99 errors <<<"$(wrk_measure 64 "$base/v1/distance?from=33.779842,-118.112526&to=33.777267,-118.114777")"
    printf "  %-24s floor %10s req/s  p99 %9s\n" "$name" "$rps" "$p99"
    for workload in updates walks; do
        read -r rps p50 p99 errors <<<"$(SESSIONS="$work/$name/sessions.txt" wrk_measure 64 "$base/v1/me/position" -s "Scripts/lib/position-$workload.lua")"
        if [ -n "$errors" ]; then echo "$name: wrk saw $errors answers that were not 2xx" >&2; tail -20 "$work/server-$name.log" >&2; exit 1; fi
        printf "  %-24s %-7s %10s req/s  p50 %9s  p99 %9s\n" "$name" "$workload" "$rps" "$p50" "$p99"
        runs[${name}_$workload]="${runs[${name}_$workload]:-} $rps"
    done
    runs[${name}_memory]="$(awk '/VmHWM/ { printf "%.0f", $2 / 1024 }' "/proc/$server/status")"
    # Resident once idle past the server's trim of the allocator's free memory (`MemoryTrim`, every 10 s).
    if [ "$round" = 2 ]; then sleep 11; runs[${name}_idle]="$(awk '/VmRSS/ { printf "%.0f", $2 / 1024 }' "/proc/$server/status")"; fi
    kill "$server"; wait "$server" 2>/dev/null || true; server=""
}
for round in 1 2; do
    echo "round $round"
    for store in spatialite postgis; do run "${store}_without"; run "${store}_with"; done
done
told="$(psql "${database[postgis_with]%%\?*}" -tAc "SELECT type, count(*) FROM event WHERE type LIKE 'friend_%' AND type <> 'friend_accepted' GROUP BY type ORDER BY type" | tr '\n' ' ')"

mean() { python3 -c "import sys; v=[float(x.rstrip('k'))*(1000 if x.endswith('k') else 1) for x in sys.argv[1:]]; print(f'{sum(v)/len(v):.0f}')" $1; }
mkdir -p docs/results
report="docs/results/alerts-$(date -u +%Y%m%dT%H%M%SZ).md"
{
    echo "# Position updates (W5) with and without alerts"
    echo
    echo "$(date -u +%Y-%m-%d), one run of \`Scripts/bench/alerts.sh $*\` at commit $(git rev-parse --short HEAD), release build."
    echo "Machine: $machine; the server, PostgreSQL and wrk share it, on loopback. $users users, $duration s per run,"
    echo "64 connections, two rounds alternating without and with; requests/s of each round, and their mean."
    echo
    echo "| store, workload | without alerts | with 5 alerts each | with ÷ without |"
    echo "|---|---|---|---|"
    for store in spatialite postgis; do
        for workload in updates walks; do
            without="${runs[${store}_without_$workload]}" with="${runs[${store}_with_$workload]}"
            a="$(mean "$without")" b="$(mean "$with")"
            label="W5"; [ "$workload" = walks ] && label="walks across the alerts' edges"
            echo "| $store, $label | ${without# } (mean $a) | ${with# } (mean $b) | $(python3 -c "print(f'{$b / $a:.2f}')") |"
        done
    done
    echo
    echo "Peak resident memory of the server in its last round, without and with alerts (MiB): SpatiaLite"
    echo "${runs[spatialite_without_memory]} and ${runs[spatialite_with_memory]}, PostGIS ${runs[postgis_without_memory]} and ${runs[postgis_with_memory]};"
    echo "resident 11 s after its last request: SpatiaLite ${runs[spatialite_without_idle]} and ${runs[spatialite_with_idle]}, PostGIS"
    echo "${runs[postgis_without_idle]} and ${runs[postgis_with_idle]}."
    echo "Alert events recorded over PostGIS during its runs with alerts: ${told:-none}."
} > "$report"
echo
cat "$report"
echo "saved: $report"
