#!/usr/bin/env bash
# Several `vicinity serve` fronts over one PostgreSQL database, behind nginx as the load balancer: the shape a
# deployment takes past one machine, on one machine.
#   Scripts/cluster.sh start [--port 8080] [--fronts 2] [--tls-port PORT]
#                                                         PostgreSQL, the fronts on 127.0.0.1:18081.., nginx on PORT;
#                                                         with --tls-port, nginx also terminates TLS on that port
#   Scripts/cluster.sh stop                               the fronts and nginx (PostgreSQL and its data stay)
#   Scripts/cluster.sh status                             what runs, and each front's /health
# Installs nginx from Debian when missing (nginx-light; where services start on installation, Debian also
# starts its own nginx on port 80, which this script does not use) and builds the release binary when
# missing ($VICINITY_BIN names another). Everything it starts lives in $VICINITY_CLUSTER_DIR (default
# /tmp/vicinity-cluster): pids, logs, nginx's configuration. The database is $VICINITY_CLUSTER_DB (default
# vicinity_cluster) on Scripts/postgres.sh's server, loaded with the shipped data on every start (re-loading
# changes nothing). With --tls-port, nginx serves HTTPS there (TLS 1.2 and 1.3, HTTP/2 and HTTP/1.1 by ALPN,
# Strict-Transport-Security) with $VICINITY_CLUSTER_TLS_CERT and $VICINITY_CLUSTER_TLS_KEY, else a self-signed
# certificate for localhost and 127.0.0.1 that it makes with openssl in $VICINITY_CLUSTER_DIR/tls; the fronts
# stay plain HTTP on loopback, trusting nginx's X-Forwarded-For, as without TLS.
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib/packages.sh

folder="${VICINITY_CLUSTER_DIR:-/tmp/vicinity-cluster}"
database="${VICINITY_CLUSTER_DB:-vicinity_cluster}"
vicinity="${VICINITY_BIN:-.build/release/vicinity}"
first_front_port="${VICINITY_CLUSTER_FRONT_PORT:-18081}"

usage() { echo "usage: $0 start [--port PORT] [--fronts N] [--tls-port PORT] | stop | status" >&2; exit 64; }

nginx_bin() { command -v nginx || echo /usr/sbin/nginx; }

healthy() { curl -fs -o /dev/null --max-time 2 "http://127.0.0.1:$1/health"; }

wait_healthy() {
    local port="$1" what="$2" waited=0
    until healthy "$port"; do
        sleep 0.2
        waited=$((waited + 1))
        if [ "$waited" -ge 600 ]; then
            echo "cluster: $what did not answer /health on port $port within 120 s; see $folder" >&2
            exit 1
        fi
    done
}

# nginx: round robin over the fronts. Event streams pass through unbuffered, and a read timeout well above
# the fronts' 25 s heartbeat keeps them open. A front that refuses connections or times out is passed over
# for 5 s, and an idempotent request that met it is tried on the next front; nginx never sends a POST twice
# (a client whose POST met a front dying under it cannot know whether it was done). A front's own 503 (its
# database out of reach) reaches the client with its Retry-After, and the front goes on answering what it
# holds in memory. When no front can answer, nginx answers 503 problem+json with Retry-After itself, as a
# front would. Open-source nginx does not ask `/health`; a balancer that does can pass over a front behind
# the change feed. The fronts trust X-Forwarded-For from
# 127.0.0.1 only (--trusted-proxy), which is nginx.
write_nginx_conf() {
    local port="$1" fronts="$2" tls_port="${3:-}" servers="" index
    for ((index = 0; index < fronts; index++)); do
        servers+="        server 127.0.0.1:$((first_front_port + index)) max_fails=1 fail_timeout=5s;"$'\n'
    done
    # What both listeners answer with: the fronts, through nginx.
    local locations
    locations=$(cat <<LOCATIONS
        location / {
            proxy_pass http://vicinity;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host \$host;
            proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto \$scheme;
            proxy_buffering off;
            proxy_read_timeout 60s;
            proxy_next_upstream error timeout;
            error_page 502 504 = @unavailable;
            add_header Strict-Transport-Security \$hsts always;
        }
        # Every front down, or passed over after a 503: the clients' answer is the fronts' own 503, with the
        # wait to retry after, instead of nginx's 502 page.
        location @unavailable {
            default_type application/problem+json;
            add_header Retry-After 5 always;
            add_header Strict-Transport-Security \$hsts always;
            return 503 '{"type":"about:blank","title":"Service Unavailable","status":503,"detail":"no server can answer now; try again in a few seconds"}';
        }
LOCATIONS
)
    # TLS as `vicinity serve --tls-cert` serves it: 1.2 and later, HTTP/2 by ALPN, HSTS for two years.
    local tls_server=""
    if [ -n "$tls_port" ]; then
        tls_server=$(cat <<TLS
    server {
        listen 127.0.0.1:$tls_port ssl http2;
        ssl_certificate $tls_cert;
        ssl_certificate_key $tls_key;
        ssl_protocols TLSv1.2 TLSv1.3;
$locations
    }
TLS
)
    fi
    mkdir -p "$folder/nginx-temp"
    cat > "$folder/nginx.conf" <<CONF
worker_processes auto;
pid $folder/nginx.pid;
error_log $folder/nginx-error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $folder/nginx-temp/body;
    proxy_temp_path $folder/nginx-temp/proxy;
    fastcgi_temp_path $folder/nginx-temp/fastcgi;
    uwsgi_temp_path $folder/nginx-temp/uwsgi;
    scgi_temp_path $folder/nginx-temp/scgi;
    # Strict-Transport-Security over TLS only (browsers ignore it over plain HTTP); an empty value adds no field.
    # Two years, hstspreload.org's recommended max-age.
    map \$scheme \$hsts {
        https "max-age=63072000";
        default "";
    }
    upstream vicinity {
$servers        keepalive 64;
    }
    server {
        listen 127.0.0.1:$port;
$locations
    }
$tls_server
}
CONF
}

