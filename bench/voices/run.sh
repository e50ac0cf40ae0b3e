#!/usr/bin/env bash
# bench/voices/run.sh: custom voice processing (issue 21's goal: a clone of a 30 s sample READY in
# under 2 s; docs/performance.md records a run).
# 1. voice_clone_bench: AnalyzeVoiceSample, ProfileFromAnalysis, DesignVoiceProfile and
#    SpeakWithProfile timed alone, and the clones' accuracy (bench/voices/clone_bench.cpp).
# 2. End to end through the release server against a private PostgreSQL: a SAMPLE_SECONDS (30) s speech
#    sample is made by genhost's own text_to_speech, then POST /v1/voices clones it RUNS (5)
#    times; for each, the time from the POST's answer to READY as the client polls every 10 ms,
#    and the server's own (updated_at - created_at of the voice row); then a designed voice.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../scripts/lib/common.sh"
cd "$GENHOST_ROOT"
SAMPLE_SECONDS=${SAMPLE_SECONDS:-30}
RUNS=${RUNS:-5}
install_packages python3
bench_build_release voice_clone_bench

echo "== voice_clone_bench"
build/release/bench/voice_clone_bench

bench_workspace genhost-voices-bench
bench_start_genhost 18292 GENHOST_LATENCY_SCALE=0
echo "== end to end (release server, ${SAMPLE_SECONDS} s sample, ${RUNS} clones)"
python3 - "http://127.0.0.1:18292" "$key" "$SAMPLE_SECONDS" "$RUNS" "$work" <<'PY'
import base64, http.client, json, statistics, subprocess, sys, time
base, key, seconds, runs, work = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
host, port = base.split("//")[1].split(":")
conn = http.client.HTTPConnection(host, int(port))
H = {"Authorization": "Bearer " + key, "X-Service-Version": "2024-11-06", "Content-Type": "application/json"}
def call(method, path, body=None):
    conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=H)
    r = conn.getresponse(); text = r.read()
    if r.status >= 300: raise SystemExit(f"{method} {path}: {r.status} {text[:300]!r}")
    return json.loads(text) if text else None
# About 2.6 words a second at the preset's pace: enough sentences for the length asked.
sentence = ("Every morning the baker opens his shop before sunrise, and people line up for warm "
            "bread while the smell fills the whole street. ")
text = sentence * max(1, int(seconds / 7.5 + 0.5))
task = call("POST", "/v1/text_to_speech", {"model": "voice_multilingual_v2", "promptText": text[:1000],
            "voice": {"type": "service-preset", "presetId": "Maya"}})
while True:
    t = call("GET", "/v1/tasks/" + task["id"])
    if t["status"] in ("SUCCEEDED", "FAILED"): break
    time.sleep(0.1)
assert t["status"] == "SUCCEEDED", t
url = t["output"][0]; path = url[url.index("/", url.index("//") + 2):]
conn.request("GET", path); r = conn.getresponse(); audio = r.read()
kind = r.getheader("content-type")
open(work + "/sample", "wb").write(audio)
out = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0",
                      work + "/sample"], capture_output=True).stdout.decode().strip()
print(f"sample: {len(audio)} bytes of {kind}, {float(out):.1f} s", flush=True)
uri = f"data:{kind};base64," + base64.b64encode(audio).decode()
client_ms, ids = [], []
for i in range(runs):
    made = call("POST", "/v1/voices", {"name": f"Clone {i}", "from": {"type": "audio", "audio": uri}})
    t0 = time.perf_counter()
    while True:
        v = call("GET", "/v1/voices/" + made["id"])
        if v["status"] != "PROCESSING": break
        time.sleep(0.01)
    client_ms.append((time.perf_counter() - t0) * 1000)
    assert v["status"] == "READY", v
    ids.append(made["id"])
print("clone, POST answered to READY seen by the client: " +
      ", ".join(f"{m:.0f}" for m in client_ms) + f" ms (median {statistics.median(client_ms):.0f})", flush=True)
made = call("POST", "/v1/voices", {"name": "Designed", "from": {"type": "text", "model": "voice_ttv_v3",
            "prompt": "A deep, slow voice of an elderly British man, warm"}})
t0 = time.perf_counter()
while call("GET", "/v1/voices/" + made["id"])["status"] == "PROCESSING": time.sleep(0.01)
print(f"design, POST answered to READY seen by the client: {(time.perf_counter() - t0) * 1000:.0f} ms", flush=True)
open(work + "/ids", "w").write("\n".join(ids))
PY
echo "clone, the server's own time (created_at to READY's updated_at), ms:"
bench_psql -c "SELECT string_agg(round(extract(epoch FROM updated_at - created_at) * 1000)::text, ', ' ORDER BY created_at) FROM voices WHERE source = 'audio'"
