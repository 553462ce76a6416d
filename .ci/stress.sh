#!/usr/bin/env bash
# The suite under load: `stress-ng --cpu 2` keeps both cores busy while the suite runs RUNS times in a row (3 by
# default); each run's closing line ("N passed, N failed") and wall time are printed, and the script fails unless
# every run is green. Usage: bash .ci/stress.sh [runs] [extra vitest arguments, e.g. --project unit]
set -uo pipefail
cd "$(dirname "$0")/.."
export WRANGLER_SEND_METRICS=false CI=true PATH="$PWD/node_modules/.bin:$PATH"
runs=${1:-3}
shift || true

command -v stress-ng >/dev/null || { echo "stress-ng is not installed (bash .ci/install-system.sh)"; exit 1; }
setsid stress-ng --cpu 2 --quiet &
stress=$!
trap 'kill -- -"$stress" 2>/dev/null; wait "$stress" 2>/dev/null' EXIT

failed=0
mkdir -p .tmp
# Servers the runs start in process groups are recorded here and swept after each run (bench/process-group.ts).
groups=$(mktemp -d "$PWD/.tmp/process-groups-XXXXXX")
export EDGEFLOOR_PROCESS_GROUPS=$groups
for run in $(seq 1 "$runs"); do
  started=$(date +%s)
  rm -f .tmp/test-results.json
  vitest run --reporter=default --reporter=json --outputFile.json=.tmp/test-results.json "$@" >".tmp/stress-run-$run.log" 2>&1
  status=$?
  seconds=$(($(date +%s) - started))
  node bench/process-group.ts "$groups"
  mkdir -p "$groups"
  echo "run $run under stress-ng --cpu 2: $(node .ci/summarize.ts .tmp/test-results.json "$status") in $((seconds / 60)) m $((seconds % 60)) s (log: .tmp/stress-run-$run.log)"
  [ "$status" -eq 0 ] || failed=1
done
exit $failed
