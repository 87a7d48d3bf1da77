#!/usr/bin/env bash
# Runs every test: installs missing system packages, builds in debug and runs `swift test`.
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/setup.sh
swift build --build-tests
swift test --skip-build --disable-xctest "$@"
