#!/usr/bin/env bash
# Friend-finder throughput of a release build on loopback, with wrk, in one run:
#   Scripts/bench/friends.sh [SECONDS_PER_RUN] [USERS]      defaults 10 and 10000
# Loads the shipped data, seeds USERS synthetic people signed in and sharing positions around the CSULB
# buildings (user00000 with 200 friends; vicinity-seed), starts `vicinity serve`, then measures, each beside the
# /v1/distance floor taken in the same run:
#   PUT /v1/me/position        every request a different user moving to a new spot, 64 connections
#   the same among user00000 and their 200 friends, without and then with each of the 201 holding an event
#   stream: what the friend_moved notices cost, and how many arrive (Scripts/bench/listeners.py)
#   GET /v1/friends/nearby     user00000 and their 200 friends, 64 connections
#   POST /v1/sessions          sign-ins (bcrypt at the server's cost), 8 and 64 connections
set -euo pipefail
cd "$(dirname "$0")/../.."
duration="${1:-10}"
users="${2:-10000}"
port="${VICINITY_BENCH_PORT:-18082}"
source Scripts/lib/shipped-server.sh
prepare_shipped_database
swift build -c release --product vicinity-seed >/dev/null
.build/release/vicinity-seed "$work/shipped.sqlite" Data/csulb-buildings.csv "$work" "$users" 200
# Every client here is on one address: the 201 streams and wrk's 64 connections stay under one client's cap.
export VICINITY_MAX_CONNECTIONS_PER_CLIENT=1024
start_server "$port" "$work/shipped.sqlite"

cat > "$work/nearby.lua" <<'LUA'
local token = io.open(os.getenv("FRIENDLY")):read("*l")
request = function()
  return wrk.format("GET", "/v1/friends/nearby?radius=1000&limit=500", { ["Authorization"] = "Bearer " .. token })
end
LUA
cat > "$work/signin.lua" <<'LUA'
-- Sign-ins of the first 1,000 users in turn; all succeed, so no limit applies.
local counter = 0
init = function(args) math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16)); counter = math.random(1000) end
request = function()
  counter = counter + 1
  return wrk.format("POST", "/v1/sessions", { ["Content-Type"] = "application/json" },
    string.format('{"username":"user%05d","password":"bench password"}', counter % 1000))
end
LUA

source Scripts/lib/wrk-run.sh
export SESSIONS="$work/sessions.txt" FRIENDLY="$work/friendly.txt"
wrk_header "$(curl -s "http://127.0.0.1:$port/health"), $users users; ${duration} s per run"
base="$shipped_server"
floor="$base/v1/distance?from=33.779842,-118.112526&to=33.777267,-118.114777"
wrk_run "/v1/distance (floor)" 64 "$floor"
wrk_run "PUT /v1/me/position ($users users)" 64 "$base/v1/me/position" -s Scripts/lib/position-updates.lua
wrk_run "GET /v1/friends/nearby (200 friends)" 64 "$base/v1/friends/nearby" -s "$work/nearby.lua"
# user00000 and their friends are the first 201 lines: each move tells the streams of the mover's friends.
head -n 201 "$SESSIONS" > "$work/circle.txt"
SESSIONS="$work/circle.txt" wrk_run "PUT position (201 friends, no stream)" 64 "$base/v1/me/position" -s Scripts/lib/position-updates.lua
python3 Scripts/bench/listeners.py 127.0.0.1 "$port" "$work/circle.txt" 201 "$(( duration + 4 ))" > "$work/listeners.txt" &
listeners=$!
sleep 2
SESSIONS="$work/circle.txt" wrk_run "PUT position (201 friends, 201 streams)" 64 "$base/v1/me/position" -s Scripts/lib/position-updates.lua
wait "$listeners"
echo "  streams, over the ${duration} s of moves and 4 s around them: $(cat "$work/listeners.txt")"
wrk_run "/v1/distance (floor)" 64 "$floor"
wrk_run "POST /v1/sessions (sign-in)" 8 "$base/v1/sessions" -s "$work/signin.lua"
wrk_run "POST /v1/sessions (sign-in)" 64 "$base/v1/sessions" -s "$work/signin.lua"
wrk_run "/v1/distance (floor)" 64 "$floor"
echo "server: $(grep -m1 VmHWM /proc/$server/status | tr -s ' ') peak resident memory"
