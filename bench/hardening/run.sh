#!/usr/bin/env bash
# bench/hardening/run.sh: issue 31's reproductions against the release server, each while
# GET /healthz is timed every 10 ms on its own connection (docs/performance.md, "Hostile input on
# the new surfaces"). The goal: /healthz under 50 ms while each runs. Prints, per reproduction,
# its answer, how long it took, and the /healthz p50, p99 and maximum meanwhile. The realtime
# floods are bench/realtime/flood.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../scripts/lib/common.sh"
cd "$GENHOST_ROOT"
bench_build_release
bench_workspace genhost-hardening
bench_start_genhost 18396
url=http://127.0.0.1:18396
H=(-H "Authorization: Bearer $key" -H "X-Service-Version: 2024-11-06" -H "Content-Type: application/json")

# watch FILE: times /healthz into FILE (one line of seconds per request) until killed.
watch() {
  while :; do curl -s -o /dev/null -w '%{time_total}\n' "$url/healthz" >>"$1"; sleep 0.01; done
}
# measure NAME COMMAND...: runs COMMAND while watch runs; prints its output's first line, its
# time and the /healthz figures.
measure() {
  local name=$1 times="$work/healthz.$RANDOM" pid start end out
  shift
  : >"$times"
  watch "$times" & pid=$!
  sleep 0.2
  start=$(date +%s.%N)
  out=$("$@" 2>&1 | head -c 300 | tr '\n' ' ')
  end=$(date +%s.%N)
  sleep 0.2
  kill "$pid"; wait "$pid" 2>/dev/null || true
  sort -g "$times" | awk -v n="$name" -v s="$start" -v e="$end" -v out="$out" '
    { v[NR] = $1 * 1000 }
    END { printf "%-28s %7.0f ms   /healthz (%d polls): p50 %.1f ms, p99 %.1f ms, max %.1f ms\n    answer: %s\n",
            n, (e - s) * 1000, NR, v[int(NR * 0.5) + 1], v[int(NR * 0.99) + 1], v[NR], out }'
}

python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
prompt, still = "0c8f6a52-4f7e-4d0b-9a51-2d3c4b5a6f70", "1d9a7b63-5a8f-4e1c-8b62-3e4d5c6b7a81"
for name, field in [("pointer", "/referenceImages/50000000/uri"), ("pointer12", "/referenceImages/1000000000000/uri")]:
    body = {"name": "Pointer", "graph": {"version": 1, "nodes": [
        {"id": prompt, "name": "Prompt", "type": "text", "value": "a lighthouse"},
        {"id": still, "name": "Still", "type": "generation", "endpoint": "text_to_image",
         "input": {"model": "gen4_image", "ratio": "1280:720", "promptText": "x"}}],
        "edges": [{"source": {"node": prompt, "output": "value"}, "target": {"node": still, "field": field}}]}}
    open(f"{work}/{name}.json", "w").write(json.dumps(body))
content = "".join("#" * level + " " + chr(ord("a") + level) * 2000 + "\n" for level in range(1, 6))
content += "###### \n" * 21111
open(f"{work}/headings.json", "w").write(json.dumps({"name": "Headings", "content": content}))
open(f"{work}/nested.json", "w").write("[" * 50000)
PY

post() { curl -s -w ' HTTP %{http_code}' "${H[@]}" "$url$1" -d @"$2"; }
# indexed: posts the heading document and waits until its job is done.
indexed() {
  local id
  id=$(curl -s "${H[@]}" "$url/v1/documents" -d @"$work/headings.json" | grep -oE '"id":"[^"]+"' | cut -d'"' -f4)
  for _ in $(seq 1 600); do
    [ "$(bench_psql -c "SELECT count(*) FROM jobs WHERE subject = '$id'")" = 0 ] && break
    sleep 0.05
  done
  bench_psql -c "SELECT count(*) || ' chunks, ' || sum(octet_length(heading) + octet_length(body)) || ' bytes indexed of a ' || (SELECT octet_length(content) FROM documents WHERE id = '$id') || '-byte document' FROM document_chunks WHERE document_id = '$id'"
}
publish_cli() {
  DATABASE_URL="host=$work/pg/run dbname=postgres user=postgres" GENHOST_LOG_LEVEL=warn \
    "$BIN" workflows publish "$work/nested.json" --org default; echo "exit $?"
}

measure "workflow edge 5e7" post /_genhost/workflows "$work/pointer.json"
measure "workflow edge 1e12" post /_genhost/workflows "$work/pointer12.json"
measure "heading amplification" indexed
measure "search q=%ff%fe" curl -s -w ' HTTP %{http_code}' "${H[@]}" "$url/_genhost/documents/search?q=%ff%fe"
measure "usage beforeDate 0001-01-01" curl -s -w ' HTTP %{http_code}' "${H[@]}" "$url/v1/organization/usage" -d '{"beforeDate":"0001-01-01"}'
measure "publish 50,000 '['" publish_cli
