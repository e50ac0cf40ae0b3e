#!/usr/bin/env bash
# bench/realtime/run.sh: realtime sessions (issue 23; docs/performance.md, "Realtime sessions").
# The release server on a private PostgreSQL, the builtin engine; bench/realtime/drive.cpp joins
# N sessions at once, each asking TURNS spoken questions (streamed at real-time pace) and
# waiting for the avatar's reply to be played before the next.
# 1. Reply latency: end of the user's speech to the first audio of the avatar's reply, p50 and
#    p95 (goal: p50 under 800 ms), spoken and typed, with 1 session.
# 2. Sessions at once: SESSIONS_LIST (1 5 10) sessions with real-time audio and video: reply
#    latency, audio stalls, frames per second, and genhost's CPU per session (utime + stime of
#    the process over the pass, from /proc). Goal: 10 at once.
#    Users speak in lockstep (the worst case: every session's utterance is recognised at once),
#    then out of step (each turn after a random pause of up to JITTER seconds).
#   TURNS (6)  SESSIONS_LIST ("1 5 10")  JITTER (3)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../scripts/lib/common.sh"
cd "$GENHOST_ROOT"
TURNS=${TURNS:-6}
SESSIONS_LIST=${SESSIONS_LIST:-"1 5 10"}
JITTER=${JITTER:-3}
bench_build_release genhost_realtime_drive

bench_workspace genhost-realtime-bench
bench_open_tier
bench_start_genhost 18394 GENHOST_DEFAULT_TIER=1 GENHOST_TIERS_FILE="$work/tiers.json" \
  GENHOST_REALTIME_SESSIONS=20
drive=build/release/bench/genhost_realtime_drive
ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$server_pid/stat"; }

echo "== reply latency, 1 session (spoken, then typed)"
"$drive" --port 18394 --key "$key" --sessions 1 --turns "$TURNS" --mode spoken
"$drive" --port 18394 --key "$key" --sessions 1 --turns "$TURNS" --mode typed

pass() {  # N JITTER
  local n=$1 jitter=$2 before after start end out
  echo "== $n sessions at once (spoken, jitter $jitter s)"
  before=$(cpu)
  start=$(date +%s.%N)
  out=$("$drive" --port 18394 --key "$key" --sessions "$n" --turns "$TURNS" --mode spoken \
    --jitter "$jitter" || true)
  end=$(date +%s.%N)
  after=$(cpu)
  echo "$out"
  awk -v b="$before" -v a="$after" -v s="$start" -v e="$end" -v n="$n" -v t="$ticks" 'BEGIN {
    cpu = (a - b) / t; wall = e - s;
    printf "genhost CPU: %.1f s over %.1f s wall = %.2f cores; %.3f cores per session\n",
      cpu, wall, cpu / wall, cpu / wall / n }'
}
for n in $SESSIONS_LIST; do
  pass "$n" 0
  [ "$n" -gt 1 ] && pass "$n" "$JITTER"
done
