#!/usr/bin/env bash
# Runs every test: installs missing system packages, starts the PostgreSQL test server (Scripts/postgres.sh) for
# the PostGIS store's cases, builds in debug and runs `swift test`. Without VICINITY_TEST_POSTGRES_URL, a bare
# `swift test` skips the PostGIS cases and says so in one skipped test.
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/setup.sh
VICINITY_TEST_POSTGRES_URL="$(Scripts/postgres.sh fresh vicinity_test)"
export VICINITY_TEST_POSTGRES_URL
swift build --build-tests
swift test --skip-build --disable-xctest "$@"
