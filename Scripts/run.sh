#!/usr/bin/env bash
# One command on a fresh machine: install system packages, build (release), load the shipped data, show where
# a CSULB position is and what is near it, then serve HTTP on $VICINITY_HOST:$VICINITY_PORT (127.0.0.1:8080).
#   Scripts/run.sh              everything, then serve until Ctrl-C
#   Scripts/run.sh --no-serve   stop after the demo
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/setup.sh
echo "build: swift build -c release (the first build takes several minutes)"
swift build -c release --product vicinity
export VICINITY_DB="${VICINITY_DB:-Data/vicinity.sqlite}"
export VICINITY_BIN=.build/release/vicinity
Scripts/load-data.sh "$VICINITY_DB"

echo
echo "\$ vicinity closest --lat 33.779842 --lon -118.112526    # at Hall of Science, CSULB"
"$VICINITY_BIN" closest --lat 33.779842 --lon -118.112526
echo
echo "\$ vicinity nearby --lat 33.779842 --lon -118.112526 --radius 1000 --limit 5"
"$VICINITY_BIN" nearby --lat 33.779842 --lon -118.112526 --radius 1000 --limit 5
echo
echo "\$ vicinity nearby --lat 13.746549 --lon 100.492766 --category buddhist_temple,shrine --limit 5    # at Wat Pho, Bangkok"
"$VICINITY_BIN" nearby --lat 13.746549 --lon 100.492766 --category buddhist_temple,shrine --limit 5

if [ "${1:-}" = "--no-serve" ]; then exit 0; fi
echo
echo "The map page: http://${VICINITY_HOST:-127.0.0.1}:${VICINITY_PORT:-8080}/ (Ctrl-C stops the server)"
exec "$VICINITY_BIN" serve
