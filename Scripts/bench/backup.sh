#!/usr/bin/env bash
# What `vicinity backup` costs at 1M places, release build, on a SpatiaLite file in a temporary folder:
#   Scripts/bench/backup.sh [--points N] [--users N] [--seconds S]     defaults 1,000,000, 10,000 and 30
#   1. N uniform points (make-points.py beside this script, seed 2026) imported, and USERS people seeded
#      (vicinity-seed: signed in, sharing positions).
#   2. `vicinity backup` three times with nothing else running: copy and check times, the backup's size.
#   3. The server over the file and 8 wrk connections sending positions for S seconds, first alone, then with a
#      backup started 5 s in: the writes' rate and latency in both runs, the backup's times, and the largest
#      size the server's -wal file reached in each (checkpoints cannot pass the backup's snapshot).
#   4. SQLite's copy of the file holding one snapshot in steps of 16 to 16,384 pages, and in one step (Python's
#      sqlite3 module, the same SQLite library), five rounds: the median and fastest time, and the longest step.
#   5. SQLite's default backup, which restarts when another connection commits between steps, 1024 pages a
#      step, while the positions are written: given 60 s.
# Prints the figures and saves them under docs/results/.
set -euo pipefail
cd "$(dirname "$0")/../.."
bench="Scripts/bench"

points=1000000
users=10000
seconds=30
while [ $# -gt 0 ]; do
    case "$1" in
        --points) points="$2"; shift ;;
        --users) users="$2"; shift ;;
        --seconds) seconds="$2"; shift ;;
        *) echo "usage: $0 [--points N] [--users N] [--seconds S]" >&2; exit 64 ;;
    esac
    shift
done
for tool in wrk curl python3; do
    command -v "$tool" >/dev/null || { echo "backup.sh: $tool is missing (Scripts/setup.sh, or apt-get install $tool)" >&2; exit 1; }
done

swift build -c release --product vicinity >/dev/null
swift build -c release --product vicinity-seed >/dev/null
vicinity="$PWD/.build/release/vicinity"
seed="$PWD/.build/release/vicinity-seed"
port="${VICINITY_BENCH_PORT:-18485}"
work="$(mktemp -d)"
server=""
trap '[ -n "$server" ] && { kill "$server" 2>/dev/null || true; }; wait 2>/dev/null || true; rm -rf "$work"' EXIT
database="$work/vicinity.sqlite"
out="$work/figures.txt"
say() { echo "$@" | tee -a "$out"; }

now() { date +%s.%N; }
elapsed() { python3 -c "print(f'{$(now) - $1:.1f}')"; }
mib() { python3 -c "print(f'{$(stat -c %s "$1") / 1048576:.1f} MiB')"; }

say "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/Mem:/ { print $2 }') GiB; load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 "$bench/make-points.py" "$points" "$work/points.csv"
start=$(now)
"$vicinity" import places "$work/points.csv" --db "$database" >/dev/null 2>"$work/import.log"
say "import of $points places: $(elapsed "$start") s"
mkdir "$work/seed"
"$seed" "$database" Data/csulb-buildings.csv "$work/seed" "$users" 200 >/dev/null
say "database with $users people: $(mib "$database")"

# --- 2. Idle ----------------------------------------------------------------------------------------------------
for run in 1 2 3; do
    start=$(now)
    line="$("$vicinity" backup --db "$database" --to "$work/backup.sqlite" --replace)"
    say "idle backup $run: $(elapsed "$start") s in all; ${line#*: }"
done
say "backup file: $(mib "$work/backup.sqlite") ($(stat -c %s "$work/backup.sqlite") bytes); gzip -1: $(gzip -1 -c "$work/backup.sqlite" | wc -c | python3 -c 'import sys; print(f"{int(sys.stdin.read()) / 1048576:.1f} MiB")')"

