#!/usr/bin/env bash
# The HTTP floor, layer by layer, on loopback, in one run:
#   Scripts/bench/floor.sh [SECONDS_PER_RUN] [--quick] [--profile]      default 5 s per run, two rounds
# Four servers, each a layer of what answers /v1/distance, are asked the same request,
# GET /v1/distance?from=33.779842,-118.112526&to=33.777267,-118.114777:
#   nginx        one worker process answering a constant 40-byte JSON body (`return 200`, default_type
#                application/json, no access log, keep-alive without a request cap), from a configuration in a
#                temporary folder, as an unprivileged user (nobody when the script runs as root)
#   NIO          SwiftNIO's HTTP/1 pipeline on two event loops and one handler answering the same 40 bytes with
#                Content-Type and Content-Length (`vicinity-floor nio`, Sources/vicinity-floor)
#   Hummingbird  a Hummingbird application with one route answering them (`vicinity-floor hummingbird`)
#   Vicinity     `vicinity serve` over the shipped data as shipped (request log, metrics and request limits on),
#                answering the route itself
# wrk drives each at 1, 8 and 64 kept-alive connections (-t1 at one connection, else -t2), the four in turn at
# each count, the order reversed in the second round; two rounds. The table has the means of the rounds:
# requests/s and p99 per server, the server's CPU time per request (its processes' user and system time over
# the run), and the ratios between layers. A server that does not answer 200 before its run, or any answer
# that is not 2xx during it, fails the run. Saves the table under docs/results/floor-TIMESTAMP.md.
#   --quick     2 s per run, one round
#   --profile   afterwards, perf records `vicinity serve` with call graphs for 5 s while wrk drives /v1/distance
#               at 64 connections, and saves the top of the report (by library, then by function, self time)
#               beside the table as docs/results/floor-profile-TIMESTAMP.txt. Samples are cpu-clock: in a
#               virtual machine without hardware counters perf has no cycles event.
# Ports: VICINITY_BENCH_PORT (default 18510) and the three above it.
set -euo pipefail
cd "$(dirname "$0")/../.."

usage="usage: $0 [SECONDS_PER_RUN] [--quick] [--profile]"
arguments="$*"
duration=5
rounds=2
profile=false
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) duration=2; rounds=1 ;;
        --profile) profile=true ;;
        ''|*[!0-9]*|0) echo "$usage" >&2; exit 64 ;;
        *) duration="$1" ;;
    esac
    shift
done

source Scripts/lib/packages.sh
source Scripts/lib/wrk-run.sh
ensure_packages nginx wrk curl
if $profile; then
    command -v perf >/dev/null || { echo "--profile needs perf (Debian: linux-perf)" >&2; exit 1; }
fi
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
Scripts/setup.sh >/dev/null
for product in vicinity vicinity-floor; do
    built="$(swift build -c release --product "$product" 2>&1)" || { echo "$built" >&2; exit 1; }
done
vicinity="$PWD/.build/release/vicinity"
floor="$PWD/.build/release/vicinity-floor"

port="${VICINITY_BENCH_PORT:-18510}"
path="/v1/distance?from=33.779842,-118.112526&to=33.777267,-118.114777"
body='{"distance_m":343.6,"bearing_deg":216.5}'
servers=(nginx nio hummingbird vicinity)
declare -A title=([nginx]="nginx" [nio]="bare NIO" [hummingbird]="bare Hummingbird" [vicinity]="Vicinity")
declare -A url pid log
for i in 0 1 2 3; do url[${servers[$i]}]="http://127.0.0.1:$(( port + i ))$path"; done

