#!/usr/bin/env bash
# bench/load/run.sh: task creation and task polling against the release build and a private
# PostgreSQL (fsync off, unix socket), with pgbench's single-row insert and primary-key select
# on the same server as the ceiling. The load comes from bench/load/loadgen.cpp (closed loop at
# full load, open loop with sub-millisecond pacing at half load). Prints every figure;
# docs/performance.md records a run.
#
# The speed of a shared machine drifts by a fifth within a minute, so the ceiling and genhost
# are measured in alternation, ROUNDS times, and each ratio is given per round and as the median
# of the rounds. genhost is measured twice per round: over TCP (the address clients use) and over
# a unix-domain socket (GENHOST_LISTEN=unix:PATH, a second server on the same database), which
# is how pgbench reaches PostgreSQL here.
#   CONNS (16)  DURATION (10, seconds per pass)  ROUNDS (3)  IO_THREADS (2)  DB_THREADS (2)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../scripts/lib/common.sh"
cd "$GENHOST_ROOT"
install_packages postgresql-contrib
CONNS=${CONNS:-16}
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
bench_build_release genhost_loadgen

bench_workspace genhost-bench
unix_pid=""
bench_before_cleanup() { stop_pid "$unix_pid"; }
dsn="host=$work/pg/run dbname=postgres user=postgres"

bench_open_tier
# API role: the load is on the front end and the database; no workers render images meanwhile.
settings=(GENHOST_DEFAULT_TIER=1 GENHOST_TIERS_FILE="$work/tiers.json" GENHOST_ROLE=api
  GENHOST_IO_THREADS="${IO_THREADS:-2}" GENHOST_DB_THREADS="${DB_THREADS:-2}")
bench_start_genhost 18181 "${settings[@]}"
export GENHOST_API_KEY="$key"
sock="$work/genhost.sock"
env DATABASE_URL="$dsn" GENHOST_API_KEY="$key" GENHOST_LISTEN="unix:$sock" \
  GENHOST_DATA_DIR="$work/data-unix" GENHOST_LOG_LEVEL=warn "${settings[@]}" \
  "$BIN" serve >"$work/server-unix.log" 2>&1 &
unix_pid=$!
for _ in $(seq 100); do curl -sf --unix-socket "$sock" http://localhost/readyz >/dev/null && break; sleep 0.1; done
bench_psql -c "CREATE TABLE bench_rows (id uuid PRIMARY KEY, seq bigserial UNIQUE, org_id uuid, payload jsonb)"

# Each pass prints one line and leaves its rate in $rate.
postmaster=$(head -1 "$work/pg/data/postmaster.pid")
xacts() { bench_psql -c "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = 'postgres'"; }
pgbench_pass() {  # NAME SCRIPT
  rate=$(bench_pgbench_tps "$2")
  printf "  %-22s %9.0f/s\n" "$1" "$rate"
}
genhost_pass() {  # NAME PID LOADGEN-ARGS...
  local name=$1 pid=$2 out g0 q0 x0 g1 q1 x1
  shift 2
  g0=$(cpu_ticks "$pid"); q0=$(cpu_ticks "$postmaster" $(pgrep -P "$postmaster")); x0=$(xacts)
  out=$(build/release/bench/genhost_loadgen --url http://127.0.0.1:18181 --connections "$CONNS" \
    --duration "$DURATION" "$@")
  g1=$(cpu_ticks "$pid"); q1=$(cpu_ticks "$postmaster" $(pgrep -P "$postmaster"))
  sleep 1  # backends report their counts to pg_stat_database at most once a second
  x1=$(xacts)
  rate=$(echo "$out" | grep -oE "Requests/sec: +[0-9.]+" | awk '{print $2}')
  echo "$out" | awk -v n="$name" -v r="$rate" -v g=$((g1 - g0)) -v q=$((q1 - q0)) -v x=$((x1 - x0)) \
    -v d="$DURATION" -v hz="$(getconf CLK_TCK)" '
    /status >= 400/ { bad = $NF } /socket errors/ { err = $NF } /latency p99:/ { p99 = $3 }
    /CPU per request/ { lg = $(NF - 1) }
    END { m = r * d; printf "  %-22s %9.0f/s  CPU per request: genhost %.1f us, PostgreSQL %.1f us, load generator %s us; %.1f per transaction; p99 %s ms; >= 400: %s; socket errors: %s\n",
          n, r, g * 1e6 / hz / m, q * 1e6 / hz / m, lg, m / x, p99, bad, err }'
}