# The certificate nginx serves on --tls-port: the operator's, else one made here, self-signed, for loopback.
prepare_tls() {
    tls_cert="${VICINITY_CLUSTER_TLS_CERT:-}"
    tls_key="${VICINITY_CLUSTER_TLS_KEY:-}"
    if [ -n "$tls_cert" ] || [ -n "$tls_key" ]; then
        [ -r "$tls_cert" ] && [ -r "$tls_key" ] \
            || { echo "cluster: VICINITY_CLUSTER_TLS_CERT and VICINITY_CLUSTER_TLS_KEY must both name readable files" >&2; exit 64; }
        return
    fi
    ensure_packages openssl
    mkdir -p "$folder/tls"
    tls_cert="$folder/tls/cert.pem"
    tls_key="$folder/tls/key.pem"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 30 -subj /CN=localhost \
        -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" -keyout "$tls_key" -out "$tls_cert" 2>/dev/null
}

start() {
    local port=8080 fronts=2 tls_port=""
    while [ $# -gt 0 ]; do
        case "$1" in
            --port) port="$2"; shift 2 ;;
            --fronts) fronts="$2"; shift 2 ;;
            --tls-port) tls_port="$2"; shift 2 ;;
            *) usage ;;
        esac
    done
    [ -f "$folder/fronts" ] && { echo "cluster: already started (Scripts/cluster.sh stop first)" >&2; exit 1; }
    ensure_packages nginx-light curl
    Scripts/setup.sh >/dev/null
    [ -x "$vicinity" ] || swift build -c release --product vicinity
    local url
    url="$(Scripts/postgres.sh start | tail -1)"
    url="${url%/*}/$database"
    psql "$url" -c "SELECT 1" >/dev/null 2>&1 \
        || psql "${url%/*}/postgres" -v ON_ERROR_STOP=1 -q -c "CREATE DATABASE $database"
    mkdir -p "$folder"
    VICINITY_BIN="$vicinity" Scripts/load-data.sh "$url" >"$folder/load.log"
    : > "$folder/fronts"
    local index front_port
    for ((index = 0; index < fronts; index++)); do
        front_port=$((first_front_port + index))
        "$vicinity" serve --db "$url" --host 127.0.0.1 --port "$front_port" --trusted-proxy 127.0.0.1 \
            >"$folder/front-$front_port.log" 2>&1 &
        echo "$! $front_port" >> "$folder/fronts"
    done
    while read -r _ front_port; do wait_healthy "$front_port" "front $front_port"; done < "$folder/fronts"
    [ -n "$tls_port" ] && prepare_tls
    write_nginx_conf "$port" "$fronts" "$tls_port"
    "$(nginx_bin)" -p "$folder" -c "$folder/nginx.conf"
    wait_healthy "$port" "nginx"
    echo "cluster: http://127.0.0.1:$port/ -> $fronts fronts ($(cut -d' ' -f2 "$folder/fronts" | tr '\n' ' ' | sed 's/ $//')) over $url"
    if [ -n "$tls_port" ]; then
        curl -fs -o /dev/null --max-time 5 --cacert "$tls_cert" "https://127.0.0.1:$tls_port/health" \
            || { echo "cluster: nginx did not answer over TLS on port $tls_port; see $folder/nginx-error.log" >&2; exit 1; }
        echo "cluster: https://127.0.0.1:$tls_port/ -> the same fronts (certificate $tls_cert)"
    fi
    echo "cluster: logs and pids in $folder; stop with Scripts/cluster.sh stop"
}

stop() {
    if [ -f "$folder/nginx.pid" ]; then
        "$(nginx_bin)" -p "$folder" -c "$folder/nginx.conf" -s quit 2>/dev/null || kill "$(cat "$folder/nginx.pid")" 2>/dev/null || true
    fi
    if [ -f "$folder/fronts" ]; then
        while read -r pid _; do kill -TERM "$pid" 2>/dev/null || true; done < "$folder/fronts"
        while read -r pid _; do
            for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            kill -KILL "$pid" 2>/dev/null || true
        done < "$folder/fronts"
        rm -f "$folder/fronts"
    fi
    for _ in $(seq 50); do [ -f "$folder/nginx.pid" ] || break; sleep 0.1; done
    echo "cluster: stopped the fronts and nginx; PostgreSQL keeps running (Scripts/postgres.sh stop)"
}

status() {
    [ -f "$folder/fronts" ] || { echo "cluster: not started"; return 0; }
    while read -r pid front_port; do
        if healthy "$front_port"; then echo "front $front_port (pid $pid): healthy"; else echo "front $front_port (pid $pid): not answering /health"; fi
    done < "$folder/fronts"
    if [ -f "$folder/nginx.pid" ] && kill -0 "$(cat "$folder/nginx.pid")" 2>/dev/null; then
        echo "nginx (pid $(cat "$folder/nginx.pid")): running"
    else
        echo "nginx: not running"
    fi
}

case "${1:-}" in
    start) shift; start "$@" ;;
    stop) stop ;;
    status) status ;;
    *) usage ;;
esac
