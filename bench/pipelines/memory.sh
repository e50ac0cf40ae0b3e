#!/usr/bin/env bash
# bench/pipelines/memory.sh: the server's resident memory (VmRSS) after each of RUNS
# video_to_video tasks whose input is a large video sent as a data URI, and its peak (VmHWM).
# What the pipelines and the request path free must not stay resident (docs/performance.md).
# Release build, a private PostgreSQL (fsync off, unix socket), 2 workers, latency scale 0.
#   RUNS (5): tasks, one after the other
#   BIN (build/release/genhost, built with the release preset when unset)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../scripts/lib/common.sh"
cd "$GENHOST_ROOT"
install_packages curl ffmpeg python3
RUNS=${RUNS:-5}
bench_release_binary
bench_workspace genhost-memory
port=18283
bench_start_genhost $port GENHOST_WORKERS=2 GENHOST_LATENCY_SCALE=0

bench_video_body audio
echo "input: $(stat -c %s "$work/in.mp4") bytes, body $(stat -c %s "$work/body.json") bytes"
rss() { awk -v f="$1:" '$1 == f {print $2 / 1024 " MB"}' "/proc/$server_pid/status"; }
echo "after start: VmRSS $(rss VmRSS)"
hdr=(-H "Authorization: Bearer $key" -H "X-Service-Version: 2024-11-06")
for i in $(seq 1 "$RUNS"); do
  id=$(curl -sf "${hdr[@]}" -H "Content-Type: application/json" --data-binary @"$work/body.json" \
         "http://127.0.0.1:$port/v1/video_to_video" | sed -E 's/.*"id":"([^"]+)".*/\1/')
  status=""
  for _ in $(seq 1 600); do
    status=$(curl -sf "${hdr[@]}" "http://127.0.0.1:$port/v1/tasks/$id" |
               sed -E 's/.*"status":"([A-Z]+)".*/\1/')
    case $status in SUCCEEDED|FAILED|CANCELLED) break ;; esac
    sleep 0.2
  done
  sleep 0.5
  echo "task $i: $status, VmRSS $(rss VmRSS)"
done
echo "peak: VmHWM $(rss VmHWM)"
