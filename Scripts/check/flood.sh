#!/usr/bin/env bash
# Floods a release server with slow requests and shows that it stays up and keeps serving others.
#
#   Scripts/check/flood.sh [SECONDS] [CONNECTIONS]
#
# Starts `vicinity serve` (release build, shipped data) under a descriptor limit of 1024, as a small host
# would have it, so that its connection cap is 512 (a quarter of the limit and at least 512 descriptors kept
# back), 256 per client. Then two phases of CONNECTIONS (default 2,500) slow requests, each a head and then a
# body byte every 2 s, opened again whenever cut (Scripts/check/flood.py):
#   one   all from 127.0.0.1: the per-client cap refuses what is over 256 at once with 503;
#   many  spread over 20 addresses: the total cap refuses what is over 512 at once.
# Throughout, a prober on another address asks /health and signs people up, and in phase many a connection
# opened before the flood keeps asking /health. Prints what each side saw, and the server's descriptors, CPU
# time and memory; fails if the server died or stopped answering the prober.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-45}"
connections="${2:-2500}"
source Scripts/lib/shipped-server.sh
prepare_shipped_database release

port=18791
( ulimit -Sn 1024; ulimit -Hn 1024; exec "$vicinity" serve --port "$port" --db "$work/shipped.sqlite" --log-level warning ) \
    > "$work/server.log" 2>&1 &
server=$!
for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.2; done
head -n 1 "$work/server.log" | grep -o 'up to .*' || true

# CPU time (user + system clock ticks) and resident memory of the server, from /proc.
ticks() { awk '{ print $14 + $15 }' "/proc/$server/stat"; }
rss() { awk '/VmRSS/ { print $2 / 1024 " MiB" }' "/proc/$server/status"; }
hz=$(getconf CLK_TCK)

status=0
for phase in one many; do
    echo
    echo "== phase $phase"
    before=$(ticks)
    peak_fds=0
    ( while kill -0 "$server" 2>/dev/null; do ls "/proc/$server/fd" | wc -l; sleep 1; done ) > "$work/fds-$phase" &
    watcher=$!
    python3 Scripts/check/flood.py --role probe --port "$port" --phase "$phase" --seconds "$seconds" > "$work/probe-$phase.txt" &
    probe=$!
    sleep 1  # the kept connection is open before the flood
    python3 Scripts/check/flood.py --role attack --port "$port" --phase "$phase" --seconds "$seconds" --connections "$connections"
    wait "$probe"
    tee "$work/flood-$phase.txt" < "$work/probe-$phase.txt"
    kill "$watcher" 2>/dev/null || true
    if ! kill -0 "$server" 2>/dev/null; then
        echo "the server died; its log:" >&2
        tail -n 20 "$work/server.log" >&2
        exit 1
    fi
    peak_fds=$(sort -n "$work/fds-$phase" | tail -n 1)
    cpu=$(awk -v a="$before" -v b="$(ticks)" -v hz="$hz" -v s="$seconds" 'BEGIN { printf "%.1f s of CPU in %d s (%.0f%% of one core)", (b - a) / hz, s, 100 * (b - a) / hz / s }')
    echo "server: alive; descriptors at most $peak_fds of 1024; $cpu; resident $(rss)"
    if grep -q "unanswered" "$work/flood-$phase.txt"; then
        echo "the prober went unanswered in phase $phase" >&2
        status=1
    fi
done
errors=$(grep -c ' error ' "$work/server.log" || true)
echo
echo "server log: $errors error lines"
exit "$status"