declare -a ins sel cre creu pol polu
for round in $(seq "$ROUNDS"); do
  echo "== round $round: $CONNS connections, ${DURATION}s a pass"
  pgbench_pass "pgbench insert" pg_insert; ins+=("$rate")
  genhost_pass "create, TCP" "$server_pid" --scenario create; cre+=("$rate")
  genhost_pass "create, unix socket" "$unix_pid" --scenario create --unix "$sock"; creu+=("$rate")
  [ -s "$work/ids" ] || bench_psql -c "SELECT id FROM tasks ORDER BY random() LIMIT 20000" > "$work/ids"
  pgbench_pass "pgbench select" pg_select; sel+=("$rate")
  genhost_pass "poll, TCP" "$server_pid" --scenario poll --ids "$work/ids"; pol+=("$rate")
  genhost_pass "poll, unix socket" "$unix_pid" --scenario poll --ids "$work/ids" --unix "$sock"
  polu+=("$rate")
done

echo "== ratios per round (goal: creation 70 % of the insert rate, polling 60 % of the select rate)"
declare -a rc rcu rp rpu
for i in $(seq 0 $((ROUNDS - 1))); do
  rc+=("$(bench_ratio "${cre[$i]}" "${ins[$i]}")"); rcu+=("$(bench_ratio "${creu[$i]}" "${ins[$i]}")")
  rp+=("$(bench_ratio "${pol[$i]}" "${sel[$i]}")"); rpu+=("$(bench_ratio "${polu[$i]}" "${sel[$i]}")")
  echo "  round $((i + 1)): creation ${rc[$i]} % (TCP), ${rcu[$i]} % (unix socket);" \
    "polling ${rp[$i]} % (TCP), ${rpu[$i]} % (unix socket)"
done
echo "  median: creation $(bench_median "${rc[@]}") % (TCP), $(bench_median "${rcu[@]}") % (unix socket);" \
  "polling $(bench_median "${rp[@]}") % (TCP), $(bench_median "${rpu[@]}") % (unix socket)"

# Half of the median full-load rate over TCP, open loop: each connection sends on its own
# schedule (sub-millisecond ticks), and latency counts from when a request was due.
half() { awk -v r="$(bench_median "$@")" 'BEGIN { printf "%.0f", r / 2 }'; }
summary() { grep -E "Requests/sec|status >= 400|socket errors|latency p"; }
echo "== task creation at half load over TCP ($(half "${cre[@]}") req/s)"
build/release/bench/genhost_loadgen --url http://127.0.0.1:18181 --connections "$CONNS" \
  --duration "$DURATION" --scenario create --rate "$(half "${cre[@]}")" | summary
echo "== task polling at half load over TCP ($(half "${pol[@]}") req/s)"
build/release/bench/genhost_loadgen --url http://127.0.0.1:18181 --connections "$CONNS" \
  --duration "$DURATION" --scenario poll --ids "$work/ids" --rate "$(half "${pol[@]}")" | summary

echo "== server memory after 100,000 tasks (the TCP server)"
while [ "$(bench_psql -c 'SELECT count(*) FROM tasks')" -lt 100000 ]; do
  build/release/bench/genhost_loadgen --url http://127.0.0.1:18181 --connections "$CONNS" \
    --duration 5 --scenario create >/dev/null
done
build/release/bench/genhost_loadgen --url http://127.0.0.1:18181 --connections "$CONNS" \
  --duration 5 --scenario poll --ids "$work/ids" >/dev/null
echo "tasks: $(bench_psql -c 'SELECT count(*) FROM tasks')"
grep -E "VmRSS|VmHWM" "/proc/$server_pid/status"
