# Sourced by the checks and benchmarks that run a PostgreSQL server of their own (Scripts/check/crash.sh,
# Scripts/bench/soak.sh), apart from the loopback server others use on Scripts/postgres.sh's default port.
#   start_own_postgres PORT DATABASE
#       makes a new cluster in a folder of its own (Scripts/postgres.sh with VICINITY_PG_DIR and
#       VICINITY_PG_PORT exported, so that later calls of Scripts/postgres.sh reach this server), starts it on
#       127.0.0.1:PORT and creates DATABASE with PostGIS; sets $own_pg_url. Fails when something answers on
#       PORT already.
#   stop_own_postgres
#       stops that server and removes its folder; for the caller's EXIT trap, never failing.
own_pg_dir=""
own_pg_port=""

start_own_postgres() {
    own_pg_port="$1"
    local database="$2"
    export VICINITY_PG_PORT="$own_pg_port"
    if Scripts/postgres.sh status; then
        echo "something already answers on port $own_pg_port: choose another port" >&2
        return 1
    fi
    own_pg_dir="$(mktemp -d /tmp/vicinity-own-pg.XXXXXX)"
    export VICINITY_PG_DIR="$own_pg_dir"
    own_pg_url="$(timeout 300 Scripts/postgres.sh fresh "$database")"
}

stop_own_postgres() {
    if [ -n "$own_pg_dir" ]; then
        VICINITY_PG_DIR="$own_pg_dir" VICINITY_PG_PORT="$own_pg_port" timeout 120 Scripts/postgres.sh destroy >/dev/null 2>&1 || true
        rm -rf "$own_pg_dir"
        own_pg_dir=""
    fi
}
