#!/usr/bin/env bash
# HTTP throughput and latency of a release build on loopback, with wrk, against the shipped data:
#   Scripts/bench/http.sh [SECONDS_PER_RUN]     default 10
# For each endpoint and 1, 16 and 64 connections (wrk on 2 threads, 1 for a single connection), prints requests/s and p99 latency,
# beside the floor of the same run: /v1/distance, which parses two positions and touches no data.
# Query positions cycle through every CSULB building in Data/csulb-buildings.csv.
set -euo pipefail
cd "$(dirname "$0")/../.."
duration="${1:-10}"
port="${VICINITY_BENCH_PORT:-18080}"
source Scripts/lib/shipped-server.sh
start_shipped_server "$port"

# A Lua script that walks wrk's requests through the building positions.
{
    echo "positions = {"
    awk -F, 'NR > 1 { printf "  \"lat=%s&lon=%s\",\n", $4, $5 }' Data/csulb-buildings.csv
    echo "}"
    cat <<'LUA'
counter = 0
base = os.getenv("VICINITY_BENCH_PATH")
request = function()
  counter = counter + 1
  local position = positions[(counter % #positions) + 1]
  local separator = string.find(base, "?", 1, true) and "&" or "?"
  return wrk.format("GET", base .. separator .. position)
end
LUA
} > "$work/positions.lua"

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); server and wrk share it"
printf "%-48s %6s %12s %10s\n" endpoint conns "requests/s" "p99"
run() {
    local label="$1" path="$2" connections="$3" script=()
    [[ "$label" == /v1/places* ]] && script=(-s "$work/positions.lua")
    local out
    local threads=$(( connections < 2 ? 1 : 2 ))
    out=$(VICINITY_BENCH_PATH="$path" wrk -t "$threads" -c "$connections" -d "${duration}s" --latency "${script[@]}" "http://127.0.0.1:$port$path")
    local rps p99 errors
    rps=$(awk '/Requests\/sec/ { print $2 }' <<<"$out")
    p99=$(awk '$1 == "99%" { print $2 }' <<<"$out")
    errors=$(awk '/Non-2xx/ { print $NF }' <<<"$out")
    printf "%-48s %6s %12s %10s%s\n" "$label" "$connections" "$rps" "$p99" "${errors:+  (non-2xx: $errors)}"
}
for connections in 1 16 64; do
    run "/v1/distance (floor)" "/v1/distance?from=33.779842,-118.112526&to=33.777267,-118.114777" "$connections"
    run "/health" "/health" "$connections"
    run "/v1/places/closest" "/v1/places/closest" "$connections"
    run "/v1/places/nearby?radius=1000&limit=20" "/v1/places/nearby?radius=1000&limit=20" "$connections"
done
