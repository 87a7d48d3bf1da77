#!/usr/bin/env bash
# Vicinity side by side with Redis GEO and PostGIS on the same points, on loopback, one run:
#   Scripts/bench/peers.sh [--quick] [--points N] [--seconds S] [--connections "1 8 64"]
#
# Installs redis-server, redis-tools, PostgreSQL + PostGIS and wrk from Debian when missing; starts Redis and
# PostgreSQL in a temporary folder, listening on 127.0.0.1 only, and stops them at the end. Generates N uniform
# points (default 1,000,000) in a 50 x 50 km square with a fixed seed (Scripts/bench/make-points.py), loads the
# same points into all three and times each load, then drives each with the same connection counts:
#   W1  the closest place (Vicinity /v1/places/closest; PostGIS ORDER BY <-> LIMIT 1; Redis has no unbounded
#       nearest, so GEOSEARCH BYRADIUS 1000 m COUNT 1)
#   W2  the 20 nearest within 1000 m
#   W3  every place within 1000 m, nearest first (Vicinity: every page of 500, following `next`)
#   W3c the first 500 within 1000 m with ids and distances only (Vicinity `fields=id,distance_m`; Redis COUNT
#       500 WITHDIST; PostGIS LIMIT 500); beside it, Vicinity's later compact pages alone (each `next` of the
#       same centres), which read a ring beyond the cursor rather than the whole circle
#   W4  every place within 100 m
# Centres are uniform in the 0.1 x 0.1 degree square [33.7, 33.8) x (-118.2, -118.1], inside the points' square,
# for all three. Vicinity is driven by wrk, Redis by redis-benchmark, PostGIS by pgbench (sphere distances, as
# Vicinity measures, through the GiST index on geography). Prints one Markdown table and saves it under
# docs/results/. --quick: 100,000 points, 3 s per run.
set -euo pipefail
cd "$(dirname "$0")/../.."

points=1000000
seconds=10
connection_counts="1 8 64"
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) points=100000; seconds=3 ;;
        --points) points="$2"; shift ;;
        --seconds) seconds="$2"; shift ;;
        --connections) connection_counts="$2"; shift ;;
        *) echo "usage: $0 [--quick] [--points N] [--seconds S] [--connections \"1 8 64\"]" >&2; exit 64 ;;
    esac
    shift
done

source Scripts/lib/packages.sh
source Scripts/lib/shipped-server.sh
source Scripts/lib/wrk-run.sh
ensure_packages redis-server redis-tools postgresql postgresql-15-postgis-3 wrk curl python3
Scripts/setup.sh >/dev/null
swift build -c release --product vicinity >/dev/null
vicinity="$PWD/.build/release/vicinity"

vicinity_port=18480
redis_port=18481
postgres_port=18482
work="$(mktemp -d)"
chmod 755 "$work"
pg_bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
as_postgres=()
[ "$(id -u)" -eq 0 ] && as_postgres=(runuser -u postgres --)
cleanup() {
    [ -n "${server:-}" ] && kill "$server" 2>/dev/null || true
    redis-cli -p "$redis_port" shutdown nosave >/dev/null 2>&1 || true
    [ -d "$work/pgdata" ] && "${as_postgres[@]}" "$pg_bin/pg_ctl" -D "$work/pgdata" -m fast stop >/dev/null 2>&1 || true
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

now() { date +%s.%N; }
elapsed() { python3 -c "print(f'{$(now) - $1:.1f}')"; }

machine="$(bench_machine)"
echo "machine: $machine; every server and every load generator share it"
echo "points: $points uniform in a 50 x 50 km square (seed 2026); $seconds s per run; connections: $connection_counts"

python3 Scripts/bench/make-points.py "$points" "$work/points.csv"

# --- Loads -------------------------------------------------------------------------------------------------
start=$(now)
"$vicinity" import places "$work/points.csv" --db "$work/vicinity.sqlite" >/dev/null 2>"$work/import.log"
vicinity_load=$(elapsed "$start")
echo "Vicinity import: $vicinity_load s"

redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" --daemonize yes \
    --logfile "$work/redis.log" >/dev/null
for _ in $(seq 1 50); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
start=$(now)
# GEOADD in batches of 500 members, written as raw commands and sent pipelined.
awk -F, 'NR > 1 {
    if (n == 0) printf "GEOADD places";
    printf " %s %s %s", $5, $4, sprintf("p%012d", substr($1, 2));
    if (++n == 500) { printf "\n"; n = 0 }
} END { if (n > 0) printf "\n" }' "$work/points.csv" | redis-cli -p "$redis_port" --pipe >/dev/null
redis_load=$(elapsed "$start")
echo "Redis GEOADD (pipelined): $redis_load s, $(redis-cli -p "$redis_port" zcard places) members"

