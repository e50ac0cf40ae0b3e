#!/usr/bin/env bash
# bench/credits/run.sh: the credit ledger's cost on task creation (issue 24; docs/performance.md,
# "Credits"). One release server (API role: no workers) on a private PostgreSQL, two
# organizations of the same open tier: `default`, metered (every creation reserves its credits:
# the account's row lock, an entry, the usage upsert), and `unmetered`, whose account is marked
# unmetered so genhost_create_tasks books nothing for it. bench/load's generator alternates
# ROUNDS times between them (POST /v1/text_to_image, gen4_image 1280:720, 5 credits each).
# Goal: creation with the ledger at 90 % or more of creation without it.
#   CONNS (16)  DURATION (10, seconds per pass)  ROUNDS (3)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../scripts/lib/common.sh"
cd "$GENHOST_ROOT"
CONNS=${CONNS:-16}
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-3}
bench_build_release genhost_loadgen

bench_workspace genhost-credits-bench
bench_open_tier
bench_start_genhost 18394 GENHOST_DEFAULT_TIER=1 GENHOST_TIERS_FILE="$work/tiers.json" \
  GENHOST_ROLE=api GENHOST_IO_THREADS=2 GENHOST_DB_THREADS=2
metered_key=$key
unmetered_key=$(DATABASE_URL="host=$work/pg/run dbname=postgres user=postgres" \
  GENHOST_TIERS_FILE="$work/tiers.json" "$BIN" keys create --org unmetered --tier 1 \
  | awk '/^api_key:/ {print $2}')
bench_psql -c "UPDATE credit_accounts SET metered = false FROM organizations o
               WHERE o.id = credit_accounts.org_id AND o.name = 'unmetered'"

declare -a ratios
for round in $(seq "$ROUNDS"); do
  echo "== round $round: $CONNS connections, ${DURATION}s a pass"
  bench_load_pass unmetered create 18394 "$unmetered_key"; without=$rate
  bench_load_pass metered create 18394 "$metered_key"; with=$rate
  ratios+=("$(bench_ratio "$with" "$without")")
  echo "  with the ledger / without: ${ratios[-1]} %"
done
echo "== median with / without the ledger: $(bench_median "${ratios[@]}") % (goal: 90 % or more)"
echo "== ledger: $(bench_psql -c "SELECT count(*) FROM credit_entries WHERE kind = 'charge'") charges;" \
  "balance + charges - refunds - grants = $(bench_psql -c "SELECT (SELECT sum(balance) FROM credit_accounts)
    + (SELECT coalesce(sum(amount), 0) FROM credit_entries WHERE kind = 'charge')
    - (SELECT coalesce(sum(amount), 0) FROM credit_entries WHERE kind = 'refund')
    - (SELECT coalesce(sum(amount), 0) FROM credit_entries WHERE kind = 'grant')")"
echo "== tasks of the unmetered organization with a charge: $(bench_psql -c "SELECT count(*) FROM credit_entries e
    JOIN organizations o ON o.id = e.org_id WHERE o.name = 'unmetered' AND e.kind = 'charge'")"
