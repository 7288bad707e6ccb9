#!/usr/bin/env bash
# workers3 on the H200: the light stage before (the lead's main bundle) and after, the host-stage and loader GPU tests,
# host-stage.yaml and loader.yaml, and the hand-over latencies from the traced reps.
set -u
d=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/out}
mkdir -p /tmp/after /tmp/before "$out"
# The before bundle is this one with the lead's main dist/ (149679d) in place of ours: the same Node and modules.
tar xJf "$d/cuda-pipe-linux-x64.tar.xz" -C /tmp/after && cp -a /tmp/after/cuda-pipe /tmp/before/ && rm -rf /tmp/before/cuda-pipe/dist && tar xJf "$d/before-dist.tar.xz" -C /tmp/before/cuda-pipe || exit 3
A=/tmp/after/cuda-pipe
B=/tmp/before/cuda-pipe
export CUDA_PIPE_CACHE_DIR=/tmp/cp-cache
sed "s/^  chunks: 16$/  chunks: 32/" $A/configs/balanced.yaml > /tmp/after-light.yaml
printf 'host: %s\n' '{ after: { cost: { msPerMiB: 0.02 } } }' >> /tmp/after-light.yaml
step() { echo; echo "=== $*"; "$@"; echo "(exit $?)"; }
{
  step nproc
  step $A/bin/node --test --test-reporter=spec --test-name-pattern='host-stage|loader' $A/dist/test/gpu/toolbox.test.js
  step $A/bin/node --test --test-reporter=spec $A/dist/test/gpu/workers.test.js
  step $B/bin/cuda-pipe run /tmp/after-light.yaml --json "$out/before-after-light.json"
  step $A/bin/cuda-pipe run /tmp/after-light.yaml --json "$out/after-light.json"
  step $A/bin/cuda-pipe run $A/configs/host-stage.yaml --json "$out/host-stage.json"
  step $A/bin/cuda-pipe run $A/configs/loader.yaml --json "$out/loader.json"
  step $A/bin/cuda-pipe run $A/configs/loader.yaml --workers 1 --no-tracing --json "$out/loader-1.json"
  step $A/bin/node "$d/workers-scaling.mjs" $A/dist 1 8
  step $A/bin/node "$d/workers-wake.mjs" $A/dist 8 200
  step $A/bin/node "$d/workers-report.mjs" "$out/before-after-light.json" "$out/after-light.json" "$out/host-stage.json" "$out/loader.json" "$out/loader-1.json"
} 2>&1 | tee "$out/workers3.log"
