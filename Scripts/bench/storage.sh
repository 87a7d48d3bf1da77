#!/usr/bin/env bash
# Chooses the SQLite settings of `vicinity serve` by measurement: each setting in turn on one seeded database,
# with the database file evicted from the page cache before each (as the kernel does to idle files here):
#   Scripts/bench/storage.sh [SECONDS_PER_RUN] [USERS]      defaults 10 and 200000
# Seeds USERS people signed in and sharing positions around the CSULB buildings (vicinity-seed), then for each
# setting starts the server and measures the reads that still go to SQLite once places, positions and open
# votes are in memory: sessions (every signed-in request), accounts and friendships, each request another user.
#   reads      GET /v1/me and GET /v1/friends in turn, 64 connections
#   mixed      the same reads on 56 connections while 8 more send positions (PUT /v1/me/position): every
#              commit makes each reader connection drop its page cache, which is what the cache size and the
#              memory map are judged under
# Prints one table with the /v1/distance floor of the same run, and saves it under docs/results/.
set -euo pipefail
cd "$(dirname "$0")/../.."
duration="${1:-10}"
users="${2:-200000}"
port="${VICINITY_BENCH_PORT:-18084}"
source Scripts/lib/shipped-server.sh
prepare_shipped_database
swift build -c release --product vicinity-seed >/dev/null
.build/release/vicinity-seed "$work/shipped.sqlite" Data/csulb-buildings.csv "$work" "$users" 200 >/dev/null

cat > "$work/reads.lua" <<'LUA'
-- Each request another user, starting at a random line per thread: their own account, then their friends.
local tokens = {}
for line in io.lines(os.getenv("SESSIONS")) do tokens[#tokens + 1] = line:match("(%S+)") end
local counter = 0
init = function(args) math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16)); counter = math.random(#tokens) end
request = function()
  counter = counter + 1
  local path = (counter % 2 == 0) and "/v1/me" or "/v1/friends"
  return wrk.format("GET", path, { ["Authorization"] = "Bearer " .. tokens[(counter % #tokens) + 1] })
end
LUA

source Scripts/lib/wrk-run.sh
export SESSIONS="$work/sessions.txt"
database="$work/shipped.sqlite"
size_mib=$(( $(stat -c %s "$database") / 1048576 ))

evict() {
    # The same as the kernel reclaiming the file while it is idle: every page of it leaves the page cache.
    python3 - "$database" "$database-wal" <<'PY'
import os, sys
for path in sys.argv[1:]:
    if os.path.exists(path):
        fd = os.open(path, os.O_RDONLY)
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
PY
}

table="$work/table.txt"
{
    wrk_header "$users users signed in and sharing positions, database ${size_mib} MiB; ${duration} s per run"
} | tee "$table"
row() { printf "%-44s %6s %12s %10s %10s%s\n" "$@"; }

measure() {
    local label="$1"; shift
    echo "$label" | tee -a "$table"
    "$vicinity" serve --port "$port" --db "$database" --log-level warning "$@" > "$work/server.log" 2>&1 &
    server=$!
    shipped_server="http://127.0.0.1:$port"
    for _ in $(seq 1 100); do curl -sf "$shipped_server/v1/distance?from=0,0&to=0,1" >/dev/null && break; sleep 0.2; done
    evict
    local rps p50 p99 errors
    read -r rps p50 p99 errors <<<"$(wrk_measure 64 "$shipped_server/v1/me" -s "$work/reads.lua")"
    row "  reads" 64 "$rps" "$p50" "$p99" "${errors:+  (non-2xx: $errors)}" | tee -a "$table"
    evict
    wrk_measure 8 "$shipped_server/v1/me/position" -s Scripts/lib/position-updates.lua > "$work/writes.txt" &
    local writer=$!
    read -r rps p50 p99 errors <<<"$(wrk_measure 56 "$shipped_server/v1/me" -s "$work/reads.lua")"
    wait "$writer"
    row "  mixed: reads" 56 "$rps" "$p50" "$p99" "${errors:+  (non-2xx: $errors)}" | tee -a "$table"
    read -r rps p50 p99 errors < "$work/writes.txt"
    row "  mixed: position writes" 8 "$rps" "$p50" "$p99" "${errors:+  (non-2xx: $errors)}" | tee -a "$table"
    echo "  peak resident memory: $(( $(awk '/VmHWM/ { print $2 }' /proc/$server/status) / 1024 )) MiB" | tee -a "$table"
    kill "$server"; wait "$server" 2>/dev/null || true
    server=""
}

floor() {
    "$vicinity" serve --port "$port" --db "$database" --log-level warning > "$work/server.log" 2>&1 &
    server=$!
    for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/v1/distance?from=0,0&to=0,1" >/dev/null && break; sleep 0.2; done
    local rps p50 p99 errors
    read -r rps p50 p99 errors <<<"$(wrk_measure 64 "http://127.0.0.1:$port/v1/distance?from=33.779842,-118.112526&to=33.777267,-118.114777")"
    row "/v1/distance (floor)" 64 "$rps" "$p50" "$p99" | tee -a "$table"
    kill "$server"; wait "$server" 2>/dev/null || true
    server=""
}

floor
measure "5 readers, 2 MiB cache each, no memory map (GRDB's and SQLite's defaults)"
measure "2 readers (one per core)" --db-readers 2
measure "8 readers" --db-readers 8
measure "64 MiB cache each" --db-cache-mib 64
measure "1024 MiB memory map" --db-mmap-mib 1024
measure "2 readers, 1024 MiB memory map" --db-readers 2 --db-mmap-mib 1024
floor

mkdir -p docs/results
saved="docs/results/storage-$(date -u +%Y%m%dT%H%M%SZ).md"
{
    echo "# Storage settings, $(date -u +%Y-%m-%d), commit $(git describe --always --dirty 2>/dev/null || echo unknown)"
    echo
    echo '```'
    cat "$table"
    echo '```'
} > "$saved"
echo "saved $saved"
