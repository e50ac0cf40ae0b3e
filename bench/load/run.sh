#!/usr/bin/env bash
# bench/load/run.sh: task creation and task polling against the release build and a private
# PostgreSQL (fsync off, unix socket), with pgbench's single-row insert and primary-key select
# on the same server as the ceiling. The load comes from bench/load/loadgen.cpp (closed loop at
# full load, open loop with sub-millisecond pacing at half load). Prints every figure;
# docs/performance.md records a run.
#   CONNS (16)  DURATION (15)  IO_THREADS (2)  DB_THREADS (2)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../scripts/lib/common.sh"
cd "$GENHOST_ROOT"
install_packages postgresql-contrib
CONNS=${CONNS:-16}
DURATION=${DURATION:-15}
cmake --preset release >/dev/null
cmake --build --preset release --target genhost genhost_loadgen >/dev/null
loadgen() {
  build/release/bench/genhost_loadgen --url http://127.0.0.1:18181 --connections "$CONNS" "$@"
}

bench_workspace genhost-bench
dsn="host=$work/pg/run dbname=genhost user=postgres"
psql_() { as_pg_user "$PG_BIN/psql" -h "$work/pg/run" -U postgres -d genhost -Atq "$@"; }

echo "== pgbench ceiling (-c$CONNS -j2 -T$DURATION -M prepared)"
psql_ -c "CREATE TABLE bench_rows (id uuid PRIMARY KEY, seq bigserial UNIQUE, org_id uuid, payload jsonb)"
as_pg_user "$PG_BIN/pgbench" -h "$work/pg/run" -U postgres -n -M prepared -c "$CONNS" -j 2 -T "$DURATION" \
  -f "$here/pg_insert.sql" genhost 2>/dev/null | grep -E "^tps|latency average"
as_pg_user "$PG_BIN/pgbench" -h "$work/pg/run" -U postgres -n -M prepared -c "$CONNS" -j 2 -T "$DURATION" \
  -f "$here/pg_select.sql" genhost 2>/dev/null | grep -E "^tps|latency average"

key="key_$(od -An -tx1 -N64 /dev/urandom | tr -d ' \n')"
cat > "$work/tiers.json" <<JSON
{"tiers": [{"tier": 1, "max_concurrent_generations": 20, "max_daily_generations": 100000000,
            "max_monthly_spend_usd": 100000}]}
JSON
# API role: the load is on the front end and the database; no workers render images meanwhile.
DATABASE_URL="$dsn" GENHOST_API_KEY="$key" GENHOST_DEFAULT_TIER=1 GENHOST_TIERS_FILE="$work/tiers.json" \
GENHOST_ROLE=api GENHOST_LISTEN=127.0.0.1:18181 GENHOST_DATA_DIR="$work/data" GENHOST_LOG_LEVEL=warn \
GENHOST_IO_THREADS=${IO_THREADS:-2} GENHOST_DB_THREADS=${DB_THREADS:-2} \
  build/release/genhost serve >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do curl -sf http://127.0.0.1:18181/readyz >/dev/null && break; sleep 0.1; done
export GENHOST_API_KEY="$key"

rps() { grep -oE "Requests/sec: +[0-9.]+" | awk '{print $2}'; }
# summary: the lines of the load generator's output that this script reports.
summary() { grep -E "Requests/sec|status >= 400|socket errors|latency p|CPU per request"; }
# CPU per request (genhost; PostgreSQL's postmaster and backends) and statements per commit.
postmaster=$(head -1 "$work/pg/data/postmaster.pid")
xacts() { psql_ -c "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = 'genhost'"; }
mark() { g0=$(cpu_ticks "$server_pid"); q0=$(cpu_ticks "$postmaster" $(pgrep -P "$postmaster")); x0=$(xacts); }
# cpu_report RATE: the CPU each side spent per request since `mark`, and requests per transaction.
cpu_report() {
  local g1 q1 x1
  g1=$(cpu_ticks "$server_pid"); q1=$(cpu_ticks "$postmaster" $(pgrep -P "$postmaster"))
  sleep 1  # backends report their counts to pg_stat_database at most once a second
  x1=$(xacts)
  awk -v g=$((g1 - g0)) -v q=$((q1 - q0)) -v x=$((x1 - x0)) -v r="$1" -v d="$DURATION" \
    -v hz="$(getconf CLK_TCK)" 'BEGIN { n = r * d; printf "CPU per request: genhost %.0f us, PostgreSQL %.0f us; %.1f requests per database transaction\n", g * 1e6 / hz / n, q * 1e6 / hz / n, n / x }'
}

echo "== task creation at full load: $CONNS connections, ${DURATION}s, POST /v1/text_to_image"
mark
loadgen --scenario create --duration "$DURATION" | tee "$work/create.txt" | summary
create_rps=$(rps < "$work/create.txt")
cpu_report "$create_rps"

psql_ -c "SELECT id FROM tasks ORDER BY random() LIMIT 20000" > "$work/ids"
echo "== task polling at full load: $CONNS connections, ${DURATION}s, GET /v1/tasks/{id}"
mark
loadgen --scenario poll --ids "$work/ids" --duration "$DURATION" | tee "$work/poll.txt" | summary
poll_rps=$(rps < "$work/poll.txt")
cpu_report "$poll_rps"

# Half of the full-load rate, open loop: each connection sends on its own schedule (sub-millisecond
# timers), and latency counts from when a request was due.
half() { awk -v r="$1" 'BEGIN { printf "%.0f", r / 2 }'; }
echo "== task creation at half load ($(half "$create_rps") req/s)"
loadgen --scenario create --duration "$DURATION" --rate "$(half "$create_rps")" | summary
echo "== task polling at half load ($(half "$poll_rps") req/s)"
loadgen --scenario poll --ids "$work/ids" --duration "$DURATION" --rate "$(half "$poll_rps")" \
  | summary

echo "== server memory after 100,000 tasks"
while [ "$(psql_ -c 'SELECT count(*) FROM tasks')" -lt 100000 ]; do
  loadgen --scenario create --duration 5 >/dev/null
done
loadgen --scenario poll --ids "$work/ids" --duration 5 >/dev/null
echo "tasks: $(psql_ -c 'SELECT count(*) FROM tasks')"
grep -E "VmRSS|VmHWM" "/proc/$server_pid/status"
