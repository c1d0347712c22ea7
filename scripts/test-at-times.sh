#!/usr/bin/env bash
# Runs the service tests with the clock set to given UTC times of day (default: 00:05 11:59 12:01 23:59),
# to find tests that pass or fail with the hour. libfaketime moves the clock of vitest, the API and worker
# processes it starts, and a PostgreSQL of this run's own (the machine's keeps the real time, and `now()` in
# SQL must agree with the code's `Date.now()`). Redis keeps the real time: the service reads its clock only
# for ages (TIME minus TIME), and libfaketime cannot start inside redis-server.
#
#   scripts/test-at-times.sh                         # every time, the whole service suite
#   TIMES="12:01" scripts/test-at-times.sh test/retention test/api/insights.int.test.ts
#
# Needs Debian's faketime and PostgreSQL server binaries (/usr/lib/postgresql/*/bin); Redis at TEST_REDIS_URL.
set -euo pipefail
cd "$(dirname "$0")/.."

TIMES=${TIMES:-"00:05 11:59 12:01 23:59"}
PG_BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)}
PG_PORT=${PG_PORT:-55432}
command -v faketime >/dev/null || { echo "needs faketime (apt-get install faketime)" >&2; exit 2; }

work=$(mktemp -d)
chown postgres "$work" 2>/dev/null || true
stop_services() {
  [ -f "$work/data/postmaster.pid" ] && runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true
}
trap 'stop_services; rm -rf "$work"' EXIT
as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

failed=()
for at in $TIMES; do
  # The offset that puts the clock at `at` today (or tomorrow, if `at` has passed), kept for the whole run.
  now=$(date -u +%s)
  target=$(date -u -d "today $at" +%s)
  [ "$target" -lt "$now" ] && target=$((target + 86400))
  offset=$((target - now))
  clock=(faketime -f "+${offset}s")
  echo "== clock at $at UTC (offset ${offset}s)"

  rm -rf "$work/data"
  as_postgres "$PG_BIN/initdb" -D "$work/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 --no-sync >/dev/null
  as_postgres env LD_PRELOAD=/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 FAKETIME="+${offset}s" \
    "$PG_BIN/pg_ctl" -D "$work/data" -l "$work/pg.log" -w \
    -o "-p $PG_PORT -k $work -c listen_addresses=127.0.0.1 -c fsync=off -c max_locks_per_transaction=256 -c max_connections=200" \
    start >/dev/null

  if ! TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$PG_PORT/postgres" \
    "${clock[@]}" npx vitest run --project service "$@"; then
    failed+=("$at")
  fi
  stop_services
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "failed at: ${failed[*]}"
  exit 1
fi
echo "passed at: $TIMES"
