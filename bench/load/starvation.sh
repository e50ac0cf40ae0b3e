#!/usr/bin/env bash
# bench/load/starvation.sh: GET /v1/tasks/{id} latency while every worker is busy with CPU-heavy
# media tasks and the queue stays full (issue 5: p99 < 50 ms), with worker threads at
# GENHOST_WORKER_NICE=10 (the default) against 0, and with idle workers as the baseline.
# Release build, a private PostgreSQL (fsync off, unix socket), everything on this machine's
# cores. Prints every figure; docs/performance.md records a run.
#   WORKERS (2)  DURATION (20 s)  CONNS (4)  RATE (50 req/s per connection)  NICES ("10 0")
#   BIN (build/release/genhost, built with the release preset when unset)
#   TASK_PATH, TASK_BODY: the CPU-heavy task (default: text_to_video gen4.5, 10 s at 1280:720)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../scripts/lib/common.sh"
cd "$GENHOST_ROOT"
install_packages curl
WORKERS=${WORKERS:-2}
DURATION=${DURATION:-20}
CONNS=${CONNS:-4}
RATE=${RATE:-50}
NICES=${NICES:-"10 0"}
TASK_PATH=${TASK_PATH:-/v1/text_to_video}
TASK_BODY=${TASK_BODY:-'{"model":"gen4.5","promptText":"a lighthouse at dusk, waves","ratio":"1280:720","duration":10}'}
cmake --preset release >/dev/null
if [ -z "${BIN:-}" ]; then
  cmake --build --preset release --target genhost >/dev/null
  BIN=build/release/genhost
fi
cmake --build --preset release --target genhost_loadgen >/dev/null

refill_pid=""
stop_server() {
  stop_pid "$refill_pid"
  refill_pid=""
  stop_pid "$server_pid"
  server_pid=""
}
bench_before_cleanup() { stop_server; }
bench_workspace genhost-starve
psql_() { as_pg_user "$PG_BIN/psql" -h "$work/pg/run" -U postgres -Atq "$@"; }

key="key_$(od -An -tx1 -N64 /dev/urandom | tr -d ' \n')"
export GENHOST_API_KEY="$key"
cat > "$work/tiers.json" <<JSON
{"tiers": [{"tier": 1, "max_concurrent_generations": 1000, "max_daily_generations": 100000000,
            "max_monthly_spend_usd": 100000}]}
JSON
port=18191
url="http://127.0.0.1:$port"
hdr=(-H "Authorization: Bearer $key" -H "X-Service-Version: 2024-11-06" -H "Content-Type: application/json")

# create prints the new task's id on a line of its own (the response has no final newline).
create() {
  local id
  id=$(curl -sf "${hdr[@]}" -d "$TASK_BODY" "$url$TASK_PATH" | sed -E 's/.*"id":"([^"]+)".*/\1/')
  printf '%s\n' "$id"
}

start_server() {  # start_server DB NICE WORKERS
  psql_ -d postgres -c "CREATE DATABASE $1" >/dev/null
  DATABASE_URL="host=$work/pg/run dbname=$1 user=postgres" GENHOST_API_KEY="$key" \
  GENHOST_DEFAULT_TIER=1 GENHOST_TIERS_FILE="$work/tiers.json" GENHOST_LISTEN=127.0.0.1:$port \
  GENHOST_DATA_DIR="$work/data-$1" GENHOST_LOG_LEVEL=warn GENHOST_WORKERS="$3" \
  GENHOST_WORKER_NICE="$2" GENHOST_LATENCY_SCALE=0 \
    "$BIN" serve >"$work/server-$1.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 100); do curl -sf "$url/readyz" >/dev/null && return 0; sleep 0.1; done
  echo "genhost did not start:"; cat "$work/server-$1.log"; exit 1
}

# refill DB: keeps at least 2 × WORKERS tasks PENDING, so the media queue never runs dry.
refill() {
  while true; do
    pending=$(psql_ -d "$1" -c "SELECT count(*) FROM tasks WHERE status = 'PENDING'")
    if [ "$pending" -lt $((2 * WORKERS)) ]; then
      for _ in $(seq $((4 * WORKERS))); do create >>"$work/ids-$1"; done
    fi
    sleep 0.2
  done
}

measure() {  # measure DB LABEL
  local db=$1 label=$2
  local first
  first=$(head -n 1 "$work/ids-$db")
  echo "check: GET /v1/tasks/$first -> $(curl -s -o /dev/null -w '%{http_code}' "${hdr[@]}" "$url/v1/tasks/$first")"
  # Poll a mix of finished, running and queued tasks (open loop, bench/load/loadgen.cpp).
  build/release/bench/genhost_loadgen --scenario poll --ids "$work/ids-$db" --url "$url" \
    --connections "$CONNS" --threads 1 --rate $((RATE * CONNS)) --duration "$DURATION" \
    >"$work/load-$db.txt"
  local busy
  busy=$(curl -s "$url/metrics" | awk '/^genhost_workers_running /{print $2}')
  local done_tasks
  done_tasks=$(psql_ -d "$db" -c "SELECT count(*) FROM tasks WHERE status = 'SUCCEEDED'")
  local failed
  failed=$(psql_ -d "$db" -c "SELECT count(*) FROM tasks WHERE status = 'FAILED'")
  echo "== $label"
  grep -E "Requests/sec|status >= 400|socket errors|latency p" "$work/load-$db.txt"
  echo "workers running at the end: ${busy:-?} of $WORKERS; media tasks succeeded: $done_tasks, failed: $failed"
}

echo "genhost: $BIN; $WORKERS workers; poll load: $CONNS connections × $RATE req/s for ${DURATION}s"
echo "media task: POST $TASK_PATH $TASK_BODY"

# Baseline: no media work at all (tasks created, no workers to run them).
start_server idle 10 0
for _ in $(seq 50); do create >>"$work/ids-idle"; done
measure idle "idle workers (baseline)"
stop_server

for nice in $NICES; do
  db="busy$nice"
  start_server "$db" "$nice" "$WORKERS"
  for _ in $(seq $((4 * WORKERS))); do create >>"$work/ids-$db"; done
  refill "$db" &
  refill_pid=$!
  sleep 3  # let every worker pick up a task
  measure "$db" "every worker busy, GENHOST_WORKER_NICE=$nice"
  stop_server
done
