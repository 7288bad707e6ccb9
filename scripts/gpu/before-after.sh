#!/usr/bin/env bash
# The rep loop before and after a refactor, on one GPU: the same configs run by this build (the bundle) and by an
# earlier build's dist/ (BEFORE, a tar.xz holding cuda-pipe/dist, run with this bundle's node and packages), taking
# turns, each mode's median printed side by side by scripts/bench/before-after.mjs. Usage:
#   bash scripts/gpu/before-after.sh OUT BEFORE_DIST_TAR_XZ [ROUNDS] [CONFIG…]   (default: balanced.yaml host-stage.yaml)
source "$(dirname "$0")/common.sh" "$1"
before_tar=${2:?usage: before-after.sh OUT BEFORE_DIST_TAR_XZ [ROUNDS] [CONFIG…]}
rounds=${3:-3}
shift 3 2>/dev/null || shift $#
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(balanced.yaml host-stage.yaml)
rm -rf /tmp/before /tmp/before-dist && mkdir -p /tmp/before-dist && cp -r /tmp/cuda-pipe /tmp/before && rm -rf /tmp/before/dist
tar xJf "$before_tar" -C /tmp/before-dist && mv /tmp/before-dist/cuda-pipe/dist /tmp/before/dist
before=(/tmp/before/bin/node /tmp/before/dist/src/cli/main.js)
{
  for round in $(seq 1 "$rounds"); do
    for config in "${configs[@]}"; do
      name=${config%.yaml}
      step 120 "$cp" run "/tmp/cuda-pipe/configs/$config" --json "$out/after-$name-$round.json"
      step 120 "${before[@]}" run "/tmp/cuda-pipe/configs/$config" --json "$out/before-$name-$round.json"
    done
  done
  /tmp/cuda-pipe/bin/node "$root/scripts/bench/before-after.mjs" "$out" | tee "$out/summary.txt"
} > "$out/before-after.log" 2>&1
