#!/usr/bin/env bash
# Mail delivery of a release build through a real relay on loopback (aiosmtpd, Tests/MailTestSupport), in one run:
#   Scripts/bench/mail.sh [SIGN_UPS] [DOWN_SIGN_UPS] [DOWN_SECONDS]      defaults 400, 100 and 90
# 1. SIGN_UPS people sign up with an address, 8 at a time, each from a client address of its own (through
#    X-Forwarded-For, the server trusting loopback as its proxy): each sign-up mails a code. Prints the
#    sign-up answer's time and the time from that answer to the relay's acceptance of the mail (p50, p99, max),
#    and that each address got exactly one mail.
# 2. The relay stops; DOWN_SIGN_UPS more sign up; after DOWN_SECONDS the relay starts again on the same port.
#    Prints how long after its return the first and the last of those codes arrived, and that none came twice.
set -euo pipefail
cd "$(dirname "$0")/../.."
sign_ups="${1:-400}"
down_sign_ups="${2:-100}"
down_seconds="${3:-90}"
port="${VICINITY_BENCH_PORT:-18084}"

source Scripts/lib/shipped-server.sh
prepare_shipped_database
start_mail_relay
serve_options+=(--trusted-proxy 127.0.0.1)
start_server "$port" "$shipped_db"
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo); $(uname -sr)"
echo "relay: aiosmtpd on 127.0.0.1:$mail_relay_port; server: release build, SQLite, bcrypt cost of serve's default"

python3 Scripts/bench/mail.py "$shipped_server" "$mail_dir" "$sign_ups" "$down_sign_ups" "$down_seconds" \
    "$mail_relay" "$mail_relay_port" "$work"
