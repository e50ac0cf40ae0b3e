# Shared by scripts/run and scripts/test: package installation and private PostgreSQL clusters.
# Source it; do not run it.

GENHOST_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}

# Debian packages genhost needs to build and run (TOOLCHAIN.md: Boost 1.81 from its five -dev
# packages, never libboost1.81-all-dev or unversioned libboost-*-dev). scripts/run installs these
# and nothing more.
GENHOST_PACKAGES=(
  g++ cmake ninja-build ccache pkg-config git
  libboost1.81-dev libboost-system1.81-dev libboost-json1.81-dev libboost-url1.81-dev
  libboost-program-options1.81-dev
  nlohmann-json3-dev libpqxx-dev libpq-dev libspdlog-dev libfmt-dev libssl-dev
  libavcodec-dev libavformat-dev libavfilter-dev libswscale-dev libswresample-dev libavutil-dev
  libespeak-ng-dev libpocketsphinx-dev pocketsphinx-en-us zlib1g-dev
  postgresql-15 postgresql-client-15 ca-certificates
)
# Packages only the tests need (scripts/test installs them besides): GoogleTest and Google
# Benchmark, clang for the libFuzzer target and LeakSanitizer's runtime, LLVM's linker (lld: the
# test tree's links are seven times faster), and Debian's chromium,
# the headless browser of the realtime web page's end-to-end test (ctest realtime_page,
# tests/node/run_realtime_page.sh, driven by playwright-core from tests/node/package-lock.json).
GENHOST_TEST_PACKAGES=(libgtest-dev libgmock-dev libbenchmark-dev clang-14 libclang-rt-14-dev lld chromium)
# Node.js and npm run the OpenAPI lint and the official clients' tests (tests/node): Debian's
# nodejs and npm, only when node or npm is missing (a node from elsewhere ships its own npm, which
# Debian's npm package would conflict with).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  GENHOST_TEST_PACKAGES+=(nodejs npm)
fi

log() { printf '\033[1m[genhost]\033[0m %s\n' "$*" >&2; }

# install_packages PKG...: installs the missing ones (apt-get, as root or through sudo).
install_packages() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# as_pg_user CMD...: runs CMD as an unprivileged user (postgres refuses to run as root).
as_pg_user() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

# pg_cluster_reachable DIR: whether the cluster user can reach DIR (every parent traversable).
pg_cluster_reachable() {
  as_pg_user test -x "$1" 2>/dev/null && as_pg_user test -w "$1" 2>/dev/null
}

# pg_start DIR: initialises (once) and starts a cluster in DIR, listening only on a unix socket
# in DIR/run. Prints nothing; DATABASE_URL for it is "host=DIR/run dbname=genhost user=postgres".
pg_start() {
  local dir=$1 fsync=${2:-on}
  mkdir -p "$dir"
  [ "$(id -u)" -eq 0 ] && chown postgres: "$dir"
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    as_pg_user mkdir -p "$dir/data" "$dir/run"
    as_pg_user "$PG_BIN/initdb" -D "$dir/data" -U postgres -A trust --no-sync -E UTF8 >"$dir/initdb.log" 2>&1 \
      || { cat "$dir/initdb.log" >&2; return 1; }
  fi
  as_pg_user mkdir -p "$dir/run"
  if ! as_pg_user "$PG_BIN/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
    as_pg_user "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 60 \
      -o "-c listen_addresses='' -k $dir/run -c fsync=$fsync -c max_connections=200" start >/dev/null \
      || { tail -20 "$dir/postgres.log" >&2; return 1; }
  fi
  as_pg_user "$PG_BIN/psql" -h "$dir/run" -U postgres -d postgres -Atqc \
    "SELECT 1 FROM pg_database WHERE datname = 'genhost'" | grep -q 1 \
    || as_pg_user "$PG_BIN/psql" -h "$dir/run" -U postgres -d postgres -qc "CREATE DATABASE genhost" >/dev/null
}

