#!/usr/bin/env bash
# The README's set-up on a copy of the tree without .git (a git archive of HEAD): `npm ci`, then the first and the
# second `npx cuda-pipe`, each timed, with the machine's load before each. Writes its log to stdout.
# usage: bash docs/measurements/2026-11-28-first-hour/npx.sh [REV] > log.txt   (REV: default HEAD)
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
copy=$(mktemp -d "${TMPDIR:-/tmp}/cuda-pipe-npx.XXXXXX")
trap 'rm -rf "$copy"' EXIT
git -C "$root" archive "${1:-HEAD}" | tar -x -C "$copy"
cd "$copy"
echo "commit: $(git -C "$root" rev-parse --short "${1:-HEAD}"); node $(node --version); npm $(npm --version); $(nproc) cores"
timed() {
  echo "load before: $(cut -d' ' -f1 /proc/loadavg)"
  local start end
  start=$(date +%s.%N)
  "$@" > out.log 2>&1 || { cat out.log; exit 1; }
  end=$(date +%s.%N)
  echo "$* : $(echo "$end - $start" | bc) s"
}
timed npm ci --no-audit --no-fund
timed npx cuda-pipe --version
timed npx cuda-pipe --version
echo "second npx prints: $(tail -1 out.log)"
# npx keeps a link to this folder in its cache, named by a hash of the path; it is removed with the folder's entry.
npx_entry=$(grep -l "\"$copy\"" ~/.npm/_npx/*/package.json 2>/dev/null | head -1 || true)
[ -n "$npx_entry" ] && rm -rf "$(dirname "$npx_entry")"
