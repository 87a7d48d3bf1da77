# Sourced by scripts that exercise a release server over the shipped data on loopback.
#   start_shipped_server PORT    builds `vicinity` in release, loads Data/ into a temporary database and
#                                starts `vicinity serve` on 127.0.0.1:PORT; sets $work (a temporary folder)
#                                and $server (the server's pid). An EXIT trap stops the server and removes $work.
start_shipped_server() {
    local port="$1"
    Scripts/setup.sh >/dev/null
    swift build -c release --product vicinity >/dev/null
    work="$(mktemp -d)"
    trap 'kill "${server:-0}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
    VICINITY_BIN=.build/release/vicinity Scripts/load-data.sh "$work/shipped.sqlite" >/dev/null
    .build/release/vicinity serve --port "$port" --db "$work/shipped.sqlite" --log-level warning > "$work/server.log" 2>&1 &
    server=$!
    for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && return 0; sleep 0.2; done
    echo "the server did not answer on port $port; its log:" >&2
    cat "$work/server.log" >&2
    return 1
}
