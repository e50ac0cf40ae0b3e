#!/usr/bin/env bash
# bench/load/floor_db.sh: how near genhost comes to the least any server must spend on the two
# requests of run.sh on this machine. On one private PostgreSQL (as run.sh's): pgbench's
# single-row insert and primary-key select (the ceiling), then task creation and polling, each
# against genhost_floor_server (bench/load/floor_server.cpp: the same statements and tables with
# no authentication, validation, routing or logging) and against genhost, with the same load
# generator. A second floor server stores creations with a bare INSERT of the task rows
# (--insert-only), without the limits' bookkeeping: the bound for any server that keeps them.
# Prints each one's rate and the CPU per request of the server and of PostgreSQL; with ROUNDS
# above 1 the passes are repeated in turn, since this machine's speed drifts within a minute.
#   CONNS (16)  DURATION (15)  ROUNDS (1)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../scripts/lib/common.sh"
cd "$GENHOST_ROOT"
install_packages postgresql-contrib
CONNS=${CONNS:-16}
DURATION=${DURATION:-15}
ROUNDS=${ROUNDS:-1}
bench_build_release genhost_loadgen genhost_floor_server

bench_workspace genhost-floor-db
floor_pid=""
bare_pid=""
bench_before_cleanup() {
  stop_pid "$floor_pid"
  stop_pid "$bare_pid"
}
dsn="host=$work/pg/run dbname=postgres user=postgres"

bench_psql -c "CREATE TABLE bench_rows (id uuid PRIMARY KEY, seq bigserial UNIQUE, org_id uuid, payload jsonb)"
# ceiling NAME SCRIPT: one pgbench pass of bench/load/SCRIPT.sql.
ceiling() { printf "%-22s %8.0f req/s\n" "$1" "$(bench_pgbench_tps "$2")"; }

bench_open_tier
bench_start_genhost 18181 GENHOST_DEFAULT_TIER=1 GENHOST_TIERS_FILE="$work/tiers.json" GENHOST_ROLE=api \
  GENHOST_IO_THREADS=2 GENHOST_DB_THREADS=2
export GENHOST_API_KEY="$key"
org=$(bench_psql -c "SELECT id FROM organizations LIMIT 1")
build/release/bench/genhost_floor_server --port 18182 --dsn "$dsn" --org "$org" >"$work/floor.log" 2>&1 &
floor_pid=$!
build/release/bench/genhost_floor_server --port 18183 --dsn "$dsn" --org "$org" --insert-only \
  >"$work/bare.log" 2>&1 &
bare_pid=$!
for _ in $(seq 100); do
  grep -q listening "$work/floor.log" && grep -q listening "$work/bare.log" && break
  sleep 0.1
done

postmaster=$(head -1 "$work/pg/data/postmaster.pid")
# measure NAME PORT PID SCENARIO [ARGS...]: one load generator run; rate, CPU per request.
measure() {
  local name=$1 port=$2 pid=$3 s0 q0 s1 q1 out rate
  shift 3
  s0=$(cpu_ticks "$pid"); q0=$(cpu_ticks "$postmaster" $(pgrep -P "$postmaster"))
  out=$(build/release/bench/genhost_loadgen --url "http://127.0.0.1:$port" --connections "$CONNS" \
    --duration "$DURATION" --scenario "$@")
  s1=$(cpu_ticks "$pid"); q1=$(cpu_ticks "$postmaster" $(pgrep -P "$postmaster"))
  rate=$(echo "$out" | grep -oE "Requests/sec: +[0-9.]+" | awk '{print $2}')
  awk -v name="$name" -v r="$rate" -v s=$((s1 - s0)) -v q=$((q1 - q0)) -v d="$DURATION" \
    -v bad="$(echo "$out" | grep -oE "status >= 400: [0-9]+" | grep -oE "[0-9]+$")" \
    -v hz="$(getconf CLK_TCK)" 'BEGIN { n = r * d;
      printf "%-22s %8.0f req/s   server %5.1f us   PostgreSQL %5.1f us per request   (%s >= 400)\n",
             name, r, s * 1e6 / hz / n, q * 1e6 / hz / n, bad }'
}

for round in $(seq "$ROUNDS"); do
  echo "== round $round: task creation, $CONNS connections, ${DURATION}s a pass"
  ceiling "pgbench insert" pg_insert
  measure "floor server, create" 18182 "$floor_pid" create
  measure "floor, bare insert" 18183 "$bare_pid" create
  measure "genhost, create" 18181 "$server_pid" create
  [ -s "$work/ids" ] || bench_psql -c "SELECT id FROM tasks ORDER BY random() LIMIT 20000" >"$work/ids"
  echo "== round $round: task polling, $CONNS connections, ${DURATION}s a pass"
  ceiling "pgbench select" pg_select
  measure "floor server, poll" 18182 "$floor_pid" poll --ids "$work/ids"
  measure "genhost, poll" 18181 "$server_pid" poll --ids "$work/ids"
done