mkdir "$work/pgdata" "$work/pgsocket"
chown postgres "$work/pgdata" "$work/pgsocket" 2>/dev/null || true
"${as_postgres[@]}" "$pg_bin/initdb" -D "$work/pgdata" -A trust -U bench >/dev/null
"${as_postgres[@]}" "$pg_bin/pg_ctl" -D "$work/pgdata" -l "$work/pgsocket/postgres.log" -w start -o \
    "-p $postgres_port -c listen_addresses=127.0.0.1 -c unix_socket_directories=$work/pgsocket -c shared_buffers=1GB -c max_connections=200" >/dev/null
psql_run() { psql -h 127.0.0.1 -p "$postgres_port" -U bench -d postgres -v ON_ERROR_STOP=1 -q "$@"; }
cp "$work/points.csv" "$work/pgsocket/points.csv" && chmod 644 "$work/pgsocket/points.csv"
start=$(now)
psql_run <<SQL
CREATE EXTENSION postgis;
CREATE UNLOGGED TABLE staging (id text, name text, category text, lat double precision, lon double precision);
\copy staging FROM '$work/pgsocket/points.csv' WITH (FORMAT csv, HEADER true)
CREATE TABLE place AS
    SELECT id, name, category, ST_SetSRID(ST_MakePoint(lon, lat), 4326)::geography AS geog FROM staging;
DROP TABLE staging;
ALTER TABLE place ADD PRIMARY KEY (id);
CREATE INDEX place_geog ON place USING gist (geog);
ANALYZE place;
SQL
postgres_load=$(elapsed "$start")
echo "PostGIS COPY + GiST: $postgres_load s"

start_server "$vicinity_port" "$work/vicinity.sqlite" 120
echo "Vicinity: $(head -1 "$work/server.log")"

# --- Workloads ---------------------------------------------------------------------------------------------

# W3 pages: for 300 fixed centres, the first page and every `next` after it, fetched now, replayed by wrk; the
# same in the compact form, its first pages and its later pages apart.
pages_per_traversal=$(python3 - "$vicinity_port" "$work" <<'PY'
import json, random, sys, urllib.request
port, work = sys.argv[1], sys.argv[2]
rng = random.Random(2026)
centres = 300
firsts = [f"/v1/places/nearby?lat={33.7 + rng.random() * 0.1:.7f}&lon={-118.2 + rng.random() * 0.1:.7f}&radius=1000&limit=500"
          for _ in range(centres)]
def pages(first):
    urls, url = [], first
    while url:
        urls.append(url)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{url}") as response:
            url = json.load(response)["next"]
    return urls
def script(name, urls):
    with open(f"{work}/{name}.lua", "w") as lua:
        lua.write("urls = {\n" + "".join(f'  "{u}",\n' for u in urls) + "}\n")
        lua.write("counter = 0\nrequest = function()\n  counter = counter + 1\n"
                  "  return wrk.format(\"GET\", urls[(counter % #urls) + 1])\nend\n")
full = [url for first in firsts for url in pages(first)]
compact = [pages(first + "&fields=id,distance_m") for first in firsts]
script("pages", full)
script("compact-first", [urls[0] for urls in compact])
script("compact-later", [url for urls in compact for url in urls[1:]])
print(f"{len(full) / centres:.3f}")
PY
)

# Each run prints: requests/s p50_ms p99_ms
duration="$seconds"
wrk_run() {
    local connections="$1" script="$2" path="${3:-}" figures
    figures=$(VICINITY_PATH="$path" wrk_measure "$connections" "http://127.0.0.1:$vicinity_port/" -s "$script")
    awk '
        function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /s$/) return v * 1000; return v }
        $4 != "" { print "wrk saw " $4 " answers that were not 2xx" > "/dev/stderr"; exit 1 }
        { printf "%.0f %.2f %.2f\n", $1, ms($2), ms($3) }' <<<"$figures"
}

