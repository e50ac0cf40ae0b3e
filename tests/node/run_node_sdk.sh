#!/usr/bin/env bash
# Runs the official Node client's tests (ctest: node_sdk, tests/node/CMakeLists.txt): its uploads,
# documents and avatars against genhost.
# Usage: run_node_sdk.sh HTTP_TEST_BINARY SOURCE_DIR WORK_DIR
# Installs tests/node's packages into WORK_DIR (npm ci) when they are missing or the lock file
# changed (the same folder and rule as lint_openapi.sh; ctest never runs the two at once), then
# runs the NodeSdk.* tests of the HTTP suite, which start genhost against a throwaway database
# (GENHOST_TEST_DATABASE_URL) and run uploads_sdk.mjs with node. Without node, npm or the npm
# registry the test fails: it never passes unchecked.
set -euo pipefail
tests=$1 src=$2 work=$3

fail() {
  echo "node_sdk FAILED: $*" >&2
  exit 1
}

command -v node >/dev/null && command -v npm >/dev/null \
  || fail "node and npm are needed (scripts/test installs Debian's nodejs and npm when node is missing)"
[ -n "${GENHOST_TEST_DATABASE_URL:-}" ] \
  || fail "GENHOST_TEST_DATABASE_URL is not set (scripts/test starts a PostgreSQL cluster and sets it)"

mkdir -p "$work"
for f in package.json package-lock.json .npmrc uploads_sdk.mjs documents_sdk.mjs voices_sdk.mjs routers_sdk.mjs \
    realtime_sdk.mjs livekit_token.mjs organization_sdk.mjs workflows_sdk.mjs sdk_common.mjs; do
  cmp -s "$src/$f" "$work/$f" || cp "$src/$f" "$work/$f"
done
if [ ! -d "$work/node_modules/@runwayml/sdk" ] \
    || ! cmp -s "$work/package-lock.json" "$work/node_modules/.genhost-installed-lock"; then
  echo "installing tests/node's packages (npm ci) in $work"
  (cd "$work" && npm ci --no-audit --no-fund --loglevel=error) \
    || fail "npm ci could not install tests/node's packages (@runwayml/sdk): is the npm registry reachable?"
  cp "$work/package-lock.json" "$work/node_modules/.genhost-installed-lock"
fi

log="$work/node_sdk.log"
status=0
GENHOST_NODE_TEST_DIR="$work" "$tests" --gtest_filter='NodeSdk.*' 2>&1 | tee "$log" || status=$?
[ "$status" -eq 0 ] || fail "the NodeSdk tests failed (above)"
grep -q '^\[  SKIPPED \]' "$log" && fail "the NodeSdk tests were skipped (above)"
grep -q '^\[  PASSED  \] [1-9]' "$log" || fail "no NodeSdk test ran"
echo "node_sdk: the official Node client's uploads, documents, voices, avatars and routers work against genhost"