work="$(mktemp -d)"
chmod 755 "$work"
started=()
cleanup() {
    local p
    for p in ${started[@]+"${started[@]}"}; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

machine="$(bench_machine)"
commit="$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- Sources Package.swift Scripts || echo ', with uncommitted changes')"
echo "machine: $machine; the servers and wrk share it"
echo "commit $commit; $duration s per run, $rounds round(s)"

fail() {  # MESSAGE [SERVER]: says what went wrong, with the end of that server's log, and stops the run
    echo "floor: $1" >&2
    if [ -n "${2:-}" ] && [ -f "${log[$2]}" ]; then
        echo "--- end of ${log[$2]##*/}:" >&2
        tail -20 "${log[$2]}" >&2
    fi
    exit 1
}

# --- The four servers --------------------------------------------------------------------------------------
for name in "${servers[@]}"; do
    if curl -s -o /dev/null --max-time 2 "${url[$name]}"; then
        fail "something already answers on ${url[$name]%%/v1*}; set VICINITY_BENCH_PORT to another base port"
    fi
done

VICINITY_BIN="$vicinity" Scripts/load-data.sh "$work/shipped.sqlite" >"$work/load-data.log" 2>&1 \
    || { cat "$work/load-data.log" >&2; fail "could not load the shipped data"; }

mkdir "$work/nginx"
log[nginx]="$work/nginx/error.log"
cat > "$work/nginx/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    default_type application/json;
    keepalive_requests 1000000;
    client_body_temp_path $work/nginx/client_body;
    proxy_temp_path $work/nginx/proxy;
    fastcgi_temp_path $work/nginx/fastcgi;
    uwsgi_temp_path $work/nginx/uwsgi;
    scgi_temp_path $work/nginx/scgi;
    server {
        listen 127.0.0.1:$port;
        location / { return 200 '$body'; }
    }
}
CONF
unprivileged=()
if [ "$(id -u)" -eq 0 ]; then
    chown -R nobody "$work/nginx"
    unprivileged=(setpriv --reuid="$(id -u nobody)" --regid="$(id -g nobody)" --clear-groups)
fi
nginx_options=(-p "$work/nginx" -c "$work/nginx/nginx.conf" -e "$work/nginx/error.log")
${unprivileged[@]+"${unprivileged[@]}"} "$nginx_bin" -t -q "${nginx_options[@]}" \
    || fail "nginx refused its configuration" nginx
${unprivileged[@]+"${unprivileged[@]}"} "$nginx_bin" "${nginx_options[@]}" > "$work/nginx/stdout.log" 2>&1 &
pid[nginx]=$!
started+=("${pid[nginx]}")

log[nio]="$work/nio.log"
"$floor" nio "$(( port + 1 ))" > "${log[nio]}" 2>&1 &
pid[nio]=$!
started+=("${pid[nio]}")

log[hummingbird]="$work/hummingbird.log"
"$floor" hummingbird "$(( port + 2 ))" > "${log[hummingbird]}" 2>&1 &
pid[hummingbird]=$!
started+=("${pid[hummingbird]}")

# Every client here is one address: wrk's 64 connections stay under one client's cap.
log[vicinity]="$work/vicinity.log"
VICINITY_MAX_CONNECTIONS_PER_CLIENT=1024 "$vicinity" serve --port "$(( port + 3 ))" --db "$work/shipped.sqlite" \
    --log-level warning > "${log[vicinity]}" 2>&1 &
pid[vicinity]=$!
started+=("${pid[vicinity]}")

status_of() { curl -s -o /dev/null --max-time 5 -w '%{http_code}' "$1" || true; }
for name in "${servers[@]}"; do
    for _ in $(seq 1 300); do
        [ "$(status_of "${url[$name]}")" = 200 ] && break
        kill -0 "${pid[$name]}" 2>/dev/null || fail "$name exited at start" "$name"
        sleep 0.2
    done
    [ "$(status_of "${url[$name]}")" = 200 ] || fail "$name did not answer 200 within 60 s" "$name"
done
# What each answers: the three bare layers exactly the 40 bytes, as JSON; the head and body sizes of all four.
declare -A answer
for name in "${servers[@]}"; do
    read -r head_bytes body_bytes content_type < <(curl -s -o "$work/answer-$name" -w '%{size_header} %{size_download} %{content_type}\n' "${url[$name]}")
    case "$content_type" in application/json*) ;; *) fail "$name answered with Content-Type $content_type" "$name" ;; esac
    if [ "$name" != vicinity ] && [ "$(cat "$work/answer-$name")" != "$body" ]; then
        fail "$name answered $(cat "$work/answer-$name") instead of $body" "$name"
    fi
    answer[$name]="$head_bytes + $body_bytes"
done
# nginx's CPU is its master's and its worker's.
processes() {  # SERVER: the pids whose CPU time counts for it
    if [ "$1" = nginx ]; then echo "${pid[nginx]}" $(ps -o pid= --ppid "${pid[nginx]}"); else echo "${pid[$1]}"; fi
}
cpu_ticks() {  # PID...: their user + system time so far, in clock ticks
    local total=0 p
    for p in "$@"; do total=$(( total + $(sed 's/.*) //' "/proc/$p/stat" | awk '{ print $12 + $13 }') )); done
    echo "$total"
}
ticks_per_second="$(getconf CLK_TCK)"
echo "up: nginx $("$nginx_bin" -v 2>&1 | cut -d/ -f2) (worker $(ps -o pid= --ppid "${pid[nginx]}" | tr -d ' ')), bare NIO, bare Hummingbird, Vicinity: $(head -1 "${log[vicinity]}")"