redis_run() {
    local connections="$1"; shift
    local options=(-p "$redis_port" -c "$connections" -r 1000000000000 --csv --threads $(( connections < 2 ? 1 : 2 )))
    # redis-benchmark runs a request count, not a time: a short probe finds the count that lasts the run.
    local probe requests row
    probe=$(redis-benchmark "${options[@]}" -n 2000 "$@" 2>/dev/null | tail -1 | cut -d, -f2 | tr -d '"')
    requests=$(python3 -c "print(max(2000, int(float('$probe') * $seconds)))")
    row=$(redis-benchmark "${options[@]}" -n "$requests" "$@" 2>/dev/null | tail -1)
    python3 -c "
import csv, io, sys
row = next(csv.reader(io.StringIO(sys.argv[1])))
print(f'{float(row[1]):.0f} {float(row[4]):.2f} {float(row[6]):.2f}')" "$row"
}

pgbench_run() {
    local connections="$1" script="$2"
    rm -f "$work"/pgbench_log.*
    (cd "$work" && pgbench -h 127.0.0.1 -p "$postgres_port" -U bench -n -c "$connections" -j $(( connections < 2 ? 1 : 2 )) \
        -T "$seconds" -f "$script" -l postgres > "$work/pgbench.out" 2>&1)
    python3 - "$work" <<'PY'
import glob, re, sys
work = sys.argv[1]
latencies = sorted(int(line.split()[2]) for name in glob.glob(f"{work}/pgbench_log.*") for line in open(name))
text = open(f"{work}/pgbench.out").read()
tps = float(re.search(r"tps = ([0-9.]+)", text).group(1))
pick = lambda p: latencies[min(len(latencies) - 1, int(len(latencies) * p))] / 1000
print(f"{tps:.0f} {pick(0.5):.2f} {pick(0.99):.2f}")
PY
}

pg_script() {
    local name="$1" sql="$2"
    cat > "$work/$name.sql" <<SQL
\\set la random(0, 999999999)
\\set lo random(0, 999999999)
$sql
SQL
    echo "$work/$name.sql"
}
centre="ST_SetSRID(ST_MakePoint(-118.2 + :lo / 1e10, 33.7 + :la / 1e10), 4326)::geography"
pg_w1=$(pg_script w1 "SELECT id, ST_Distance(geog, $centre, false) FROM place ORDER BY geog <-> $centre LIMIT 1;")
pg_w2=$(pg_script w2 "SELECT id, ST_Distance(geog, $centre, false) AS d FROM place WHERE ST_DWithin(geog, $centre, 1000, false) ORDER BY geog <-> $centre LIMIT 20;")
pg_w3=$(pg_script w3 "SELECT id, ST_Distance(geog, $centre, false) AS d FROM place WHERE ST_DWithin(geog, $centre, 1000, false) ORDER BY geog <-> $centre;")
pg_w3c=$(pg_script w3c "SELECT id, ST_Distance(geog, $centre, false) AS d FROM place WHERE ST_DWithin(geog, $centre, 1000, false) ORDER BY geog <-> $centre LIMIT 500;")
pg_w4=$(pg_script w4 "SELECT id, ST_Distance(geog, $centre, false) AS d FROM place WHERE ST_DWithin(geog, $centre, 100, false) ORDER BY geog <-> $centre;")
redis_centre=(FROMLONLAT "-118.1__rand_int__" "33.7__rand_int__")

