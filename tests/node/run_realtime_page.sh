#!/usr/bin/env bash
# Runs the realtime web page's end-to-end test (ctest: realtime_page, tests/node/CMakeLists.txt):
# web/realtime.html in headless Chromium against a real genhost, with a fake microphone and camera.
# Usage: run_realtime_page.sh HTTP_TEST_BINARY SOURCE_DIR WORK_DIR
# Installs tests/node's packages into WORK_DIR (npm ci) when they are missing or the lock file
# changed (the same folder and rule as run_node_sdk.sh; ctest never runs the two at once), then
# runs the RealtimePage.* tests of the HTTP suite, which start genhost against a throwaway
# database (GENHOST_TEST_DATABASE_URL) and run realtime_page.mjs with node. Without node, npm,
# the npm registry or Debian's chromium (scripts/lib/common.sh, GENHOST_TEST_PACKAGES) the test
# fails: it never passes unchecked.
set -euo pipefail
tests=$1 src=$2 work=$3
chromium=${GENHOST_CHROMIUM:-/usr/bin/chromium}

fail() {
  echo "realtime_page FAILED: $*" >&2
  exit 1
}

command -v node >/dev/null && command -v npm >/dev/null \
  || fail "node and npm are needed (scripts/test installs Debian's nodejs and npm when node is missing)"
[ -x "$chromium" ] \
  || fail "$chromium is missing: install Debian's chromium package (scripts/test installs it)"
"$chromium" --version >/dev/null 2>&1 || fail "$chromium does not run ($chromium --version failed)"
[ -n "${GENHOST_TEST_DATABASE_URL:-}" ] \
  || fail "GENHOST_TEST_DATABASE_URL is not set (scripts/test starts a PostgreSQL cluster and sets it)"

mkdir -p "$work"
for f in package.json package-lock.json .npmrc realtime_page.mjs; do
  cmp -s "$src/$f" "$work/$f" || cp "$src/$f" "$work/$f"
done
if [ ! -d "$work/node_modules/playwright-core" ] \
    || ! cmp -s "$work/package-lock.json" "$work/node_modules/.genhost-installed-lock"; then
  echo "installing tests/node's packages (npm ci) in $work"
  (cd "$work" && npm ci --no-audit --no-fund --loglevel=error) \
    || fail "npm ci could not install tests/node's packages (playwright-core): is the npm registry reachable?"
  cp "$work/package-lock.json" "$work/node_modules/.genhost-installed-lock"
fi

log="$work/realtime_page.log"
status=0
GENHOST_NODE_TEST_DIR="$work" GENHOST_CHROMIUM="$chromium" \
  "$tests" --gtest_filter='RealtimePage.*' 2>&1 | tee "$log" || status=$?
[ "$status" -eq 0 ] || fail "the RealtimePage tests failed (above)"
grep -q '^\[  SKIPPED \]' "$log" && fail "the RealtimePage tests were skipped (above)"
grep -q '^\[  PASSED  \] [1-9]' "$log" || fail "no RealtimePage test ran"
echo "realtime_page: the realtime web page joins a session, hears the avatar's answer, sees its video and its client event, and hangs up"
