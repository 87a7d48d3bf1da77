# Sourced by scripts that exercise a server on loopback.
#   prepare_shipped_database [CONFIGURATION]
#       builds `vicinity` (release unless CONFIGURATION is debug), loads Data/ into $shipped_db and sets $work
#       (a temporary folder) and $vicinity (the binary). $shipped_db is $VICINITY_SHIPPED_DB when set (a
#       postgres:// URL, say), else $work/shipped.sqlite. An EXIT trap stops the server, if one was started,
#       and removes $work.
#   start_server PORT DATABASE [SECONDS]
#       starts `vicinity serve` on 127.0.0.1:PORT over DATABASE, logging to $work/server.log; sets $server (its
#       pid) and $shipped_server (its URL); waits up to SECONDS (default 10) for /health, else prints the log
#       and fails.
#   start_shipped_server PORT [CONFIGURATION]
#       both: a server over the shipped data.
#   sign_up_and_in USERNAME
#       signs a new user up on that server and prints a bearer token for them.
#   call METHOD PATH TOKEN [JSON] [FIELD]
#       sends a request with that token (and JSON body) and prints the answer, or one FIELD of it (a.b for a
#       member of a member).
prepare_shipped_database() {
    local configuration="${1:-release}"
    Scripts/setup.sh >/dev/null
    swift build -c "$configuration" --product vicinity >/dev/null
    vicinity="$PWD/.build/$configuration/vicinity"
    work="$(mktemp -d)"
    trap '[ -n "${server:-}" ] && kill "$server" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"' EXIT
    shipped_db="${VICINITY_SHIPPED_DB:-$work/shipped.sqlite}"
    VICINITY_BIN="$vicinity" Scripts/load-data.sh "$shipped_db" >/dev/null
}

start_server() {
    local port="$1" database="$2" seconds="${3:-10}"
    "$vicinity" serve --port "$port" --db "$database" --log-level warning > "$work/server.log" 2>&1 &
    server=$!
    shipped_server="http://127.0.0.1:$port"
    for _ in $(seq 1 $(( seconds * 5 ))); do curl -sf "$shipped_server/health" >/dev/null && return 0; sleep 0.2; done
    echo "the server did not answer on port $port within $seconds s; its log:" >&2
    cat "$work/server.log" >&2
    return 1
}

start_shipped_server() {
    prepare_shipped_database "${2:-release}"
    start_server "$1" "$shipped_db"
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
