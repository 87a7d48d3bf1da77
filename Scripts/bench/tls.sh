#!/usr/bin/env bash
# What TLS costs, on a release build on loopback, with wrk, in one run:
#   Scripts/bench/tls.sh [SECONDS_PER_RUN] [ROUNDS]      defaults 10 and 2
# Serves the shipped data twice from one database, plain HTTP and TLS (`serve --tls-cert --tls-key`, a P-256
# certificate made here with openssl), and drives each with wrk over HTTP/1.1 (wrk speaks no HTTP/2),
# alternating the two servers ROUNDS times so that a busy moment of the machine falls on both alike:
#   /v1/distance         the HTTP floor, at 1, 8 and 64 kept-alive connections
#   W1 closest place     /v1/places/closest at random centres (Scripts/lib/random-centre.lua), 64 connections
#   new connection each  /v1/distance with `Connection: close`, 8 connections: a TCP (and TLS) handshake a request
# Prints, for each, the median requests/s of each side over the rounds and their ratio (TLS ÷ plain).
set -euo pipefail
cd "$(dirname "$0")/../.."
duration="${1:-10}"
rounds="${2:-2}"
plain_port="${VICINITY_BENCH_PORT:-18087}"
tls_port=$(( plain_port + 1 ))
source Scripts/lib/packages.sh
ensure_packages wrk curl openssl
source Scripts/lib/shipped-server.sh
prepare_shipped_database
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj "/CN=127.0.0.1" \
    -addext "subjectAltName=IP:127.0.0.1" -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
start_server "$plain_port" "$shipped_db"
plain_pid=$server
"$vicinity" serve --port "$tls_port" --db "$shipped_db" --log-level warning \
    --tls-cert "$work/cert.pem" --tls-key "$work/key.pem" > "$work/tls-server.log" 2>&1 &
tls_pid=$!
trap 'kill "$plain_pid" "$tls_pid" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 1 50); do curl -skf "https://127.0.0.1:$tls_port/health" >/dev/null && break; sleep 0.2; done
curl -skf "https://127.0.0.1:$tls_port/health" >/dev/null || { cat "$work/tls-server.log" >&2; exit 1; }

source Scripts/lib/wrk-run.sh
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); both servers and wrk share it"
echo "data: $(curl -s "http://127.0.0.1:$plain_port/health"); ${duration} s per run, $rounds rounds; TLS 1.3, P-256 certificate"
floor="/v1/distance?from=33.779842,-118.112526&to=33.777267,-118.114777"
export VICINITY_PATH="/v1/places/closest?lat=%f&lon=%f"
declare -A figures
measure() {  # KEY CONNECTIONS PATH [WRK ARGUMENTS...]
    local key="$1" connections="$2" path="$3"; shift 3
    local side base rps p50 p99 errors
    for side in plain tls; do
        if [ "$side" = plain ]; then base="http://127.0.0.1:$plain_port"; else base="https://127.0.0.1:$tls_port"; fi
        read -r rps p50 p99 errors <<<"$(wrk_measure "$connections" "$base$path" "$@")"
        [ -z "$errors" ] || echo "  ($side $key: $errors non-2xx answers)" >&2
        figures["$key $side"]+="$rps "
    done
}
cases=("floor|1|$floor" "floor|8|$floor" "floor|64|$floor" "W1 closest|64|/v1/places/closest" "new connection each|8|$floor")
for round in $(seq 1 "$rounds"); do
    for entry in "${cases[@]}"; do
        IFS='|' read -r name connections path <<<"$entry"
        case "$name" in
            "W1 closest") measure "$name|$connections" "$connections" "$path" -s Scripts/lib/random-centre.lua ;;
            "new connection each") measure "$name|$connections" "$connections" "$path" -H "Connection: close" ;;
            *) measure "$name|$connections" "$connections" "$path" ;;
        esac
    done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
printf "%-22s %6s %12s %12s %8s\n" workload conns "plain req/s" "TLS req/s" "TLS÷plain"
for entry in "${cases[@]}"; do
    IFS='|' read -r name connections path <<<"$entry"
    plain="$(median <<<"${figures["$name|$connections plain"]}")"
    tls="$(median <<<"${figures["$name|$connections tls"]}")"
    printf "%-22s %6s %12.0f %12.0f %8.2f\n" "$name" "$connections" "$plain" "$tls" "$(awk -v a="$tls" -v b="$plain" 'BEGIN { print a / b }')"
done
echo "servers: plain $(grep -m1 VmHWM /proc/$plain_pid/status | tr -s ' '), TLS $(grep -m1 VmHWM /proc/$tls_pid/status | tr -s ' ') peak resident memory"
