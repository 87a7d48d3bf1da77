# Sourced by scripts that exercise a server over the shipped data on loopback.
#   start_shipped_server PORT [CONFIGURATION]
#       builds `vicinity` (release unless CONFIGURATION is debug), loads Data/ into a temporary database and
#       starts `vicinity serve` on 127.0.0.1:PORT; sets $work (a temporary folder) and $server (the server's
#       pid). An EXIT trap stops the server and removes $work.
#   sign_up_and_in USERNAME
#       signs a new user up on that server and prints a bearer token for them.
#   call METHOD PATH TOKEN [JSON] [FIELD]
#       sends a request with that token (and JSON body) and prints the answer, or one FIELD of it (a.b for a
#       member of a member).
start_shipped_server() {
    local port="$1" configuration="${2:-release}"
    Scripts/setup.sh >/dev/null
    swift build -c "$configuration" --product vicinity >/dev/null
    local binary=".build/$configuration/vicinity"
    work="$(mktemp -d)"
    trap '[ -n "${server:-}" ] && kill "$server" 2>/dev/null;  wait 2>/dev/null || true; rm -rf "$work"' EXIT
    VICINITY_BIN="$binary" Scripts/load-data.sh "$work/shipped.sqlite" >/dev/null
    "$binary" serve --port "$port" --db "$work/shipped.sqlite" --log-level warning > "$work/server.log" 2>&1 &
    server=$!
    shipped_server="http://127.0.0.1:$port"
    for _ in $(seq 1 50); do curl -sf "$shipped_server/health" >/dev/null && return 0; sleep 0.2; done
    echo "the server did not answer on port $port; its log:" >&2
    cat "$work/server.log" >&2
    return 1
}

sign_up_and_in() {
    local username="$1" password="contract check password"
    curl -sf -X POST "$shipped_server/v1/users" -H 'Content-Type: application/json' \
        -d "{\"username\":\"$username\",\"password\":\"$password\",\"first_name\":\"Contract\",\"last_name\":\"Check\"}" >/dev/null
    curl -sf -X POST "$shipped_server/v1/sessions" -H 'Content-Type: application/json' \
        -d "{\"username\":\"$username\",\"password\":\"$password\"}" \
        | python3 -c 'import json, sys; print(json.load(sys.stdin)["token"])'
}

call() {
    local method="$1" path="$2" token="$3" body="${4:-}" field="${5:-}"
    local arguments=(-sf -X "$method" "$shipped_server$path" -H "Authorization: Bearer $token")
    [ -n "$body" ] && arguments+=(-H 'Content-Type: application/json' -d "$body")
    if [ -n "$field" ]; then
        curl "${arguments[@]}" | python3 -c "import functools, json, sys; print(functools.reduce(lambda value, key: value[key], '$field'.split('.'), json.load(sys.stdin)))"
    else
        curl "${arguments[@]}"
    fi
}