# --- The runs ----------------------------------------------------------------------------------------------
ms() { awk -v v="$1" 'BEGIN { if (v ~ /us$/) v = v / 1000; else if (v ~ /ms$/) v = v + 0; else if (v ~ /s$/) v = v * 1000; printf "%.3f", v }'; }
runs="$work/runs.txt"  # round server connections requests/s p99_ms cpu_us_per_request
: > "$runs"
measure() {  # ROUND SERVER CONNECTIONS
    local round="$1" name="$2" connections="$3" before after rps p50 p99 errors cpu
    local code
    code="$(status_of "${url[$name]}")"
    [ "$code" = 200 ] || fail "$name answered ${code:-nothing} before its run at $connections connections" "$name"
    before=$(cpu_ticks $(processes "$name"))
    read -r rps p50 p99 errors <<<"$(wrk_measure "$connections" "${url[$name]}")"
    after=$(cpu_ticks $(processes "$name"))
    [ -n "$rps" ] && [ -n "$p99" ] || fail "wrk gave no figures for $name at $connections connections" "$name"
    [ -z "$errors" ] || fail "$name: wrk saw $errors answers that were not 2xx at $connections connections" "$name"
    cpu=$(awk -v t=$(( after - before )) -v hz="$ticks_per_second" -v r="$rps" -v d="$duration" \
        'BEGIN { printf "%.1f", t / hz * 1e6 / (r * d) }')
    echo "$round $name $connections $rps $(ms "$p99") $cpu" >> "$runs"
    printf "  round %s  %-17s %2s conns %10.0f req/s  p99 %8s ms  server CPU %6s µs/request\n" \
        "$round" "${title[$name]}" "$connections" "$rps" "$(ms "$p99")" "$cpu" >&2
}
for round in $(seq 1 "$rounds"); do
    order=("${servers[@]}")
    if [ $(( round % 2 )) -eq 0 ]; then order=(vicinity hummingbird nio nginx); fi
    for connections in 1 8 64; do
        for name in "${order[@]}"; do measure "$round" "$name" "$connections"; done
    done
done
for name in "${servers[@]}"; do kill -0 "${pid[$name]}" 2>/dev/null || fail "$name is gone after the runs" "$name"; done

# --- The profile -------------------------------------------------------------------------------------------
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
profile_file=""
if $profile; then
    profile_file="docs/results/floor-profile-$stamp.txt"
    profile_seconds=5
    wrk -t2 -c64 -d"$(( profile_seconds + 3 ))s" "${url[vicinity]}" > "$work/profile-wrk.txt" 2>&1 &
    load=$!
    started+=("$load")
    sleep 1
    perf record -e cpu-clock -g -p "${pid[vicinity]}" -o "$work/perf.data" -- sleep "$profile_seconds" \
        > "$work/perf-record.log" 2>&1 || { cat "$work/perf-record.log" >&2; fail "perf record failed"; }
    wait "$load"
    ! grep -q 'Non-2xx' "$work/profile-wrk.txt" || fail "Vicinity: answers that were not 2xx while profiled" vicinity
    demangle=(cat)
    command -v swift-demangle >/dev/null && demangle=(swift-demangle --simplified)
    report() { perf report -i "$work/perf.data" --stdio --no-children -g none "$@" 2>/dev/null | grep -v '^#' | sed -e 's/[[:space:]]*$//' -e '/^$/d'; }
    mkdir -p docs/results
    {
        echo "Profile of \`vicinity serve\` (commit $commit, release build) on the floor, from \`Scripts/bench/floor.sh $arguments\`"
        echo "($(date -u +%Y-%m-%d)): perf record -e cpu-clock -g -p PID for $profile_seconds s while wrk -t2 -c64 drives"
        echo "GET $path;"
        echo "$(awk '/Requests\/sec/ { printf "%.0f requests/s", $2 }' "$work/profile-wrk.txt") over the $(( profile_seconds + 3 )) s of wrk. Machine: $machine; the server and wrk share it."
        echo "Self time (perf report --stdio --no-children), $(perf report -i "$work/perf.data" --stdio --no-children --sort dso 2>/dev/null | awk '/^# Samples/ { print $3, "samples" }')."
        echo
        echo "By library:"
        report --sort dso | sed -n 1,12p
        echo
        echo "By function (top 40):"
        report --sort dso,symbol | sed -n 1,40p | "${demangle[@]}" | sed 's/[[:space:]]*$//' | cut -c1-220
    } > "$profile_file"
    echo "saved: $profile_file"
fi

