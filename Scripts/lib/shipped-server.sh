# Sourced by scripts that exercise a server on loopback.
#   prepare_shipped_database [CONFIGURATION]
#       builds `vicinity` (release unless CONFIGURATION is debug), loads Data/ into $shipped_db and sets $work
#       (a temporary folder) and $vicinity (the binary). $shipped_db is $VICINITY_SHIPPED_DB when set (a
#       postgres:// URL, say), else $work/shipped.sqlite. An EXIT trap stops the server and the mail relay, if
#       they were started, and removes $work.
#   start_mail_relay
#       starts a real SMTP relay on loopback (aiosmtpd: Tests/MailTestSupport/smtp_server.py,
#       after prepare_shipped_database) that writes each message it takes to $mail_dir as N.eml and N.json
#       (envelope, subject, body); sets $mail_relay (its pid) and $mail_relay_port, and adds to $serve_options
#       what points the server at it.
#   mailed_code ADDRESS N
#       prints the code of the Nth message the relay took for ADDRESS, waiting up to 15 s for it.
#   start_server PORT DATABASE [SECONDS]
#       starts `vicinity serve` on 127.0.0.1:PORT over DATABASE, with the options in the array $serve_options
#       if set, logging to $work/server.log; sets $server (its pid) and $shipped_server (its URL); waits up to
#       SECONDS (default 10) for /health, else prints the log and fails.
#   start_shipped_server PORT [CONFIGURATION]
#       both: a server over the shipped data.
#   sign_up_and_in USERNAME [EMAIL]
#       signs a new user up on that server (with that address, waiting for its code, when given) and prints a
#       bearer token for them.
#   call METHOD PATH TOKEN [JSON] [FIELD]
#       sends a request with that token (and JSON body) and prints the answer, or one FIELD of it (a.b for a
#       member of a member).
prepare_shipped_database() {
    local configuration="${1:-release}"
    Scripts/setup.sh >/dev/null
    swift build -c "$configuration" --product vicinity >/dev/null
    vicinity="$PWD/.build/$configuration/vicinity"
    work="$(mktemp -d)"
    trap '[ -n "${server:-}" ] && { kill "$server" 2>/dev/null || true; }; [ -n "${mail_relay:-}" ] && { kill "$mail_relay" 2>/dev/null || true; }; wait 2>/dev/null || true; rm -rf "$work"' EXIT
    shipped_db="${VICINITY_SHIPPED_DB:-$work/shipped.sqlite}"
    VICINITY_BIN="$vicinity" Scripts/load-data.sh "$shipped_db" >/dev/null
}

start_mail_relay() {
    mail_dir="$work/mail"
    mkdir -p "$mail_dir"
    rm -f "$work/mail-relay.port"
    # The python3 that Scripts/setup.sh gave aiosmtpd.
    python3 Tests/MailTestSupport/smtp_server.py --ready "$work/mail-relay.port" --mail-dir "$mail_dir" \
        > "$work/mail-relay.log" 2>&1 &
    mail_relay=$!
    for _ in $(seq 1 50); do
        [ -s "$work/mail-relay.port" ] && break
        kill -0 "$mail_relay" 2>/dev/null || break
        sleep 0.2
    done
    if [ ! -s "$work/mail-relay.port" ]; then
        echo "the mail relay did not start within 10 s; its log:" >&2
        cat "$work/mail-relay.log" >&2
        return 1
    fi
    mail_relay_port="$(cat "$work/mail-relay.port")"
    serve_options+=(--smtp-url "smtp://127.0.0.1:$mail_relay_port" --smtp-tls none --mail-from 'Vicinity <vicinity@example.edu>')
}

mailed_code() {
    python3 - "$mail_dir" "$1" "$2" <<'PYTHON'
import glob, json, os, re, sys, time
folder, address, number = sys.argv[1], sys.argv[2], int(sys.argv[3])
deadline = time.monotonic() + 15
while True:
    mails = []
    for path in glob.glob(os.path.join(folder, "*.json")):
        with open(path) as handle:
            record = json.load(handle)
        if address in record["rcpt_tos"]:
            mails.append((int(os.path.basename(path)[:-len(".json")]), record["body"]))
    if len(mails) >= number:
        body = sorted(mails)[number - 1][1]
        print(re.search(r"^[0-9]{6}$", body, re.MULTILINE).group(0))
        break
    if time.monotonic() > deadline:
        sys.exit("no message number %d to %s within 15 s" % (number, address))
    time.sleep(0.1)
PYTHON
}

start_server() {
    local port="$1" database="$2" seconds="${3:-10}"
    "$vicinity" serve --port "$port" --db "$database" --log-level warning ${serve_options[@]+"${serve_options[@]}"} \
        > "$work/server.log" 2>&1 &
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
    local username="$1" password="contract check password" email="${2:+,\"email\":\"$2\"}"
    curl -sf -X POST "$shipped_server/v1/users" -H 'Content-Type: application/json' \
        -d "{\"username\":\"$username\",\"password\":\"$password\",\"first_name\":\"Contract\",\"last_name\":\"Check\"$email}" >/dev/null
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
