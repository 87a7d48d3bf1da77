#!/usr/bin/env bash
# Import and query figures for the store, in a release build:
#   Scripts/bench/places.sh PLACES.csv[.gz] [QUERIES]
# The reference dataset is GeoNames cities1000 (170,391 places; CC BY 4.0), not shipped in the repository.
# The scale curve of the in-memory place index (uniform points, 10k up to LARGEST, default 1M; 10M needs about
# 4 GiB and two minutes):
#   Scripts/bench/places.sh scale [LARGEST [QUERIES]]
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 1 ] || { echo "usage: Scripts/bench/places.sh PLACES.csv[.gz] [QUERIES] | scale [LARGEST [QUERIES]]" >&2; exit 64; }
input="$1"; shift
Scripts/setup.sh >/dev/null
swift build -c release --product vicinity-bench >/dev/null
if [ "$input" = scale ]; then
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
    exec .build/release/vicinity-bench scale "$@"
fi
if [[ "$input" == *.gz ]]; then
    csv="$(mktemp --suffix=.csv)"
    trap 'rm -f "$csv"' EXIT
    gzip -dc "$input" > "$csv"
else
    csv="$input"
fi
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
.build/release/vicinity-bench "$csv" "$@"