# --- 3. Under position writes -----------------------------------------------------------------------------------
"$vicinity" serve --port "$port" --db "$database" --log-level warning > "$work/server.log" 2>&1 &
server=$!
for _ in $(seq 1 300); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.2; done
export SESSIONS="$work/seed/sessions.txt"
writes() {
    wrk -t 2 -c 8 -d "${seconds}s" --latency -s Scripts/lib/position-updates.lua "http://127.0.0.1:$port/v1/me/position" | awk '
        /Requests\/sec/ { rps = $2 } $1 == "50%" { p50 = $2 } $1 == "99%" { p99 = $2 } $1 == "Latency" && $2 != "Distribution" { max = $4 } /Non-2xx/ { errors = $NF }
        END { printf "%s writes/s, p50 %s, p99 %s, max %s%s", rps, p50, p99, max, errors ? ", non-2xx " errors : "" }'
}
# The -wal's size every 0.2 s until FILE exists; prints the largest.
largest_wal() {
    local sizes="$work/wal-sizes-$RANDOM"
    touch "$sizes"
    while [ ! -e "$1" ]; do stat -c %s "$database-wal" 2>/dev/null >> "$sizes" || true; sleep 0.2; done
    sort -n "$sizes" | tail -1 | python3 -c 'import sys; print(f"{int(sys.stdin.read() or 0) / 1048576:.1f} MiB")'
}
largest_wal "$work/alone-done" > "$work/wal-alone.txt" &
sampler=$!
say "positions alone, 8 connections, $seconds s: $(writes)"
touch "$work/alone-done"; wait "$sampler"
say "largest -wal meanwhile: $(cat "$work/wal-alone.txt")"
writes > "$work/writes.txt" &
writer=$!
sleep 5
largest_wal "$work/backup-done" > "$work/wal-backup.txt" &
sampler=$!
start=$(now)
line="$("$vicinity" backup --db "$database" --to "$work/backup-under-load.sqlite")"
took=$(elapsed "$start")
touch "$work/backup-done"; wait "$sampler"
wait "$writer"
say "positions with a backup from 5 s on: $(cat "$work/writes.txt")"
say "backup under writes: $took s in all; ${line#*: }"
say "largest -wal during the backup: $(cat "$work/wal-backup.txt")"

# --- 5. SQLite's restarting backup under the same writes ----------------------------------------------------------
wrk -t 2 -c 8 -d 70s -s Scripts/lib/position-updates.lua "http://127.0.0.1:$port/v1/me/position" >/dev/null &
writer=$!
sleep 2
say "$(python3 - "$database" "$work/restarting.sqlite" <<'PY'
import sqlite3, sys, time
source = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True, isolation_level=None, timeout=10)
target = sqlite3.connect(sys.argv[2])
steps, restarts, last, started = 0, 0, None, time.time()
class GaveUp(Exception): pass
def progress(status, remaining, total):
    global steps, restarts, last
    steps += 1
    if last is not None and remaining > last: restarts += 1
    last = remaining
    if time.time() - started > 60: raise GaveUp()
try:
    source.backup(target, pages=1024, progress=progress)
    print(f"restarting backup (no snapshot held), 1024 pages a step, under the writes: done in {time.time() - started:.1f} s, {steps} steps, {restarts} restarts")
except GaveUp:
    print(f"restarting backup (no snapshot held), 1024 pages a step, under the writes: unfinished after 60 s, {steps} steps, {restarts} restarts")
PY
)"
wait "$writer"
kill "$server"; wait "$server" 2>/dev/null || true; server=""

# --- 4. Step sizes, one snapshot held -----------------------------------------------------------------------------
python3 - "$database" "$work/steps.sqlite" <<'PY' | tee -a "$out"
import os, sqlite3, statistics, sys, time
def copy(pages):
    if os.path.exists(sys.argv[2]): os.remove(sys.argv[2])
    source = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True, isolation_level=None)
    source.execute("BEGIN"); source.execute("SELECT count(*) FROM sqlite_schema").fetchone()
    target = sqlite3.connect(sys.argv[2])
    steps, longest, last = 0, 0.0, time.perf_counter()
    def progress(status, remaining, total):
        nonlocal steps, longest, last
        now = time.perf_counter(); longest = max(longest, now - last); last = now; steps += 1
    started = time.perf_counter()
    source.backup(target, pages=pages, progress=progress)
    took = time.perf_counter() - started
    source.close(); target.close()
    return took, steps, longest
# Five rounds of every size in turn, so that a busy moment of the machine falls on all sizes alike.
sizes = [16, 64, 256, 1024, 4096, 16384, -1]
runs = {pages: [] for pages in sizes}
for _ in range(5):
    for pages in sizes: runs[pages].append(copy(pages))
for pages in sizes:
    label = "whole file" if pages < 0 else f"{pages} pages"
    times = sorted(r[0] for r in runs[pages])
    print(f"snapshot copy, {label} a step: median {statistics.median(times):.2f} s (fastest {times[0]:.2f} s), {runs[pages][0][1]} steps, longest step {max(r[2] for r in runs[pages]) * 1000:.0f} ms")
PY

mkdir -p docs/results
result="docs/results/backup-$(date -u +%Y%m%dT%H%M%SZ).md"
{ echo '```'; cat "$out"; echo '```'; } > "$result"
echo "saved $result"
