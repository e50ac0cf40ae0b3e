#!/usr/bin/env bash
# Lints genhost's OpenAPI document with Redocly CLI (ctest: openapi_lint, tests/node/CMakeLists.txt).
# Usage: lint_openapi.sh DUMP_OPENAPI_BINARY SOURCE_DIR WORK_DIR
# Installs tests/node's packages into WORK_DIR (npm ci) when they are missing or the lock file
# changed. Without node, npm or the npm registry the test fails: it never passes unchecked.
set -euo pipefail
dump=$1 src=$2 work=$3

fail() {
  echo "openapi_lint FAILED: $*" >&2
  exit 1
}

command -v node >/dev/null && command -v npm >/dev/null \
  || fail "node and npm are needed (scripts/test installs Debian's nodejs and npm when node is missing)"

mkdir -p "$work"
for f in package.json package-lock.json .npmrc redocly.yaml; do
  cmp -s "$src/$f" "$work/$f" || cp "$src/$f" "$work/$f"
done
if [ ! -x "$work/node_modules/.bin/redocly" ] \
    || ! cmp -s "$work/package-lock.json" "$work/node_modules/.genhost-installed-lock"; then
  echo "installing tests/node's packages (npm ci) in $work"
  (cd "$work" && npm ci --no-audit --no-fund --loglevel=error) \
    || fail "npm ci could not install tests/node's packages (@redocly/cli): is the npm registry reachable?"
  cp "$work/package-lock.json" "$work/node_modules/.genhost-installed-lock"
fi

"$dump" >"$work/openapi.json" || fail "dump_openapi could not build the document"
echo "linting $work/openapi.json ($(wc -c <"$work/openapi.json") bytes)"

export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true NO_COLOR=1
cd "$work"
npm run --silent lint -- openapi.json \
  || fail "redocly lint reported errors in the OpenAPI document (listed above)"
