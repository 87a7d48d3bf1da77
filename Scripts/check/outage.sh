#!/usr/bin/env bash
# Restarts PostgreSQL under a loaded server, then stops it for 8 s, and checks that clients are told 503 with
# Retry-After meanwhile, that nothing hangs or answers 500, that the server recovers without a restart and
# that no acknowledged write is lost (Scripts/check/outage.py says exactly what is checked).
#
#   Scripts/check/outage.sh [--quick] [SECONDS]     SECONDS of load before, between and after (default 6) on
#                                                   the release build; --quick: the debug build (CI)
#
# Uses Scripts/postgres.sh's server on loopback and a fresh database of its own, so it restarts that server:
# run it when nothing else uses it (CI runs it after the tests).
set -euo pipefail
cd "$(dirname "$0")/../.."
configuration=release
if [ "${1:-}" = "--quick" ]; then configuration=debug; shift; fi
seconds="${1:-6}"
VICINITY_SHIPPED_DB="$(Scripts/postgres.sh fresh vicinity_outage)"
export VICINITY_SHIPPED_DB
source Scripts/lib/shipped-server.sh
start_shipped_server "${VICINITY_OUTAGE_PORT:-18792}" "$configuration"
if ! python3 Scripts/check/outage.py "$shipped_server" Scripts/postgres.sh --seconds "$seconds"; then
    echo "the server's log, last lines:" >&2
    grep -v "Connection creation failed" "$work/server.log" | tail -n 20 >&2
    exit 1
fi
