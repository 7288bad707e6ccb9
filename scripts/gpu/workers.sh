#!/usr/bin/env bash
# Issue 18 on a GPU host, from the bundle: the worker pool's GPU tests, the pool's scaling on the host's cores, and
# host stages on workers in the pipeline. Run from a checkout holding build/cuda-pipe-linux-x64.tar.xz (npm run
# bundle); about ten minutes. Usage: bash scripts/gpu/workers.sh OUTDIR. Logs go to OUTDIR/workers.log, each run's
# Result to OUTDIR/*.json.
#   loader.yaml            a decode stage on the workers feeding the balanced pipeline through pinned memory: verifies,
#                          and says whether the loader keeps up (on 1 worker and on the default pool);
#   host-stage.yaml        the checksum after each D2H on the default pool: no longer the JS thread's 1.5 → 22 ms;
#   after-light            balanced.yaml, 32 chunks, a light CPU cost after each D2H: within 5% of the same
#                          layout without the stage (the report's "host stage" line gives both);
#   scaling-W              balanced.yaml, 64 chunks, 4 ms of CPU per chunk after its D2H (the CPU stage limits) on
#                          W = 1, 2, 4, 8 workers: the rep time at 8 workers ≥ 6× faster than at 1;
#   sweep --set host.workers=1,2,4,8 on the same config, the sweep axis;
#   workers-wake.mjs       how fast a sleeping worker starts once the JS thread raises its flag (median, p90, max);
#   workers-report.mjs     per host-stage run: the pipeline with the stage against without it, and from the traced rep
#                          each task's start after its chunk's D2H (hand-over latency) and the tail past the GPU, or a
#                          loader's H2D start after its fill.
set -uo pipefail
out=${1:?usage: workers.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
here=$(pwd)
[ -f build/cuda-pipe-linux-x64.tar.xz ] || { echo 'no build/cuda-pipe-linux-x64.tar.xz here: run npm run bundle first'; exit 3; }
rm -rf /tmp/cuda-pipe && tar xJf build/cuda-pipe-linux-x64.tar.xz -C /tmp || exit 3
cp=/tmp/cuda-pipe/bin/cuda-pipe
work=/tmp/cuda-pipe-workers
mkdir -p "$work"
export CUDA_PIPE_CACHE_DIR=/tmp/cuda-pipe-cache
step() { echo; echo "=== $*"; "$@"; echo "(exit $?)"; }
# balanced.yaml with a host stage after each D2H and CHUNKS chunks.
variant() { # NAME CHUNKS HOST
  sed "s/^  chunks: 16$/  chunks: $2/" /tmp/cuda-pipe/configs/balanced.yaml > "$work/$1.yaml"
  printf 'host: %s\n' "$3" >> "$work/$1.yaml"
}
variant after-light 32 '{ after: { cost: { msPerMiB: 0.02 } } }'
variant scaling 64 '{ after: { cost: { msPerMiB: 1 } }, workers: 1 }'
{
  step nproc
  step /tmp/cuda-pipe/bin/node --test --test-reporter=spec /tmp/cuda-pipe/dist/src/kinds/host/workers.gpu.test.js
  step /tmp/cuda-pipe/bin/node --test --test-reporter=spec --test-name-pattern='host-stage|loader' /tmp/cuda-pipe/dist/test/gpu/toolbox.test.js
  step /tmp/cuda-pipe/bin/node "$here/scripts/bench/workers-scaling.mjs" /tmp/cuda-pipe/dist
  step /tmp/cuda-pipe/bin/node "$here/scripts/bench/workers-wake.mjs" /tmp/cuda-pipe/dist 8 200
  step "$cp" run /tmp/cuda-pipe/configs/loader.yaml --json "$out/loader.json" --svg "$out/loader.svg"
  step "$cp" run /tmp/cuda-pipe/configs/loader.yaml --workers 1 --no-tracing --json "$out/loader-1.json"
  step "$cp" run /tmp/cuda-pipe/configs/host-stage.yaml --json "$out/host-stage.json"
  step "$cp" run /tmp/cuda-pipe/configs/host-stage.yaml --workers 1 --json "$out/host-stage-1.json"
  step "$cp" run "$work/after-light.yaml" --json "$out/after-light.json"
  for w in 1 2 4 8; do step "$cp" run "$work/scaling.yaml" --workers "$w" --reps 10 --warmup 2 --no-tracing --json "$out/scaling-$w.json"; done
  step "$cp" run "$work/scaling.yaml" --workers 8 --reps 5 --warmup 1 --trace "$out/scaling-8.trace.json" --svg "$out/scaling-8.svg"
  step "$cp" sweep "$work/scaling.yaml" --chunks 64 --streams 4 --set host.workers=1,2,4,8 --max-time 20 --json "$out/sweep-workers.json"
  step /tmp/cuda-pipe/bin/node "$here/scripts/bench/workers-report.mjs" "$out/after-light.json" "$out/host-stage.json" "$out/host-stage-1.json" "$out/loader.json" "$out/loader-1.json"
  # The rep times of the scaling runs, side by side: the overlapped layout with the stage, at each worker count.
  step /tmp/cuda-pipe/bin/node -e '
    const fs = require("fs");
    const rows = [1, 2, 4, 8].map((w) => {
      const r = JSON.parse(fs.readFileSync(process.argv[1] + "/scaling-" + w + ".json", "utf8"));
      const m = r.modes.find((m) => m.role.kind === "overlapped" && m.cpuStage);
      return { w, ms: m.stats.median, gpu: m.cpuStage.gpuMedianMs, busy: m.cpuStage.busyMs.map((b) => Math.round(b)) };
    });
    for (const r of rows) console.log(`${r.w} workers: ${r.ms.toFixed(2)} ms a rep (GPU ${r.gpu.toFixed(2)} ms), ${(rows[0].ms / r.ms).toFixed(2)}x one worker; busy ms ${r.busy.join(" ")}`);
  ' "$out"
} 2>&1 | tee "$out/workers.log"
