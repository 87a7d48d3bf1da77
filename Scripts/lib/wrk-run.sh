# Sourced by the load benchmarks: one table of wrk runs.
#   wrk_header DATA_LINE      prints the machine, the data and the table's column titles
#   wrk_run LABEL CONNECTIONS URL [WRK ARGUMENTS...]
#       runs wrk for $duration seconds and prints one row: requests/s, p50, p99 and any non-2xx count. Lua
#       scripts read their inputs from variables the caller exports.
wrk_header() {
    echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); server and wrk share it"
    echo "data: $1"
    printf "%-44s %6s %12s %10s %10s\n" workload conns "requests/s" p50 p99
}

wrk_run() {
    local label="$1" connections="$2" url="$3"; shift 3
    local threads=$(( connections < 2 ? 1 : 2 ))
    local out
    out=$(wrk -t "$threads" -c "$connections" -d "${duration}s" --latency "$@" "$url")
    local rps p50 p99 errors
    rps=$(awk '/Requests\/sec/ { print $2 }' <<<"$out")
    p50=$(awk '$1 == "50%" { print $2 }' <<<"$out")
    p99=$(awk '$1 == "99%" { print $2 }' <<<"$out")
    errors=$(awk '/Non-2xx/ { print $NF }' <<<"$out")
    printf "%-44s %6s %12s %10s %10s%s\n" "$label" "$connections" "$rps" "$p50" "$p99" "${errors:+  (non-2xx: $errors)}"
}
