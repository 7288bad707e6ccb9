#!/usr/bin/env bash
# Whether `compare` says the same as before its statistics changed, on the recorded Results: every pair of Result
# files next to each other in one folder of docs/measurements/, baselines/ or test/fixtures/, compared by the build
# before (its bin/cuda-pipe given as BEFORE, a checkout of 11fc5d2 built with `npm ci`) and by this checkout's build,
# at 120 columns. Prints each pair whose output or exit code differs, then the counts.
# Usage, from the checkout: bash docs/measurements/2026-11-29-compare-start/same-verdicts.sh BEFORE/bin/cuda-pipe
set -uo pipefail
before=${1:?pass the bin/cuda-pipe of the build before}
files=$(ls docs/measurements/*/*.json baselines/*/*.json test/fixtures/*.json | while read -r f; do
  grep -q '"schema": *"cuda-pipe/result' "$f" 2>/dev/null && echo "$f"
done)
prev="" n=0 same=0 differ=0 refused=0
for f in $files; do
  if [ -n "$prev" ] && [ "$(dirname "$prev")" = "$(dirname "$f")" ]; then
    a=$(COLUMNS=120 node "$before" compare "$prev" "$f" 2>&1); ra=$?
    b=$(COLUMNS=120 node bin/cuda-pipe compare "$prev" "$f" 2>&1); rb=$?
    n=$((n + 1))
    if [ "$a" = "$b" ] && [ "$ra" = "$rb" ]; then
      same=$((same + 1))
      [ "$ra" -ge 2 ] && refused=$((refused + 1))
    else
      differ=$((differ + 1))
      echo "differs: $prev $f (exit $ra before, $rb now)"
      diff <(echo "$a") <(echo "$b") | head -6
    fi
  fi
  prev=$f
done
echo "pairs $n: the same output and exit code $same (of them refused, exit 2 or more: $refused), differing $differ"
