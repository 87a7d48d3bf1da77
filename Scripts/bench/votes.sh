#!/usr/bin/env bash
# Vote app throughput of a release build on loopback, with wrk, in one run:
#   Scripts/bench/votes.sh [SECONDS_PER_RUN] [USERS] [VOTES]      defaults 10, 10000 and 10000
# Loads the shipped data, seeds USERS synthetic people signed in (vicinity-seed), one busy permanent vote at the
# Hall of Science open to 1,000 of them, and VOTES open public votes spread uniformly over the 20 km square
# centred there (a city's worth), starts `vicinity serve`, then measures, each beside the /v1/distance floor
# taken in the same run:
#   POST /v1/votes/{id}/ballots   every request a different voter on the busy vote, 64 connections, until its
#                                 1,000 participants have voted (a few seconds); ballots/s is counted ballots over
#                                 the span of their cast_at times in the database, and wrk's figure includes the
#                                 409 answers to ballots that came after the vote was full
#   GET /v1/votes/nearby          a random centre in the square per request, radius 1000 m, 64 connections
set -euo pipefail
cd "$(dirname "$0")/../.."
duration="${1:-10}"
users="${2:-10000}"
votes="${3:-10000}"
port="${VICINITY_BENCH_PORT:-18083}"

source Scripts/lib/shipped-server.sh
prepare_shipped_database
swift build -c release --product vicinity-seed >/dev/null
.build/release/vicinity-seed "$work/shipped.sqlite" Data/csulb-buildings.csv "$work" "$users" 0 "$votes"
start_server "$port" "$work/shipped.sqlite"

cat > "$work/ballot.lua" <<'LUA'
-- Each request a different voter (the token of a seeded user), starting at a random line per thread; the option
-- cycles. A voter met twice gets 409 (already voted), which wrk reports as non-2xx.
local tokens = {}
for line in io.lines(os.getenv("SESSIONS")) do tokens[#tokens + 1] = line:match("(%S+)") end
local vote = io.open(os.getenv("BUSY_VOTE")):read("*l")
local counter = 0
init = function(args) math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16)); counter = math.random(#tokens) end
request = function()
  counter = counter + 1
  return wrk.format("POST", "/v1/votes/" .. vote .. "/ballots",
    { ["Authorization"] = "Bearer " .. tokens[(counter % #tokens) + 1], ["Content-Type"] = "application/json" },
    '{"password":"482913","option":' .. (counter % 3) .. '}')
end
LUA
cat > "$work/nearby.lua" <<'LUA'
-- A random centre in the 20 km square around the Hall of Science (33.779842, -118.112526) per request.
init = function(args) math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16)) end
request = function()
  local lat = 33.779842 + (math.random() * 2 - 1) * 10000 / 111195
  local lon = -118.112526 + (math.random() * 2 - 1) * 10000 / (111195 * math.cos(math.rad(33.779842)))
  return wrk.format("GET", string.format("/v1/votes/nearby?lat=%.6f&lon=%.6f&radius=1000&limit=500", lat, lon))
end
LUA

source Scripts/lib/wrk-run.sh
export SESSIONS="$work/sessions.txt" BUSY_VOTE="$work/busy-vote.txt"
wrk_header "$(curl -s "http://127.0.0.1:$port/health"), $users users, $((votes + 1)) open votes; ${duration} s per run"
base="$shipped_server"
floor="$base/v1/distance?from=33.779842,-118.112526&to=33.777267,-118.114777"
busy="$(cat "$work/busy-vote.txt")"
wrk_run "/v1/distance (floor)" 64 "$floor"
wrk_run "GET /v1/votes/nearby ($((votes + 1)) open votes)" 64 "$base/v1/votes/nearby" -s "$work/nearby.lua"
wrk_run "/v1/distance (floor)" 64 "$floor"
duration=3 wrk_run "POST /v1/votes/{id}/ballots (one vote)" 64 "$base/v1/votes/$busy/ballots" -s "$work/ballot.lua"
wrk_run "/v1/distance (floor)" 64 "$floor"
python3 - "$work/shipped.sqlite" "$busy" <<'PY'
import sqlite3, sys
count, first, last = sqlite3.connect(sys.argv[1]).execute(
    "SELECT count(*), min(cast_at), max(cast_at) FROM ballot WHERE vote_id = ?", (sys.argv[2],)).fetchone()
span = max(last - first, 1) / 1000
print(f"busy vote: {count} ballots counted in {span:.2f} s from first to last: {(count - 1) / span:.0f} ballots/s")
PY
sample=$(curl -s "$base/v1/votes/nearby?lat=33.779842&lon=-118.112526" | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["votes"]))')
echo "votes within 1000 m of the centre: $sample"
echo "server: $(grep -m1 VmHWM /proc/$server/status | tr -s ' ') peak resident memory"
