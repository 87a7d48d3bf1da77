#!/usr/bin/env bash
# Starts two fronts over one PostgreSQL database behind nginx (Scripts/cluster.sh) and checks them as clients
# use them (Scripts/check/cluster.py): events through both fronts reach a stream once and in order,
# positions show through the other front, and a front killed with SIGKILL under a stream loses nothing.
#
#   Scripts/check/cluster.sh [--quick]     the release build; --quick: the debug build (CI)
#
# Uses Scripts/postgres.sh's server and a fresh database of its own; ports 18181 (nginx) and 18182–18183.
set -euo pipefail
cd "$(dirname "$0")/../.."
configuration=release
if [ "${1:-}" = "--quick" ]; then configuration=debug; fi
swift build -c "$configuration" --product vicinity >/dev/null
Scripts/postgres.sh fresh vicinity_cluster_check >/dev/null
export VICINITY_BIN="$PWD/.build/$configuration/vicinity" VICINITY_CLUSTER_DB=vicinity_cluster_check
export VICINITY_CLUSTER_DIR="$(mktemp -d)" VICINITY_CLUSTER_FRONT_PORT=18182
trap 'Scripts/cluster.sh stop >/dev/null; rm -rf "$VICINITY_CLUSTER_DIR"' EXIT
Scripts/cluster.sh start --port 18181 --fronts 2
if ! python3 Scripts/check/cluster.py http://127.0.0.1:18181 "$VICINITY_CLUSTER_DIR"; then
    for log in "$VICINITY_CLUSTER_DIR"/front-*.log "$VICINITY_CLUSTER_DIR"/nginx-error.log; do
        echo "--- $log, last lines:" >&2
        tail -n 15 "$log" >&2 || true
    done
    exit 1
fi
