#!/usr/bin/env bash
# Event-to-push latency of a release build, to a push service with its browser on loopback
# (Tests/MailTestSupport/push_service.py: it checks each push's VAPID token and decrypts it), in one run:
#   Scripts/bench/push.sh [RATE] [SECONDS] [USERS] [DEVICES]    defaults 1000 pushes a second, 20 s, 10000, 5
# Seeds USERS people (vicinity-seed), each signed in and registering DEVICES browsers at the push service, then
# sends friend requests between random pairs for SECONDS, paced so that their pushes (one per device of the
# recipient) come to RATE a second. Prints the rates the requests and pushes were made at, the rate pushes
# arrived at, the time from each event (its recorded time) to the push service's receipt of each of its
# pushes (p50, p99, max), and that each came once. The push service answers at once and keeps each body;
# the bodies are decrypted with the browser's key after the run (checking each as it came would make the
# Python service the slowest part on a small machine; the tests check VAPID and the encryption push by push).
# PUSH_BENCH_PAUSE=SECONDS waits that long between the registrations and the load.
set -euo pipefail
cd "$(dirname "$0")/../.."
rate="${1:-1000}"
seconds="${2:-20}"
users="${3:-10000}"
devices="${4:-5}"
port="${VICINITY_BENCH_PORT:-18087}"
subject="mailto:bench@example.edu"

source Scripts/lib/shipped-server.sh
prepare_shipped_database
swift build -c release --product vicinity-seed >/dev/null
.build/release/vicinity-seed "$shipped_db" Data/csulb-buildings.csv "$work" "$users" 1 >/dev/null

# The push service, started here and stopped with the rest.
push_dir="$work/push"
mkdir -p "$push_dir"
python3 Tests/MailTestSupport/push_service.py --folder "$push_dir" --answer record --subject "$subject" \
    > "$work/push-service.log" 2>&1 &
push_service=$!
trap 'kill "$push_service" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do [ -s "$push_dir/ready.json" ] && break; sleep 0.2; done
[ -s "$push_dir/ready.json" ] || { echo "the push service did not start; its log:" >&2; cat "$work/push-service.log" >&2; exit 1; }

"$vicinity" push keygen "$work/vapid.pem" >/dev/null
serve_options+=(--vapid-key "$work/vapid.pem" --vapid-subject "$subject" --push-allow-http true)
start_server "$port" "$shipped_db"
# The server and the push service go with the script, whatever stops it.
trap 'kill "$push_service" "$server" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo); $(uname -sr)"
echo "server: release build, SQLite; push service: push_service.py --answer record on loopback"
python3 Scripts/bench/push.py "$shipped_server" "$work/sessions.txt" "$push_dir" "$rate" "$seconds" "$shipped_db" "$devices"
echo "server: $(grep -m1 VmHWM /proc/$server/status | tr -s ' ') peak resident memory"
