#!/usr/bin/env bash
# bench/edge/memory.sh: the server's peak resident memory (VmHWM) while 40 connections send it
# 20 MB bodies at once, in four ways (docs/performance.md, "Request bodies and memory"):
#   keyless-stalled  40 connections without a key announce a 20 MB body, send 19 MB of it and
#                    stall
#   keyed-stalled    the same with a valid key
#   keyed-default    40 authenticated video_to_video requests with a 19 MB data URI body each, at
#                    once, under the default caps
#   keyed-uncapped   the same with GENHOST_MAX_BODY_MEMORY=1 GiB, so every body is taken
# Each way runs against a fresh `genhost serve` (release build, GENHOST_ROLE=api: the tasks are
# stored, not run) on a private PostgreSQL; VmHWM is that process's peak. The answers' statuses
# are counted.
#   CONNS (40), HOLD (5): seconds the stalled connections stay, BIN (built when unset)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../scripts/lib/common.sh"
cd "$GENHOST_ROOT"
install_packages curl ffmpeg python3
CONNS=${CONNS:-40}
HOLD=${HOLD:-5}
bench_release_binary
bench_workspace genhost-edge-memory
bench_open_tier
port=18284

bench_video_body
echo "body: $(stat -c %s "$work/body.json") bytes; $CONNS connections at once"

mb() { awk -v f="$1:" '$1 == f {printf "%.1f MB", $2 / 1024}' "/proc/$server_pid/status"; }

# clients MODE: CONNS connections at once; prints the count of each status (0: no answer).
clients() {
  python3 - "$1" "$port" "$key" "$work/body.json" "$CONNS" "$HOLD" <<'PY'
import collections, socket, sys, threading, time
mode, port, key, body_file, conns, hold = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5]), float(sys.argv[6])
body = open(body_file, "rb").read()
statuses = collections.Counter()
lock = threading.Lock()
def one():
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(120)
    auth = b"" if mode == "keyless-stalled" else b"Authorization: Bearer " + key.encode() + b"\r\n"
    length = 20000000 if mode.endswith("stalled") else len(body)
    head = (b"POST /v1/video_to_video HTTP/1.1\r\nHost: bench\r\nX-Service-Version: 2024-11-06\r\n"
            b"Content-Type: application/json\r\n" + auth +
            b"Content-Length: " + str(length).encode() + b"\r\n\r\n")
    status = 0
    try:
        s.sendall(head)
        if mode.endswith("stalled"):
            try:
                s.sendall(body[:19000000])
            except OSError:
                pass  # answered and closed before all of it was sent
            s.settimeout(hold)
            try:
                reply = s.recv(64)  # answered at once, or nothing until the stall ends
            except socket.timeout:
                reply = b""
        else:
            s.sendall(body)
            reply = s.recv(64)
        if reply.startswith(b"HTTP/1.1 "):
            status = int(reply[9:12])
    except OSError:
        pass
    with lock:
        statuses[status] += 1
    s.close()
threads = [threading.Thread(target=one) for _ in range(conns)]
for t in threads: t.start()
for t in threads: t.join()
print(" ".join(f"{k}:{v}" for k, v in sorted(statuses.items())))
PY
}

for mode in keyless-stalled keyed-stalled keyed-default keyed-uncapped; do
  extra=()
  [ "$mode" = keyed-uncapped ] && extra=(GENHOST_MAX_BODY_MEMORY=1073741824)
  rm -rf "$work/data"
  bench_start_genhost $port GENHOST_ROLE=api GENHOST_TIERS_FILE="$work/tiers.json" \
    GENHOST_DEFAULT_TIER=1 "${extra[@]}"
  before=$(mb VmRSS)
  statuses=$(clients "$mode")
  sleep 1  # what the server frees once the last answer is out
  echo "$mode: statuses $statuses; VmRSS before $before, 1 s after $(mb VmRSS)," \
    "peak (VmHWM) $(mb VmHWM)"
  stop_pid "$server_pid"
  server_pid=""
done
