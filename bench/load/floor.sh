#!/usr/bin/env bash
# bench/load/floor.sh: what the HTTP layer costs by itself on this machine, beside the figures of
# run.sh. wrk (16 connections, 2 threads, DURATION s) against nginx answering a fixed 200 from
# memory (2 workers, keep-alive, no access log), then against genhost's GET /healthz (no
# database work); prints each one's rate and the CPU per request of the server and of wrk.
#   CONNS (16)  DURATION (8)  IO_THREADS (2)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../scripts/lib/common.sh"
cd "$GENHOST_ROOT"
install_packages wrk nginx-light
CONNS=${CONNS:-16}
DURATION=${DURATION:-8}
bench_release_binary
bench_workspace genhost-floor
bench_before_cleanup() { [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true; }

# measure NAME URL PID...: one wrk run against URL; CPU of the given server processes and of wrk.
measure() {
  local name=$1 url=$2; shift 2
  local s0 s1 rate
  s0=$(cpu_ticks "$@")
  /usr/bin/time -f "%U %S" -o "$work/wrk.time" \
    wrk -t2 -c"$CONNS" -d"${DURATION}s" -s "$work/get.lua" "$url" >"$work/wrk.txt"
  s1=$(cpu_ticks "$@")
  rate=$(grep -oE "Requests/sec: +[0-9.]+" "$work/wrk.txt" | awk '{print $2}')
  awk -v name="$name" -v r="$rate" -v s=$((s1 - s0)) -v w="$(cat "$work/wrk.time")" -v d="$DURATION" \
    -v hz="$(getconf CLK_TCK)" -v bad="$(grep -c "Non-2xx" "$work/wrk.txt" || true)" \
    'BEGIN { split(w, t, " "); n = r * d;
             printf "%-18s %8.0f req/s   server %5.1f us   wrk %5.1f us per request%s\n", name, r,
                    s * 1e6 / hz / n, (t[1] + t[2]) * 1e6 / n, (bad > 0 ? "   (NON-2xx answers)" : "") }'
}

mkdir -p "$work/nginx"
cat > "$work/nginx/nginx.conf" <<CONF
worker_processes 2;
error_log $work/nginx/error.log warn;
pid $work/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off;
  keepalive_requests 100000000;
  server {
    listen 127.0.0.1:18201;
    location / { default_type application/json; return 200 '{"id":"00000000-0000-4000-8000-000000000001","status":"THROTTLED","createdAt":"2026-11-23T07:00:00.000Z","estimatedCost":{"credits":5}}'; }
  }
}
CONF
nginx -c "$work/nginx/nginx.conf" -p "$work/nginx"
for _ in $(seq 50); do [ -f "$work/nginx.pid" ] && break; sleep 0.1; done

bench_start_genhost 18182 GENHOST_ROLE=api GENHOST_IO_THREADS="${IO_THREADS:-2}"
cat > "$work/get.lua" <<LUA
wrk.headers["Authorization"] = "Bearer $key"
wrk.headers["X-Service-Version"] = "2024-11-06"
wrk.path = "/healthz"
LUA
nginx_workers=$(pgrep -P "$(cat "$work/nginx.pid")")
for round in 1 2; do
  measure "nginx, fixed 200" http://127.0.0.1:18201 $nginx_workers
  measure "genhost /healthz" http://127.0.0.1:18182 "$server_pid"
done
