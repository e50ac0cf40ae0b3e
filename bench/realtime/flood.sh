#!/usr/bin/env bash
# bench/realtime/flood.sh: realtime sessions flooding one node (issue 31; docs/performance.md,
# "Realtime flooding"). The release server on a private PostgreSQL; bench/realtime/flood.cpp
# joins SESSIONS sessions at once, each user sending 1,200 audio messages of 262,143 bytes and
# each backend 500 unsolicited rpc_response messages of 200 KB, as fast as the sockets take them,
# while it reads the server's resident memory and times /healthz.
#   SESSIONS_LIST ("1 10")
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../scripts/lib/common.sh"
cd "$GENHOST_ROOT"
SESSIONS_LIST=${SESSIONS_LIST:-"1 10"}
bench_build_release genhost_realtime_flood

bench_workspace genhost-realtime-flood
bench_open_tier
bench_start_genhost 18395 GENHOST_DEFAULT_TIER=1 GENHOST_TIERS_FILE="$work/tiers.json" \
  GENHOST_REALTIME_SESSIONS=20
for n in $SESSIONS_LIST; do
  echo "== $n flooding sessions at once"
  build/release/bench/genhost_realtime_flood --port 18395 --key "$key" --pid "$server_pid" \
    --sessions "$n"
done
echo "== what the server logged of it"
grep -c "unmatched rpc answers" "$work/server.log" || true
grep "unmatched rpc answers" "$work/server.log" | head -3
