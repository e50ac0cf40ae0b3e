#!/usr/bin/env bash
# bench/documents/run.sh: knowledge documents (issue 21's goals; docs/performance.md records a run).
#   list:   GET /v1/documents pages with DOCS (10000) documents in the organization (goal: p99
#           under 10 ms)
#   search: GET /_genhost/documents/search over SEARCH_DOCS (1000) documents of SEARCH_CHARS
#           (200000) characters each (goal: under 5 ms), across the whole organization and an
#           avatar's 50 documents, for six kinds of query
# Starts the release genhost (or BIN) against a private PostgreSQL (fsync off), once per part.
#   PARTS ("list search")
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../scripts/lib/common.sh"
cd "$GENHOST_ROOT"
PARTS=${PARTS:-list search}
DOCS=${DOCS:-10000}
SEARCH_DOCS=${SEARCH_DOCS:-1000}
SEARCH_CHARS=${SEARCH_CHARS:-200000}
install_packages python3
bench_release_binary

for part in $PARTS; do
  (
    bench_workspace "genhost-documents-bench"
    bench_start_genhost 18291
    echo "== $part"
    if [ "$part" = list ]; then
      python3 "$here/drive.py" list "http://127.0.0.1:18291" "$key" "$DOCS"
    else
      python3 "$here/drive.py" search "http://127.0.0.1:18291" "$key" "$SEARCH_DOCS" "$SEARCH_CHARS"
      echo "chunks: $(bench_psql -c 'SELECT count(*) FROM document_chunks'),"\
        "words: $(bench_psql -c 'SELECT count(*) FROM document_words'),"\
        "index size: $(bench_psql -c "SELECT pg_size_pretty(pg_total_relation_size('document_chunks'))")"
    fi
  )
done
