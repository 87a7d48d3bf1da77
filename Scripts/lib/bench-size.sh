# Sourced by the benchmarks that load synthetic points: reads their common options into points, users and
# seconds (defaults 1,000,000, 10,000 and 10).
#   --quick         100,000 points, 1,000 users, 3 s per run
#   --points N  --users N  --seconds S
points=1000000
users=10000
seconds=10
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) points=100000; users=1000; seconds=3 ;;
        --points) points="$2"; shift ;;
        --users) users="$2"; shift ;;
        --seconds) seconds="$2"; shift ;;
        *) echo "usage: $0 [--quick] [--points N] [--users N] [--seconds S]" >&2; exit 64 ;;
    esac
    shift
done