# pg_stop DIR [MODE]: stops the cluster in DIR.
pg_stop() {
  as_pg_user "$PG_BIN/pg_ctl" -D "$1/data" -m "${2:-fast}" -w stop >/dev/null 2>&1 || true
}

# stop_pid PID: stops a child process of this shell and waits for it; nothing when PID is empty.
stop_pid() {
  [ -n "$1" ] && kill "$1" 2>/dev/null && wait "$1" 2>/dev/null || true
}

# bench_workspace NAME: for the bench scripts. Installs curl (bench_start_genhost uses it), makes
# $work (a temporary directory the postgres user can read), starts a private PostgreSQL in $work/pg
# with fsync off, and on exit runs bench_before_cleanup (when the script defines it), stops the
# server whose pid is in $server_pid, stops the cluster and removes $work.
bench_workspace() {
  install_packages curl  # bench_start_genhost waits for the server with it
  export GENHOST_SHUTDOWN_DELAY=0  # the servers a bench stops go at once
  work=$(mktemp -d "/tmp/$1.XXXXXX")
  chmod 755 "$work"
  server_pid=""
  trap bench_cleanup EXIT
  pg_start "$work/pg" off
}

bench_cleanup() {
  if declare -F bench_before_cleanup >/dev/null; then bench_before_cleanup; fi
  stop_pid "$server_pid"
  pg_stop "$work/pg" immediate
  rm -rf "$work"
}

# cpu_ticks PID...: the CPU time (user + system, in clock ticks) the given processes have used;
# processes that are gone count nothing.
cpu_ticks() {
  local t=0 p
  for p in "$@"; do [ -r "/proc/$p/stat" ] && t=$((t + $(awk '{print $14+$15}' "/proc/$p/stat"))); done
  echo "$t"
}

# bench_release_binary: unless BIN is set, builds the release preset's genhost and sets BIN to it.
bench_release_binary() {
  if [ -z "${BIN:-}" ]; then bench_build_release; fi
}

# bench_build_release TARGET...: builds the release preset's genhost and the given targets and
# sets BIN to genhost.
bench_build_release() {
  install_packages libbenchmark-dev  # the Google Benchmark programs of bench/
  cmake --preset release >/dev/null
  cmake --build --preset release --target genhost "$@" >/dev/null
  BIN=build/release/genhost
}

# bench_psql ARGS...: psql on the workspace's PostgreSQL (bench_workspace), unaligned and quiet.
bench_psql() { as_pg_user "$PG_BIN/psql" -h "$work/pg/run" -U postgres -d postgres -Atq "$@"; }

# bench_pgbench_tps SCRIPT: one pgbench pass of bench/load/SCRIPT.sql on the workspace's
# PostgreSQL ($CONNS clients on 2 threads for $DURATION seconds, prepared statements); prints its
# transactions per second.
bench_pgbench_tps() {
  as_pg_user "$PG_BIN/pgbench" -h "$work/pg/run" -U postgres -n -M prepared -c "$CONNS" -j 2 \
    -T "$DURATION" -f "$GENHOST_ROOT/bench/load/$1.sql" postgres 2>/dev/null \
    | grep -oE "^tps = [0-9.]+" | grep -oE "[0-9.]+$"
}

# bench_open_tier: writes $work/tiers.json, a tier 1 of 20 concurrent generations and no practical
# daily limit nor spend cap, for benchmarks that create tasks by the hundred thousand.
bench_open_tier() {
  cat > "$work/tiers.json" <<JSON
{"tiers": [{"tier": 1, "max_concurrent_generations": 20, "max_daily_generations": 100000000,
            "max_monthly_spend_usd": 100000000}]}
JSON
}

