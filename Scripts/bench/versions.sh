#!/usr/bin/env bash
# Reads of this tree against an earlier commit's, in one run on the same points:
#   Scripts/bench/versions.sh REVISION [--points N] [--seconds S] [--connections "1 8 64"] [--rounds R]
#
# Builds `vicinity` in release from this tree and from REVISION (in a git worktree kept in
# .build-versions/COMMIT, so that a second run builds nothing again), imports the
# same N uniform points (default 1,000,000; Scripts/bench/make-points.py, seed 2026) into a SpatiaLite
# database for each with its own binary, serves both on loopback, and drives each workload at each connection
# count with wrk, alternating the two servers R times (default 2) so that a busy moment of the machine falls on
# both alike. Workloads, with centres uniform in [33.7, 33.8) x [-118.2, -118.1) (Scripts/lib/random-centre.lua):
#   floor  /v1/distance, the HTTP floor
#   W1     the closest place
#   W2     the 20 nearest within 1000 m
#   W4     every place within 100 m
# Prints, for each, the median requests/s of each side over the rounds and their ratio (this ÷ REVISION).
set -euo pipefail
cd "$(dirname "$0")/../.."

[ $# -ge 1 ] || { echo "usage: $0 REVISION [--points N] [--seconds S] [--connections \"1 8 64\"] [--rounds R]" >&2; exit 64; }
revision="$1"; shift
points=1000000
seconds=10
connection_counts="1 8 64"
rounds=2
while [ $# -gt 0 ]; do
    case "$1" in
        --points) points="$2"; shift ;;
        --seconds) seconds="$2"; shift ;;
        --connections) connection_counts="$2"; shift ;;
        --rounds) rounds="$2"; shift ;;
        *) echo "usage: $0 REVISION [--points N] [--seconds S] [--connections \"1 8 64\"] [--rounds R]" >&2; exit 64 ;;
    esac
    shift
done
old_commit="$(git rev-parse --verify "$revision^{commit}")"

source Scripts/lib/packages.sh
source Scripts/lib/wrk-run.sh
ensure_packages wrk curl python3
Scripts/setup.sh >/dev/null

work="$(mktemp -d)"
old_tree="$PWD/.build-versions/$old_commit"
servers=()
cleanup() {
    for pid in ${servers[@]+"${servers[@]}"}; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

echo "building this tree ($(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ', with uncommitted changes')) in release" >&2
swift build -c release --product vicinity >/dev/null
new_bin="$PWD/.build/release/vicinity"
echo "building $revision ($(git rev-parse --short "$old_commit")) in release" >&2
[ -d "$old_tree" ] || git worktree add --detach "$old_tree" "$old_commit" >/dev/null 2>&1
(cd "$old_tree" && swift build -c release --product vicinity >/dev/null)
old_bin="$old_tree/.build/release/vicinity"

python3 Scripts/bench/make-points.py "$points" "$work/points.csv" >/dev/null
for side in new old; do
    bin_var="${side}_bin"
    "${!bin_var}" import places "$work/points.csv" --db "$work/$side.sqlite" >/dev/null 2>"$work/import-$side.log"
done

start() {
    local bin="$1" port="$2" database="$3" log="$4"
    "$bin" serve --port "$port" --db "$database" --log-level warning > "$log" 2>&1 &
    servers+=($!)
    for _ in $(seq 1 600); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && return 0; sleep 0.2; done
    echo "the server on port $port did not answer within 120 s; its log:" >&2
    cat "$log" >&2
    return 1
}
new_port=18490
old_port=18491
start "$new_bin" "$new_port" "$work/new.sqlite" "$work/new.log"
start "$old_bin" "$old_port" "$work/old.sqlite" "$work/old.log"

duration="$seconds"
requests_per_second() {
    local port="$1" connections="$2" path="$3" rps p50 p99 errors
    read -r rps p50 p99 errors <<<"$(VICINITY_PATH="$path" wrk_measure "$connections" "http://127.0.0.1:$port/" -s Scripts/lib/random-centre.lua)"
    if [ -n "$errors" ]; then echo "wrk saw $errors answers that were not 2xx on port $port ($path)" >&2; exit 1; fi
    echo "$rps"
}
median() { python3 -c 'import statistics, sys; print(f"{statistics.median(float(v) for v in sys.argv[1:]):.0f}")' "$@"; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); both servers and wrk share it"
echo "data: $points uniform points (seed 2026), SpatiaLite; $seconds s per run, $rounds rounds alternated; medians"
echo
echo "| workload | conns | $(git rev-parse --short HEAD) req/s | $(git rev-parse --short "$old_commit") req/s | ratio |"
echo "|---|---|---|---|---|"
for connections in $connection_counts; do
    for workload in floor W1 W2 W4; do
        case "$workload" in
            floor) path="/v1/distance?from=%.7f,-118.1&to=33.78,%.7f" ;;
            W1) path="/v1/places/closest?lat=%.7f&lon=%.7f" ;;
            W2) path="/v1/places/nearby?lat=%.7f&lon=%.7f&radius=1000&limit=20" ;;
            W4) path="/v1/places/nearby?lat=%.7f&lon=%.7f&radius=100&limit=500" ;;
        esac
        new_runs=() old_runs=()
        for round in $(seq 1 "$rounds"); do
            # Each round starts with the other side, so neither always runs second.
            if [ $(( round % 2 )) -eq 1 ]; then
                new_runs+=("$(requests_per_second "$new_port" "$connections" "$path")")
                old_runs+=("$(requests_per_second "$old_port" "$connections" "$path")")
            else
                old_runs+=("$(requests_per_second "$old_port" "$connections" "$path")")
                new_runs+=("$(requests_per_second "$new_port" "$connections" "$path")")
            fi
        done
        new_rps="$(median "${new_runs[@]}")"
        old_rps="$(median "${old_runs[@]}")"
        printf "| %s | %s | %s | %s | %.2f× |\n" "$workload" "$connections" "$new_rps" "$old_rps" \
            "$(python3 -c "print($new_rps / $old_rps)")"
    done
done
