#!/usr/bin/env bash
# bench/pipelines/run.sh: wall time of builtin pipelines from POST to SUCCEEDED (issue 5), next
# to the `ffmpeg` command line doing the same encode on the same machine in the same run.
# Release build, a private PostgreSQL (fsync off, unix socket), one worker, latency scale 0.
#   RUNS (5): runs per case; the median, minimum and maximum are printed.
#   BIN (build/release/genhost, built with the release preset when unset)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../scripts/lib/common.sh"
cd "$GENHOST_ROOT"
install_packages curl ffmpeg python3 bc
RUNS=${RUNS:-5}
if [ -z "${BIN:-}" ]; then
  cmake --preset release >/dev/null
  cmake --build --preset release --target genhost >/dev/null
  BIN=build/release/genhost
fi

work=$(mktemp -d /tmp/genhost-pipelines.XXXXXX)
chmod 755 "$work"
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
  pg_stop "$work/pg" immediate
  rm -rf "$work"
}
trap cleanup EXIT
pg_start "$work/pg" off
key="key_$(head -c 64 /dev/urandom | od -An -tx1 | tr -d ' \n')"
port=18282
DATABASE_URL="host=$work/pg/run dbname=postgres user=postgres" GENHOST_API_KEY="$key" \
GENHOST_LISTEN=127.0.0.1:$port GENHOST_DATA_DIR="$work/data" GENHOST_LOG_LEVEL=warn \
GENHOST_WORKERS=1 GENHOST_LATENCY_SCALE=0 \
  "$BIN" serve >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done

# stats prints "median min max" of the numbers on stdin.
stats() { sort -n | awk '{a[NR]=$1} END {printf "%.3f %.3f %.3f", a[int((NR+1)/2)], a[1], a[NR]}'; }

# task_seconds ENDPOINT BODY: POST, poll every 20 ms until SUCCEEDED; prints the wall seconds.
task_seconds() {
  python3 - "$port" "$key" "$1" "$2" <<'PY'
import json, sys, time, urllib.request
port, key, endpoint, body = sys.argv[1:]
h = {"Authorization": "Bearer " + key, "X-Service-Version": "2024-11-06",
     "Content-Type": "application/json"}
t0 = time.monotonic()
r = urllib.request.urlopen(urllib.request.Request(
    f"http://127.0.0.1:{port}/v1/{endpoint}", data=body.encode(), headers=h, method="POST"))
tid = json.load(r)["id"]
while True:
    t = json.load(urllib.request.urlopen(urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/tasks/{tid}", headers=h)))
    if t["status"] in ("SUCCEEDED", "FAILED", "CANCELLED"):
        break
    time.sleep(0.02)
if t["status"] != "SUCCEEDED":
    sys.exit("task ended " + json.dumps(t))
print(f"{time.monotonic() - t0:.3f}")
PY
}

# ffmpeg_seconds ARGS...: wall seconds of one ffmpeg run.
ffmpeg_seconds() {
  local t0 t1
  t0=$(date +%s.%N)
  ffmpeg -hide_banner -loglevel error -y "$@"
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l
}

run_case() {  # NAME ENDPOINT BODY FFMPEG-ARGS...
  local name=$1 endpoint=$2 body=$3
  shift 3
  local ours theirs
  ours=$(for _ in $(seq "$RUNS"); do task_seconds "$endpoint" "$body"; done | stats)
  theirs=$(for _ in $(seq "$RUNS"); do ffmpeg_seconds "$@"; done | stats)
  local m1 m2
  m1=${ours%% *}
  m2=${theirs%% *}
  printf '%-34s genhost %s s (min %s, max %s)  ffmpeg %s s (min %s, max %s)  ratio %.2f\n' \
    "$name" "$m1" "$(echo "$ours" | cut -d' ' -f2)" "$(echo "$ours" | cut -d' ' -f3)" \
    "$m2" "$(echo "$theirs" | cut -d' ' -f2)" "$(echo "$theirs" | cut -d' ' -f3)" \
    "$(echo "$m1 / $m2" | bc -l)"
}

echo "== builtin pipelines, POST to SUCCEEDED, median of $RUNS (ffmpeg: the same encode from lavfi)"
run_case "text_to_video 5 s 1280x720 (no audio)" text_to_video \
  '{"model":"gen4.5","promptText":"a lighthouse at dusk","ratio":"1280:720","duration":5}' \
  -f lavfi -i testsrc2=size=1280x720:rate=24 -t 5 -c:v libx264 -preset veryfast -crf 20 \
  -pix_fmt yuv420p -movflags +faststart "$work/ff.mp4"
run_case "text_to_video 4 s 1280x720 + AAC" text_to_video \
  '{"model":"veo3.1","promptText":"a lighthouse at dusk","ratio":"1280:720","duration":4}' \
  -f lavfi -i testsrc2=size=1280x720:rate=24 -f lavfi -i sine=frequency=440:sample_rate=48000 \
  -t 4 -c:v libx264 -preset veryfast -crf 20 -pix_fmt yuv420p -c:a aac -ac 2 \
  -movflags +faststart "$work/ff.mp4"
run_case "text_to_image 1920x1080 PNG" text_to_image \
  '{"model":"gen4_image","promptText":"a lighthouse at dusk","ratio":"1920:1080"}' \
  -f lavfi -i testsrc2=size=1920x1080:rate=1 -frames:v 1 "$work/ff.png"
run_case "sound_effect 10 s MP3" sound_effect \
  '{"model":"voice_text_to_sound_v2","promptText":"rain on a tin roof","duration":10}' \
  -f lavfi -i anoisesrc=d=10:c=pink:r=44100 -ac 2 -c:a libmp3lame "$work/ff.mp3"
