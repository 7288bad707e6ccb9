#!/usr/bin/env bash
# A young generation big enough that `report` never collects it: dist/cli copied to dist/cli-ss, its code cache
# recorded under the same V8 flag (V8 refuses a cache made under other flags), then both timed in turns, CPU
# (user + system) and wall of each whole process from /usr/bin/time. Usage: [SEMI_SPACE_MB=16] bash semi-space.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/../../.."
flag=--min-semi-space-size=${SEMI_SPACE_MB:-16}
rm -rf dist/cli-ss && cp -r dist/cli dist/cli-ss && rm dist/cli-ss/*.cache
loader=$PWD/dist/cli-ss/cuda-pipe.js
report=(report test/fixtures/h200-balanced-16-traced.json)
for args in help schema "compare test/fixtures/h100-balanced-1.json test/fixtures/h100-balanced-2.json" "${report[*]}"; do
  # shellcheck disable=SC2086
  COLUMNS=100 NO_COLOR=1 node $flag -e "process.argv.splice(1, 0, '$loader'); require('$loader').start({ recordCache: true });" -- $args >/dev/null
done
echo "scavenges of report: as built $(node --trace-gc dist/cli/cuda-pipe.js "${report[@]}" | grep -c Scavenge || true)," \
  "with $flag $(node $flag --trace-gc dist/cli-ss/cuda-pipe.js "${report[@]}" | grep -c Scavenge || true)"
for _ in $(seq 1 "${1:-15}"); do
  /usr/bin/time -f "as-built %U %S %e" node dist/cli/cuda-pipe.js "${report[@]}" >/dev/null
  /usr/bin/time -f "semi-space %U %S %e" node $flag dist/cli-ss/cuda-pipe.js "${report[@]}" >/dev/null
done 2>&1 | python3 -c '
import sys, statistics as s
runs = {}
for line in sys.stdin:
    k, u, sy, e = line.split()
    runs.setdefault(k, []).append(((float(u) + float(sy)) * 1000, float(e) * 1000))
for k, v in runs.items():
    print(f"{k}: {len(v)} runs, CPU median {s.median(x[0] for x in v):.0f} ms, wall median {s.median(x[1] for x in v):.0f} ms; CPU", " ".join(f"{x[0]:.0f}" for x in v))'
rm -rf dist/cli-ss
