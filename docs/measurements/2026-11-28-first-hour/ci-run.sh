#!/usr/bin/env bash
# `.ci/run` timed whole (it installs and tests a git archive of HEAD, without .git), with the machine's load before it,
# and its test runner's summary. usage: bash docs/measurements/2026-11-28-first-hour/ci-run.sh FULL-LOG > summary.txt
set -uo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
full=${1:?usage: ci-run.sh FULL-LOG}
echo "CI=true bash .ci/run at $(git -C "$root" rev-parse --short HEAD), $(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores," \
  "load before: $(cut -d' ' -f1-3 /proc/loadavg) (other sessions share this machine)"
start=$(date +%s.%N)
CI=true bash "$root/.ci/run" > "$full" 2>&1
rc=$?
end=$(date +%s.%N)
grep -m1 '^CI: testing' "$full"
grep -E '^pretest: ' "$full"
grep -E '^# (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) ' "$full" | tail -8
echo ".ci/run: $(printf '%.1f' "$(echo "$end - $start" | bc)") s wall; load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "rc $rc"