# bench_start_genhost PORT [NAME=VALUE...]: starts `$BIN serve` on 127.0.0.1:PORT against the
# workspace's PostgreSQL (bench_workspace) with a new API key in $key, log level warn, its data in
# $work/data, organizations opening with a trillion credits, and the given extra environment;
# sets $server_pid and waits until it answers.
bench_start_genhost() {
  local port=$1
  shift
  key="key_$(head -c 64 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  env DATABASE_URL="host=$work/pg/run dbname=postgres user=postgres" GENHOST_API_KEY="$key" \
    GENHOST_LISTEN="127.0.0.1:$port" GENHOST_DATA_DIR="$work/data" GENHOST_LOG_LEVEL=warn \
    GENHOST_DEFAULT_CREDITS=1000000000000 "$@" "$BIN" serve >"$work/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && return 0; sleep 0.1; done
  echo "genhost did not start:"; cat "$work/server.log"; return 1
}

# bench_ratio A B: 100 * A / B with one decimal. bench_median X...: the median of the numbers.
bench_ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", 100 * a / b }'; }
bench_median() { printf "%s\n" "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# bench_load_pass NAME SCENARIO PORT [KEY]: one pass of bench/load's generator (release build)
# against genhost on 127.0.0.1:PORT ($CONNS connections, $DURATION seconds, SCENARIO create or
# routed, the key KEY or $GENHOST_API_KEY); prints one line (the rate, p99, responses >= 400 and
# the CPU per request of genhost ($server_pid), PostgreSQL (the workspace's) and the generator)
# and leaves the rate in $rate. A pass with any response >= 400 prints the server's log and exits.
bench_load_pass() {
  local name=$1 scenario=$2 port=$3 key=${4:-${GENHOST_API_KEY:-}} out g0 q0 g1 q1 postmaster
  postmaster=$(head -1 "$work/pg/data/postmaster.pid")
  g0=$(cpu_ticks "$server_pid"); q0=$(cpu_ticks "$postmaster" $(pgrep -P "$postmaster"))
  out=$(GENHOST_API_KEY="$key" build/release/bench/genhost_loadgen --url "http://127.0.0.1:$port" \
    --connections "$CONNS" --duration "$DURATION" --scenario "$scenario")
  g1=$(cpu_ticks "$server_pid"); q1=$(cpu_ticks "$postmaster" $(pgrep -P "$postmaster"))
  rate=$(echo "$out" | grep -oE "Requests/sec: +[0-9.]+" | awk '{print $2}')
  if ! echo "$out" | grep -qE "status >= 400: 0$"; then
    echo "$out"; echo "== $name: requests failed; the server's log:"; tail -20 "$work/server.log"; exit 1
  fi
  echo "$out" | awk -v n="$name" -v r="$rate" -v g=$((g1 - g0)) -v q=$((q1 - q0)) -v d="$DURATION" \
    -v hz="$(getconf CLK_TCK)" '/status >= 400/ { bad = $NF } /latency p99:/ { p99 = $3 }
    /CPU per request/ { lg = $(NF - 1) }
    END { m = r * d; printf "  %-10s %9.0f/s  p99 %s ms  >= 400: %s  CPU per request: genhost %.1f us, PostgreSQL %.1f us, load generator %s us\n",
          n, r, p99, bad, g * 1e6 / hz / m, q * 1e6 / hz / m, lg }'
}

# bench_video_body [AUDIO]: writes $work/in.mp4, 9 s of 1280x720 at 24 fps coded losslessly so
# that it is large (about 14 MB; 19 MB as a data URI), with a stereo AAC track when AUDIO is
# "audio", and $work/body.json, an aleph2 video_to_video request with it as a data URI.
bench_video_body() {
  local audio=()
  [ "${1:-}" = audio ] && audio=(-f lavfi -i sine=f=440:sample_rate=48000 -c:a aac -shortest)
  ffmpeg -hide_banner -loglevel error -y -f lavfi -i testsrc2=size=1280x720:rate=24 "${audio[@]}" \
    -t 9 -c:v libx264 -preset ultrafast -qp 0 -pix_fmt yuv420p "$work/in.mp4"
  python3 - "$work" <<'PY'
import base64, json, sys
work = sys.argv[1]
uri = "data:video/mp4;base64," + base64.b64encode(open(work + "/in.mp4", "rb").read()).decode()
json.dump({"model": "aleph2", "promptText": "make it snow", "videoUri": uri},
          open(work + "/body.json", "w"))
PY
}
