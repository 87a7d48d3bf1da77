#!/usr/bin/env bash
# Loads the datasets shipped in Data/ (see Data/README.md) into the database. Re-running changes nothing.
#   Scripts/load-data.sh [DB]    default: $VICINITY_DB, else Data/vicinity.sqlite
# Uses the `vicinity` binary named by $VICINITY_BIN, else the release build.
set -euo pipefail
cd "$(dirname "$0")/.."
db="${1:-${VICINITY_DB:-Data/vicinity.sqlite}}"
bin="${VICINITY_BIN:-.build/release/vicinity}"
[ -x "$bin" ] || { echo "load-data: $bin not found; build first (swift build -c release)" >&2; exit 1; }

"$bin" import places Data/csulb-buildings.csv --db "$db"
"$bin" import places Data/bangkok-temples.csv --db "$db"
"$bin" import places Data/nakhon-pathom-religious-places.csv --db "$db"
