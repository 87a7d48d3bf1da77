#!/usr/bin/env bash
# The fault run on its own (Scripts/check/faults.py), without the benchmarks of Scripts/bench/fronts.sh: two
# fronts behind nginx over one PostgreSQL database holding the shipped data and USERS seeded people (default
# 2,000), 100 event streams and mixed load through nginx; PostgreSQL stopped and started, then one front
# killed with SIGKILL. Counts every acknowledged write and event and fails on any loss.
#
#   Scripts/check/faults.sh [USERS]
#
# Release build. Uses Scripts/postgres.sh's server (stopping and starting it) and a fresh database of its own;
# ports 18381 (nginx) and 18382–18383.
set -euo pipefail
cd "$(dirname "$0")/../.."
users="${1:-2000}"
swift build -c release --product vicinity >/dev/null
swift build -c release --product vicinity-seed >/dev/null
url="$(Scripts/postgres.sh fresh vicinity_faults)"
export VICINITY_BIN="$PWD/.build/release/vicinity" VICINITY_CLUSTER_DB=vicinity_faults
export VICINITY_CLUSTER_DIR="$(mktemp -d)" VICINITY_CLUSTER_FRONT_PORT=18382
seeds="$(mktemp -d)"
trap 'Scripts/cluster.sh stop >/dev/null 2>&1 || true; Scripts/postgres.sh start >/dev/null 2>&1 || true; rm -rf "$VICINITY_CLUSTER_DIR" "$seeds"' EXIT
VICINITY_BIN="$VICINITY_BIN" Scripts/load-data.sh "$url" >/dev/null
.build/release/vicinity-seed "$url" Data/csulb-buildings.csv "$seeds" "$users" 200 >/dev/null
Scripts/cluster.sh start --port 18381 --fronts 2 | sed -n 1p
python3 Scripts/check/faults.py http://127.0.0.1:18381 "$VICINITY_CLUSTER_DIR" "$seeds"
