#!/usr/bin/env bash
# bench/uploads/run.sh: genhost's memory while many large ephemeral uploads stream in at once
# (issue 4: "memory stays flat"). Starts genhost (release build, or GENHOST_BINARY) against a
# private PostgreSQL, creates UPLOADS uploads with POST /v1/uploads, then sends all their
# multipart POSTs at once with curl (each streams SIZE_MB MiB from one file on disk), sampling
# the server's VmRSS every 50 ms. Prints the baseline, the peak RSS while uploading, VmHWM at the
# end and the growth per upload; checks that every upload answered 204 and its file is whole.
# docs/performance.md records a run.
#   UPLOADS (20)  SIZE_MB (100)  GENHOST_BINARY (build/release/genhost, built if unset)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../scripts/lib/common.sh"
cd "$GENHOST_ROOT"
UPLOADS=${UPLOADS:-20}
SIZE_MB=${SIZE_MB:-100}
bin=${GENHOST_BINARY:-}
if [ -z "$bin" ]; then
  cmake --preset release >/dev/null
  cmake --build --preset release --target genhost >/dev/null
  bin=build/release/genhost
fi
command -v curl >/dev/null || install_packages curl

bench_workspace genhost-upload-bench
dsn="host=$work/pg/run dbname=genhost user=postgres"
key="key_$(od -An -tx1 -N64 /dev/urandom | tr -d ' \n')"
port=18282
DATABASE_URL="$dsn" GENHOST_API_KEY="$key" GENHOST_LISTEN=127.0.0.1:$port \
GENHOST_DATA_DIR="$work/data" GENHOST_LOG_LEVEL=warn GENHOST_ROLE=api \
GENHOST_UPLOAD_MAX_BYTES=$(( (SIZE_MB + 1) * 1024 * 1024 )) \
  "$bin" serve >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 200); do curl -sf http://127.0.0.1:$port/readyz >/dev/null && break; sleep 0.1; done
curl -sf http://127.0.0.1:$port/readyz >/dev/null || { cat "$work/server.log"; exit 1; }

status_kb() { awk -v k="$1:" '$1 == k {print $2}' "/proc/$server_pid/status"; }

echo "== making a ${SIZE_MB} MiB file"
head -c "$(( SIZE_MB * 1024 * 1024 ))" /dev/urandom > "$work/big.bin"

create() {
  curl -sf -X POST "http://127.0.0.1:$port/v1/uploads" -H "Authorization: Bearer $key" \
    -H "X-Service-Version: 2024-11-06" -H "Content-Type: application/json" \
    -d '{"filename": "big.bin", "type": "ephemeral"}'
}
# field NAME: the string value of NAME in genhost's compact JSON on stdin (no quotes inside).
field() { grep -o "\"$1\":\"[^\"]*\"" | head -1 | cut -d'"' -f4; }
send() {  # send UPLOAD_JSON FILE OUT
  local url policy signature
  url=$(field uploadUrl <<<"$1")
  policy=$(field policy <<<"$1")
  signature=$(field signature <<<"$1")
  curl -s -o /dev/null -w '%{http_code}' -X POST "$url" -F "policy=$policy" \
    -F "signature=$signature" -F "file=@$2;type=application/octet-stream" >"$3"
}

# Warm-up: one small upload, so the baseline includes what the first request allocates.
head -c 65536 /dev/urandom > "$work/small.bin"
send "$(create)" "$work/small.bin" "$work/warm.code"
[ "$(cat "$work/warm.code")" = 204 ] || { echo "warm-up upload failed"; cat "$work/server.log"; exit 1; }
base_rss=$(status_kb VmRSS)
base_hwm=$(status_kb VmHWM)

echo "== $UPLOADS uploads of ${SIZE_MB} MiB at once"
for i in $(seq "$UPLOADS"); do create > "$work/upload.$i.json"; done
start=$(date +%s.%N)
pids=()
for i in $(seq "$UPLOADS"); do
  send "$(cat "$work/upload.$i.json")" "$work/big.bin" "$work/code.$i" &
  pids+=($!)
done
peak=0
while :; do
  rss=$(status_kb VmRSS)
  [ "$rss" -gt "$peak" ] && peak=$rss
  running=0
  for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && running=1; done
  [ "$running" = 0 ] && break
  sleep 0.05
done
wait "${pids[@]}"  # not a bare wait: the server is a child too
end=$(date +%s.%N)
hwm=$(status_kb VmHWM)

ok=0
for i in $(seq "$UPLOADS"); do
  id=$(field uri < "$work/upload.$i.json" | sed 's|genhost://||')
  if [ "$(cat "$work/code.$i")" = 204 ] && \
     [ "$(stat -c %s "$work/data/inputs/uploads/$id")" = "$(( SIZE_MB * 1024 * 1024 ))" ]; then
    ok=$((ok + 1))
  fi
done
awk -v ok="$ok" -v n="$UPLOADS" -v mb="$(( UPLOADS * SIZE_MB ))" -v s="$start" -v e="$end" \
    -v brss="$base_rss" -v bhwm="$base_hwm" -v peak="$peak" -v hwm="$hwm" 'BEGIN {
  printf "uploads complete (204, whole file): %d of %d\n", ok, n
  printf "received: %d MiB in %.1f s (%.0f MiB/s)\n", mb, e - s, mb / (e - s)
  printf "baseline after warm-up: VmRSS %.1f MiB, VmHWM %.1f MiB\n", brss / 1024, bhwm / 1024
  printf "while uploading: peak VmRSS %.1f MiB (sampled every 50 ms)\n", peak / 1024
  printf "at the end: VmHWM %.1f MiB, growth over the baseline %.1f MiB (%.0f KiB per upload)\n",
         hwm / 1024, (hwm - bhwm) / 1024, (hwm - bhwm) / n
}'
[ "$ok" = "$UPLOADS" ]
