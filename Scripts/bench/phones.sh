#!/usr/bin/env bash
# Positions from phones against positions from the API, on a release build on loopback, with wrk, in one run:
#   Scripts/bench/phones.sh [SECONDS_PER_RUN] [USERS]      defaults 10 and 10000
# Loads the shipped data, seeds USERS people (vicinity-seed), each signed in, sharing a position near a CSULB
# building and holding one OwnTracks device (user00000 has 200 friends, every other user one: user00000),
# starts `vicinity serve`, then measures at 64 connections, each request a different person moving:
#   PUT /v1/me/position   the API's own write, with a bearer token
#   POST /owntracks       OwnTracks' HTTP mode: Basic authentication with the device secret, a location with
#                         the app's extra fields, answered with the friends the person may see (cards, locations)
# each beside the /v1/distance floor, alternated over two rounds so that a busy moment falls on all alike.
set -euo pipefail
cd "$(dirname "$0")/../.."
duration="${1:-10}"
users="${2:-10000}"
port="${VICINITY_BENCH_PORT:-18086}"
source Scripts/lib/shipped-server.sh
prepare_shipped_database
swift build -c release --product vicinity-seed >/dev/null
.build/release/vicinity-seed "$shipped_db" Data/csulb-buildings.csv "$work" "$users" 200
start_server "$port" "$shipped_db"

source Scripts/lib/wrk-run.sh
export SESSIONS="$work/sessions.txt" DEVICES="$work/devices.txt"
wrk_header "$(curl -s "http://127.0.0.1:$port/health"), $users users with a phone each; ${duration} s per run"
base="$shipped_server"
floor="$base/v1/distance?from=33.779842,-118.112526&to=33.777267,-118.114777"
for round in 1 2; do
    wrk_run "/v1/distance (floor), round $round" 64 "$floor"
    wrk_run "PUT /v1/me/position, round $round" 64 "$base/v1/me/position" -s Scripts/lib/position-updates.lua
    wrk_run "POST /owntracks, round $round" 64 "$base/owntracks" -s Scripts/lib/owntracks-posts.lua
done
echo "server: $(grep -m1 VmHWM /proc/$server/status | tr -s ' ') peak resident memory"
