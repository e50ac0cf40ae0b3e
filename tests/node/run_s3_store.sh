#!/usr/bin/env bash
# Runs the S3 output store's tests against a real S3-compatible server (ctest: node_s3_store,
# tests/node/CMakeLists.txt).
# Usage: run_s3_store.sh S3_TEST_BINARY SOURCE_DIR WORK_DIR
# Installs tests/node's packages into WORK_DIR (npm ci) when they are missing or the lock file
# changed (the same folder and rule as lint_openapi.sh and run_node_sdk.sh; ctest never runs
# them at once), starts s3rver (pinned in package.json) on 127.0.0.1 on a free port with a
# temporary folder and a bucket, and runs the S3OutputStoreTest.* tests of S3_TEST_BINARY
# (tests/unit/outputs_s3_test.cpp) twice: over http and over https with a throwaway test CA.
#
# s3rver checks the access key id but not SigV4 signatures, so the tests reach it through a small
# verifying proxy (below, also on 127.0.0.1): an independent SigV4 check in Node (canonical
# request, signing key, signature, payload hash, date skew) that answers 403
# SignatureDoesNotMatch like S3 and forwards good requests to s3rver. s3rver's ListObjectsV2
# continuation tokens use DES, which Node 17+ only offers with --openssl-legacy-provider.
# Without node, npm, openssl or the npm registry the test fails: it never passes unchecked.
set -euo pipefail
tests=$1 src=$2 work=$3

fail() {
  echo "node_s3_store FAILED: $*" >&2
  exit 1
}

command -v node >/dev/null && command -v npm >/dev/null \
  || fail "node and npm are needed (scripts/test installs Debian's nodejs and npm when node is missing)"
command -v openssl >/dev/null || fail "openssl (the command) is needed for the test CA"

mkdir -p "$work"
for f in package.json package-lock.json .npmrc; do
  cmp -s "$src/$f" "$work/$f" || cp "$src/$f" "$work/$f"
done
if [ ! -x "$work/node_modules/.bin/s3rver" ] \
    || ! cmp -s "$work/package-lock.json" "$work/node_modules/.genhost-installed-lock"; then
  echo "installing tests/node's packages (npm ci) in $work"
  (cd "$work" && npm ci --no-audit --no-fund --loglevel=error) \
    || fail "npm ci could not install tests/node's packages (s3rver): is the npm registry reachable?"
  cp "$work/package-lock.json" "$work/node_modules/.genhost-installed-lock"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/genhost-s3-test.XXXXXX")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT

# wait_for FILE REGEX: waits up to 30 s for a line matching REGEX in FILE and prints it.
wait_for() {
  local line
  for _ in $(seq 300); do
    line=$(grep -aEo "$2" "$1" 2>/dev/null | head -n1 || true)
    if [ -n "$line" ]; then
      echo "$line"
      return 0
    fi
    for pid in "${pids[@]}"; do
      kill -0 "$pid" 2>/dev/null || { cat "$1" >&2; return 1; }
    done
    sleep 0.1
  done
  cat "$1" >&2
  return 1
}

bucket=genhost-test
mkdir -p "$tmp/data"
NODE_OPTIONS=--openssl-legacy-provider "$work/node_modules/.bin/s3rver" -d "$tmp/data" \
  -a 127.0.0.1 -p 0 --configure-bucket "$bucket" >"$tmp/s3rver.log" 2>&1 &
pids+=($!)
s3port=$(wait_for "$tmp/s3rver.log" 'listening on 127\.0\.0\.1:[0-9]+' | sed 's/.*://') \
  || fail "s3rver did not start (its log is above)"
echo "s3rver listens on 127.0.0.1:$s3port (bucket $bucket)"

# A throwaway CA and a certificate for IP 127.0.0.1, for the https run.
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$tmp/ca.key" -out "$tmp/ca.pem" -days 2 \
  -subj /CN=genhost-s3-test-ca -addext basicConstraints=critical,CA:TRUE \
  -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null \
  || fail "openssl could not make the test CA"
openssl req -newkey rsa:2048 -nodes -keyout "$tmp/server.key" -out "$tmp/server.csr" \
  -subj /CN=127.0.0.1 2>/dev/null || fail "openssl could not make the server key"
printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' \
  >"$tmp/server.ext"
openssl x509 -req -in "$tmp/server.csr" -CA "$tmp/ca.pem" -CAkey "$tmp/ca.key" -CAcreateserial \
  -out "$tmp/server.pem" -days 2 -extfile "$tmp/server.ext" 2>/dev/null \
  || fail "openssl could not sign the server certificate"

# The verifying proxy: http and https on 127.0.0.1, free ports, forwarding to s3rver.
cat >"$tmp/proxy.js" <<'EOF'
'use strict';
const http = require('http');
const https = require('https');
const crypto = require('crypto');
const fs = require('fs');
const [upstream, keyFile, certFile] = process.argv.slice(2);
const secrets = { S3RVER: 'S3RVER' };
const enc = (s) =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
const sha = (d) => crypto.createHash('sha256').update(d).digest('hex');
const hmac = (k, d) => crypto.createHmac('sha256', k).update(d).digest();
const cmp = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

