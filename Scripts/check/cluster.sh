#!/usr/bin/env bash
# Starts two fronts over one PostgreSQL database behind nginx (Scripts/cluster.sh) and checks them as clients
# use them (Scripts/check/cluster.py): events through both fronts reach a stream once and in order,
# positions show through the other front, nginx terminating TLS (a self-signed certificate made at start)
# answers over HTTP/2 with Strict-Transport-Security and carries an event stream, and a front killed with
# SIGKILL under a stream loses nothing.
#
#   Scripts/check/cluster.sh [--quick]     the release build; --quick: the debug build (CI)
#
# Uses Scripts/postgres.sh's server and a fresh database of its own; ports 18181 (nginx), 18182–18183 (the
# fronts) and 18184 (nginx over TLS), or from $VICINITY_CLUSTER_CHECK_PORT on instead of 18181.
set -euo pipefail
cd "$(dirname "$0")/../.."
configuration=release
if [ "${1:-}" = "--quick" ]; then configuration=debug; fi
swift build -c "$configuration" --product vicinity >/dev/null
Scripts/postgres.sh fresh vicinity_cluster_check >/dev/null
export VICINITY_BIN="$PWD/.build/$configuration/vicinity" VICINITY_CLUSTER_DB=vicinity_cluster_check
base_port="${VICINITY_CLUSTER_CHECK_PORT:-18181}"
export VICINITY_CLUSTER_DIR="$(mktemp -d)" VICINITY_CLUSTER_FRONT_PORT=$((base_port + 1))
trap 'Scripts/cluster.sh stop >/dev/null; rm -rf "$VICINITY_CLUSTER_DIR"' EXIT
Scripts/cluster.sh start --port "$base_port" --fronts 2 --tls-port $((base_port + 3))
if ! python3 Scripts/check/cluster.py "http://127.0.0.1:$base_port" "$VICINITY_CLUSTER_DIR" \
        "https://127.0.0.1:$((base_port + 3))" "$VICINITY_CLUSTER_DIR/tls/cert.pem"; then
    for log in "$VICINITY_CLUSTER_DIR"/front-*.log "$VICINITY_CLUSTER_DIR"/nginx-error.log; do
        echo "--- $log, last lines:" >&2
        tail -n 15 "$log" >&2 || true
    done
    exit 1
fi
