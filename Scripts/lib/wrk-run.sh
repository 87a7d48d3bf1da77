# Sourced by the load benchmarks: one table of wrk runs.
#   wrk_header DATA_LINE      prints the machine, the data and the table's column titles
#   wrk_run LABEL CONNECTIONS URL [WRK ARGUMENTS...]
#       runs wrk for $duration seconds and prints one row: requests/s, p50, p99 and any non-2xx count. Lua
#       scripts read their inputs from variables the caller exports.
#   wrk_measure CONNECTIONS URL [WRK ARGUMENTS...]
#       runs wrk the same way and prints its figures as words: requests/s, p50 and p99 as wrk writes them
#       (2.48ms, 850.00us) and the non-2xx count, empty when none.
#   bench_machine
#       prints the machine as results name it: cores, CPU model, memory ("2 cores, AMD EPYC, 23 GiB").
bench_machine() {
    echo "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/Mem:/ { print $2 }') GiB"
}

wrk_header() {
    echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); server and wrk share it"
    echo "data: $1"
    printf "%-44s %6s %12s %10s %10s\n" workload conns "requests/s" p50 p99
}

wrk_measure() {
    local connections="$1" url="$2"; shift 2
    local threads=$(( connections < 2 ? 1 : 2 ))
    wrk -t "$threads" -c "$connections" -d "${duration}s" --latency "$@" "$url" | awk '
        /Requests\/sec/ { rps = $2 } $1 == "50%" { p50 = $2 } $1 == "99%" { p99 = $2 } /Non-2xx/ { errors = $NF }
        END { print rps, p50, p99, errors }'
}

wrk_run() {
    local label="$1" connections="$2" url="$3"; shift 3
    local rps p50 p99 errors
    read -r rps p50 p99 errors <<<"$(wrk_measure "$connections" "$url" "$@")"
    printf "%-44s %6s %12s %10s %10s%s\n" "$label" "$connections" "$rps" "$p50" "$p99" "${errors:+  (non-2xx: $errors)}"
}