// verify returns null when the request is correctly signed, else [code, message].
function verify(req, body) {
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(
    req.headers.authorization || '');
  if (!m) return ['AccessDenied', 'missing or malformed AWS4-HMAC-SHA256 Authorization'];
  const [, keyId, day, region, signed, signature] = m;
  if (!(keyId in secrets)) return ['InvalidAccessKeyId', 'unknown access key id'];
  const date = req.headers['x-amz-date'] || '';
  const t = Date.parse(date.replace(/^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/, '$1-$2-$3T$4:$5:$6Z'));
  if (!date.startsWith(day) || !(Math.abs(Date.now() - t) < 15 * 60 * 1000)) {
    return ['RequestTimeTooSkewed', 'x-amz-date is missing, malformed or off by 15 minutes'];
  }
  const names = signed.split(';');
  for (const h of ['host', 'x-amz-content-sha256', 'x-amz-date']) {
    if (!names.includes(h)) return ['AccessDenied', h + ' is not signed'];
  }
  const payload = req.headers['x-amz-content-sha256'];
  if (payload !== 'UNSIGNED-PAYLOAD' && payload !== sha(body)) {
    return ['XAmzContentSHA256Mismatch', 'the body does not match x-amz-content-sha256'];
  }
  const q = req.url.indexOf('?');
  const path = q < 0 ? req.url : req.url.slice(0, q);
  const strict = path.split('/').map((s) => enc(decodeURIComponent(s))).join('/');
  if (strict !== path) return ['AccessDenied', 'path not URI-encoded the SigV4 way: ' + path];
  const query = q < 0 ? '' : req.url.slice(q + 1).split('&').filter((p) => p).map((p) => {
    const i = p.indexOf('=');
    const [k, v] = i < 0 ? [p, ''] : [p.slice(0, i), p.slice(i + 1)];
    return [enc(decodeURIComponent(k)), enc(decodeURIComponent(v))];
  }).sort((a, b) => cmp(a[0], b[0]) || cmp(a[1], b[1])).map(([k, v]) => k + '=' + v).join('&');
  const headers = names.map((n) => n + ':' + String(req.headers[n] ?? '').trim().replace(/\s+/g, ' ') + '\n');
  const canonical = [req.method, path, query, headers.join(''), signed, payload].join('\n');
  const scope = `${day}/${region}/s3/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', date, scope, sha(canonical)].join('\n');
  let key = hmac('AWS4' + secrets[keyId], day);
  for (const part of [region, 's3', 'aws4_request']) key = hmac(key, part);
  if (hmac(key, toSign).toString('hex') !== signature) {
    return ['SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided.'];
  }
  return null;
}

function handle(req, res) {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const denied = verify(req, body);
    if (denied) {
      console.log(`denied ${req.method} ${req.url}: ${denied[0]}`);
      res.writeHead(403, { 'content-type': 'application/xml' });
      res.end(`<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${denied[0]}</Code><Message>${denied[1]}</Message></Error>`);
      return;
    }
    const up = http.request(
      { host: '127.0.0.1', port: Number(upstream), method: req.method, path: req.url, headers: req.headers },
      (r) => {
        console.log(`ok ${req.method} ${req.url} ${r.statusCode}`);
        res.writeHead(r.statusCode, r.headers);
        r.pipe(res);
      });
    up.on('error', (e) => {
      console.log(`upstream error ${e.message}`);
      res.writeHead(502);
      res.end();
    });
    up.end(body);
  });
}

const plain = http.createServer(handle);
const tls = https.createServer({ key: fs.readFileSync(keyFile), cert: fs.readFileSync(certFile) }, handle);
plain.listen(0, '127.0.0.1', () => {
  tls.listen(0, '127.0.0.1', () => {
    console.log(`proxy http=${plain.address().port} https=${tls.address().port}`);
  });
});
EOF
node "$tmp/proxy.js" "$s3port" "$tmp/server.key" "$tmp/server.pem" >"$tmp/proxy.log" 2>&1 &
pids+=($!)
ports=$(wait_for "$tmp/proxy.log" 'proxy http=[0-9]+ https=[0-9]+') \
  || fail "the verifying proxy did not start (its log is above)"
http_port=$(echo "$ports" | sed -E 's/.*http=([0-9]+).*/\1/')
https_port=$(echo "$ports" | sed -E 's/.*https=([0-9]+).*/\1/')

export GENHOST_TEST_S3_BUCKET=$bucket GENHOST_TEST_S3_REGION=us-east-1
export GENHOST_TEST_S3_ACCESS_KEY_ID=S3RVER GENHOST_TEST_S3_SECRET_ACCESS_KEY=S3RVER
for url in "http://127.0.0.1:$http_port" "https://127.0.0.1:$https_port"; do
  log="$tmp/gtest.log"
  status=0
  ca=""
  [ "${url%%:*}" = https ] && ca="$tmp/ca.pem"
  echo "== S3OutputStoreTest.* against $url"
  GENHOST_TEST_S3_URL=$url GENHOST_TEST_S3_CA_FILE=$ca "$tests" --gtest_filter='S3OutputStoreTest.*' \
    2>&1 | tee "$log" || status=$?
  [ "$status" -eq 0 ] || fail "the S3OutputStoreTest tests failed against $url (above)"
  grep -q '^\[  SKIPPED \]' "$log" && fail "the S3OutputStoreTest tests were skipped (above)"
  grep -q '^\[  PASSED  \] [1-9]' "$log" || fail "no S3OutputStoreTest test ran"
done

ok=$(grep -c '^ok ' "$tmp/proxy.log" || true)
denied=$(grep -c '^denied ' "$tmp/proxy.log" || true)
echo "verifying proxy: $ok signed request(s) forwarded, $denied refused (the wrong-secret tests)"
[ "$ok" -gt 0 ] || fail "no request went through the verifying proxy"
if grep '^denied ' "$tmp/proxy.log" | grep -v 'SignatureDoesNotMatch$' >&2; then
  fail "the proxy refused requests for something other than the deliberately wrong secret (above)"
fi
echo "node_s3_store: S3OutputStore works against s3rver over http and https with valid SigV4"