results="$work/results.txt"
: > "$results"
floors="$work/floors.txt"
: > "$floors"
laters="$work/laters.txt"
: > "$laters"
for connections in $connection_counts; do
    # The HTTP floor of this run: a trivial endpoint through the same front, with the same random centres.
    floor=$(wrk_run "$connections" Scripts/lib/random-centre.lua "/v1/distance?from=%.7f,-118.1&to=33.78,%.7f")
    echo "floor $connections $floor" | tee -a "$floors" >&2
    # Later compact pages alone, per page: beside W3c's first pages they show what a page past the cursor costs.
    later=$(wrk_run "$connections" "$work/compact-later.lua")
    echo "later $connections $later" | tee -a "$laters" >&2
    for workload in W1 W2 W3 W3c W4; do
        case "$workload" in
            W1) v=$(wrk_run "$connections" Scripts/lib/random-centre.lua "/v1/places/closest?lat=%.7f&lon=%.7f")
                r=$(redis_run "$connections" GEOSEARCH places "${redis_centre[@]}" BYRADIUS 1000 m ASC COUNT 1 WITHDIST)
                p=$(pgbench_run "$connections" "$pg_w1") ;;
            W2) v=$(wrk_run "$connections" Scripts/lib/random-centre.lua "/v1/places/nearby?lat=%.7f&lon=%.7f&radius=1000&limit=20")
                r=$(redis_run "$connections" GEOSEARCH places "${redis_centre[@]}" BYRADIUS 1000 m ASC COUNT 20 WITHDIST)
                p=$(pgbench_run "$connections" "$pg_w2") ;;
            W3) v=$(wrk_run "$connections" "$work/pages.lua")
                # One W3 answer is every page: requests/s over pages per traversal.
                v=$(awk -v pages="$pages_per_traversal" '{ printf "%.0f %s %s\n", $1 / pages, $2, $3 }' <<<"$v")
                r=$(redis_run "$connections" GEOSEARCH places "${redis_centre[@]}" BYRADIUS 1000 m ASC WITHDIST)
                p=$(pgbench_run "$connections" "$pg_w3") ;;
            W3c) v=$(wrk_run "$connections" "$work/compact-first.lua")
                r=$(redis_run "$connections" GEOSEARCH places "${redis_centre[@]}" BYRADIUS 1000 m ASC COUNT 500 WITHDIST)
                p=$(pgbench_run "$connections" "$pg_w3c") ;;
            W4) v=$(wrk_run "$connections" Scripts/lib/random-centre.lua "/v1/places/nearby?lat=%.7f&lon=%.7f&radius=100&limit=500")
                r=$(redis_run "$connections" GEOSEARCH places "${redis_centre[@]}" BYRADIUS 100 m ASC WITHDIST)
                p=$(pgbench_run "$connections" "$pg_w4") ;;
        esac
        echo "$workload $connections $v $r $p" | tee -a "$results" >&2
    done
done

# --- The table ---------------------------------------------------------------------------------------------
mkdir -p docs/results
report="docs/results/peers-$(date -u +%Y%m%dT%H%M%SZ).md"
{
    echo "# Vicinity, Redis GEO and PostGIS side by side"
    echo
    echo "$(date -u +%Y-%m-%d), one run of \`Scripts/bench/peers.sh $*\`. Machine: $machine; servers and load generators"
    echo "share it, on loopback. Points: $points uniform in a 50 × 50 km square (seed 2026). $seconds s per run."
    echo "Versions: $(redis-server --version | awk '{ print $1, $3 }'), PostgreSQL $("$pg_bin/postgres" --version | awk '{ print $3 }')"
    echo "with PostGIS $(psql_run -tAc "SELECT postgis_lib_version()"), Vicinity at commit $(git rev-parse --short HEAD) (release build)."
    echo "W3 for Vicinity counts whole answers: every page of 500 ($pages_per_traversal pages on average), p50/p99 per page."
    echo
    echo "| workload | conns | Vicinity req/s (p50 / p99 ms) | Redis req/s (p50 / p99 ms) | PostGIS req/s (p50 / p99 ms) | Vicinity ÷ PostGIS | Vicinity ÷ Redis |"
    echo "|---|---|---|---|---|---|---|"
    awk '{ printf "| %s | %s | %s (%s / %s) | %s (%s / %s) | %s (%s / %s) | %.2f× | %.2f× |\n",
           $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $3 / $9, $3 / $6 }' "$results"
    awk '{ printf "| HTTP floor (`/v1/distance`) | %s | %s (%s / %s) | | | | |\n", $2, $3, $4, $5 }' "$floors"
    awk '{ printf "| W3c later pages alone (per page) | %s | %s (%s / %s) | | | | |\n", $2, $3, $4, $5 }' "$laters"
    echo "| import of the points | | $vicinity_load s | $redis_load s (pipelined GEOADD) | $postgres_load s (COPY + GiST) | | |"
    echo
    echo "Vicinity server peak resident memory: $(awk '/VmHWM/ { printf "%.0f MiB", $2 / 1024 }' /proc/$server/status)."
} > "$report"
cat "$report"
echo "saved: $report"
