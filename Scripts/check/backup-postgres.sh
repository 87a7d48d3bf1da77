#!/usr/bin/env bash
# PostgreSQL's backup and restore, run as `vicinity backup` and `vicinity restore` print them for a postgres://
# URL, and checked against the loopback server of Scripts/postgres.sh:
#   Scripts/check/backup-postgres.sh
#   1. A fresh database loaded with the shipped places (Data/, as Scripts/load-data.sh loads them) and 20 people
#      signed in, with positions, friendships and votes (vicinity-seed).
#   2. The pg_dump command `vicinity backup --db URL --to FILE` prints, run as printed.
#   3. The pg_restore command `vicinity restore --from FILE --db URL` prints, run as printed: into a second fresh
#      database, and back over the first after it has changed.
#   4. `vicinity copy` from each database into a SpatiaLite file prints every table's rows and checksum (and the
#      next event number); each restored database must print the same as the source did when it was dumped.
# Uses the debug build (swift build), or the binaries named by VICINITY_BIN and VICINITY_SEED_BIN.
set -euo pipefail
cd "$(dirname "$0")/../.."
started=$(date +%s.%N)

if [ -z "${VICINITY_BIN:-}" ] || [ -z "${VICINITY_SEED_BIN:-}" ]; then
    swift build --product vicinity >/dev/null
    swift build --product vicinity-seed >/dev/null
fi
vicinity="${VICINITY_BIN:-$PWD/.build/debug/vicinity}"
seed="${VICINITY_SEED_BIN:-$PWD/.build/debug/vicinity-seed}"
source_url="$(Scripts/postgres.sh fresh vicinity_backup_source)"
restored_url="$(Scripts/postgres.sh fresh vicinity_backup_restored)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
dump="$work/vicinity.dump"

fail() { echo "check-backup-postgres: $*" >&2; exit 1; }

# The one line of a command's advice that starts with the tool's name, as it is to be run.
advice() {
    local tool="$1"; shift
    local status=0
    "$vicinity" "$@" 2>"$work/advice.txt" >/dev/null || status=$?
    [ "$status" -eq 64 ] || fail "vicinity $1 exited with $status, not 64, for a postgres:// URL"
    grep -m1 "^  $tool " "$work/advice.txt" | sed 's/^  //' || fail "vicinity $1 printed no $tool command: $(cat "$work/advice.txt")"
}

# Every table's rows and checksum, and the next event number, as `vicinity copy` reports them for DATABASE.
checksums() {
    local copy="$work/copy-$RANDOM.sqlite"
    "$vicinity" copy --from "$1" --to "$copy" 2>>"$work/load.log" | grep -E '^  ' | sed -E 's/  (same|DIFFERENT.*)$//'
    rm -f "$copy"
}

# The store's log lines (its migrations) go to a file, shown if loading fails.
VICINITY_BIN="$vicinity" Scripts/load-data.sh "$source_url" >/dev/null 2>"$work/load.log" || { cat "$work/load.log" >&2; fail "loading the shipped data failed"; }
mkdir "$work/seed"
"$seed" "$source_url" Data/csulb-buildings.csv "$work/seed" 20 5 2 >/dev/null 2>>"$work/load.log" || { cat "$work/load.log" >&2; fail "seeding failed"; }
before="$(checksums "$source_url")"
echo "source database:"
echo "$before"
grep -q 'accounts *20 rows' <<<"$before" || fail "the source does not hold the 20 seeded accounts"

dump_command="$(advice pg_dump backup --db "$source_url" --to "$dump")"
echo "running: $dump_command"
bash -c "$dump_command"
[ -s "$dump" ] || fail "pg_dump wrote no file"

restore_command="$(advice pg_restore restore --from "$dump" --db "$restored_url")"
echo "running: $restore_command"
bash -c "$restore_command"
after="$(checksums "$restored_url")"
[ "$after" = "$before" ] || { diff <(echo "$before") <(echo "$after") >&2 || true; fail "the restored database differs from the source"; }
echo "restored into a fresh database: every table the same"

# The source changes (three more places: the first three shipped buildings again, under new ids), then the dump
# goes back over it.
head -4 Data/csulb-buildings.csv | sed '2,$s/^csulb-/later-/' > "$work/later.csv"
"$vicinity" import places "$work/later.csv" --db "$source_url" >/dev/null 2>>"$work/load.log"
[ "$(checksums "$source_url")" != "$before" ] || fail "the source did not change"
restore_command="$(advice pg_restore restore --from "$dump" --db "$source_url")"
echo "running: $restore_command"
bash -c "$restore_command"
again="$(checksums "$source_url")"
[ "$again" = "$before" ] || { diff <(echo "$before") <(echo "$again") >&2 || true; fail "restoring over the changed source did not bring it back"; }
echo "restored over the changed source: every table as it was when dumped"
echo "check-backup-postgres: ok in $(python3 -c "print(f'{$(date +%s.%N) - $started:.1f}')") s"
