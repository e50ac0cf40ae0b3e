#!/usr/bin/env bash
# bench/routers/run.sh: the two goals of routed generation (issue 22; docs/performance.md,
# "Model routers").
# 1. routing_bench (google benchmark): one decision of genhost::routing::Engine over the whole
#    catalog. Goal: under 50 us.
# 2. Routed creation against direct creation of the same model, in one run: the release server
#    (API role: no workers) on a private PostgreSQL, a router that allows only gen4_image, and
#    bench/load's generator alternating ROUNDS times between `create` (POST /v1/text_to_image,
#    gen4_image 1280:720) and `routed` (POST /v1/generate/image, 16:9 at 1k, which the router
#    maps onto the same body). Goal: routed at 80 % or more of direct.
#   CONNS (16)  DURATION (10, seconds per pass)  ROUNDS (3)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../scripts/lib/common.sh"
cd "$GENHOST_ROOT"
CONNS=${CONNS:-16}
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
bench_build_release genhost_loadgen routing_bench

echo "== routing_bench (one decision over the whole catalog)"
build/release/bench/routing_bench --benchmark_min_time=1

bench_workspace genhost-routers-bench
bench_open_tier
bench_start_genhost 18393 GENHOST_DEFAULT_TIER=1 GENHOST_TIERS_FILE="$work/tiers.json" \
  GENHOST_ROLE=api GENHOST_IO_THREADS=2 GENHOST_DB_THREADS=2
export GENHOST_API_KEY="$key"
curl -sf -H "Authorization: Bearer $key" -H "X-Service-Version: 2024-11-06" \
  -H "Content-Type: application/json" http://127.0.0.1:18393/v1/routers \
  -d '{"slug": "bench", "settings": {"models": {"mode": "allowlist_only", "ids": ["gen4_image"]}}}' \
  >/dev/null
dry=$(curl -sf -H "Authorization: Bearer $key" -H "X-Service-Version: 2024-11-06" \
  -H "Content-Type: application/json" http://127.0.0.1:18393/v1/generate/image \
  -d '{"configId": "bench", "dryRun": true, "input": {"promptText": "a lighthouse at dusk", "aspectRatio": "16:9", "resolution": "1k"}}')
echo "== the router's choice: $dry"

declare -a ratios
for round in $(seq "$ROUNDS"); do
  echo "== round $round: $CONNS connections, ${DURATION}s a pass"
  bench_load_pass create create 18393; direct=$rate
  bench_load_pass routed routed 18393; routed=$rate
  ratios+=("$(bench_ratio "$routed" "$direct")")
  echo "  routed / direct: ${ratios[-1]} %"
done
echo "== median routed / direct: $(bench_median "${ratios[@]}") % (goal: 80 % or more)"
decisions=$(bench_psql -c "SELECT count(*) FROM router_requests")
routed_tasks=$(bench_psql -c "SELECT count(*) FROM router_requests WHERE status = 'routed' AND task_id IS NOT NULL")
echo "== decision log: $decisions entries, $routed_tasks with a task"