# --- The table ---------------------------------------------------------------------------------------------
# Means over the rounds: SERVER CONNECTIONS -> requests/s p99 cpu
declare -A rps p99 cpu
while read -r name connections r p c; do
    rps[$name $connections]=$r; p99[$name $connections]=$p; cpu[$name $connections]=$c
done < <(awk '{ k = $2 " " $3; n[k]++; r[k] += $4; p[k] += $5; c[k] += $6 }
              END { for (k in n) printf "%s %.0f %.2f %.1f\n", k, r[k] / n[k], p[k] / n[k], c[k] / n[k] }' "$runs")
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
thousands() { sed ':a; s/\B[0-9]\{3\}\>/,&/; ta' <<<"$1"; }
version_of() {  # PACKAGE: its version in Package.resolved
    awk -v id="\"$1\"" '$0 ~ "\"identity\" : " id { found = 1 } found && /"version"/ { gsub(/[",]/, "", $3); print $3; exit }' Package.resolved
}
mkdir -p docs/results
report_file="docs/results/floor-$stamp.md"
{
    echo "# The HTTP floor, layer by layer"
    echo
    echo "$(date -u +%Y-%m-%d), one run of \`Scripts/bench/floor.sh${arguments:+ $arguments}\` at commit $commit, release build."
    echo "Machine: $machine; the servers and wrk share it, on loopback. wrk -t2 (-t1 at one connection), kept-alive"
    echo "connections, $duration s per run, $rounds round(s) alternating the four servers at each connection count; means of the rounds."
    echo "Every server is asked \`GET $path\`."
    echo "nginx $("$nginx_bin" -v 2>&1 | cut -d/ -f2) (one worker, \`return 200\`, no access log), bare SwiftNIO $(version_of swift-nio)"
    echo "(two event loops, one handler) and bare Hummingbird $(version_of hummingbird) (one route, NIO's shared group:"
    echo "$(nproc) event loops) answer a constant 40-byte JSON body; Vicinity is \`vicinity serve\` over the shipped data"
    echo "as shipped (request log, metrics and request limits on). Answer sizes, head + body bytes: nginx ${answer[nginx]},"
    echo "NIO ${answer[nio]}, Hummingbird ${answer[hummingbird]}, Vicinity ${answer[vicinity]}."
    echo
    echo "Requests/s (p99 ms):"
    echo
    echo "| conns | nginx | bare NIO | bare Hummingbird | Vicinity \`/v1/distance\` | \`/v1/distance\` ÷ Hummingbird | \`/v1/distance\` ÷ nginx | NIO ÷ nginx | Hummingbird ÷ NIO |"
    echo "|---|---|---|---|---|---|---|---|---|"
    for c in 1 8 64; do
        row="| $c |"
        for name in "${servers[@]}"; do row+=" $(thousands "${rps[$name $c]}") (${p99[$name $c]}) |"; done
        row+=" $(ratio "${rps[vicinity $c]}" "${rps[hummingbird $c]}") | $(ratio "${rps[vicinity $c]}" "${rps[nginx $c]}") |"
        row+=" $(ratio "${rps[nio $c]}" "${rps[nginx $c]}") | $(ratio "${rps[hummingbird $c]}" "${rps[nio $c]}") |"
        echo "$row"
    done
    echo
    echo "Server CPU time per request, µs (user + system time of the server's processes over the run ÷ its requests):"
    echo
    echo "| conns | nginx | bare NIO | bare Hummingbird | Vicinity |"
    echo "|---|---|---|---|---|"
    for c in 1 8 64; do
        echo "| $c | ${cpu[nginx $c]} | ${cpu[nio $c]} | ${cpu[hummingbird $c]} | ${cpu[vicinity $c]} |"
    done
    echo
    echo "Each run, requests/s:"
    echo
    echo "| round | conns | nginx | bare NIO | bare Hummingbird | Vicinity |"
    echo "|---|---|---|---|---|---|"
    awk '{ v[$1 " " $3 " " $2] = sprintf("%.0f", $4) }
         END { for (r = 1; r <= '"$rounds"'; r++) for (i = 1; i <= 3; i++) { c = (i == 1 ? 1 : i == 2 ? 8 : 64)
                   printf "| %d | %d | %s | %s | %s | %s |\n", r, c, v[r " " c " nginx"], v[r " " c " nio"], v[r " " c " hummingbird"], v[r " " c " vicinity"] } }' "$runs"
    if [ -n "$profile_file" ]; then
        echo
        echo "Profile of Vicinity at 64 connections: \`$profile_file\`."
    fi
} > "$report_file"
echo
cat "$report_file"
echo "saved: $report_file"
