#!/usr/bin/env bash
# Issue 8's checks on the GPU host, from the bundle: the GPU suite, every shipped config's efficiency, the 16 MiB
# pipeline at 8 and 64 chunks, sweeps (raced and exhaustive) of balanced and small, the report and trace of a
# balanced run, and the H200 perf baselines. Usage: bash scripts/gpu-issue8.sh OUTDIR [part]  (part: a, b or all)
set -uo pipefail
out=${1:?output folder}; part=${2:-all}
mkdir -p "$out/files"
tar xJf build/cuda-pipe-linux-x64.tar.xz -C /tmp
cp=/tmp/cuda-pipe/bin/cuda-pipe
node=/tmp/cuda-pipe/bin/node
export CUDA_PIPE_CACHE_DIR=/tmp/cuda-pipe-cache
cd /tmp/cuda-pipe
step() { echo; echo "=== $*"; local t0=$(date +%s%N); "$@"; local rc=$?; echo "(exit $rc, $(( ($(date +%s%N) - t0) / 1000000 )) ms)"; }
figures() { "$node" -e '
  const rs = [].concat(JSON.parse(require("fs").readFileSync(process.argv[1])));
  for (const r of rs) for (const m of r.modes.filter((m) => m.analysis)) {
    const a = m.analysis, md = a.model;
    console.log(`${r.config.name} ${m.role.layout.chunks}x${m.role.layout.streams} ${m.role.layout.order}: ${m.stats.median.toFixed(4)} ms, ${a.speedup.toFixed(3)}x, bound ${a.bound.ms.toFixed(4)} (${a.bound.limitedBy}), efficiency ${a.efficiency.toFixed(3)}` +
      (md ? `, floor ${md.floor.ms.toFixed(4)} at ${md.floor.chunks}x${md.floor.streams}, ideal ${md.idealMs.toFixed(4)}, gap ${md.gap.map((g) => g.cause + " " + g.ms.toFixed(4)).join("; ")}` : ""));
  }
  for (const r of rs.filter((r) => r.sweep)) console.log(`sweep ${r.config.name}: best ${r.sweep.best.mode}, ties ${r.sweep.best.ties.length}, ${r.sweep.elapsedMs.toFixed(0)} ms`);' "$1"; }
{
if [ "$part" = a ] || [ "$part" = all ]; then
  step bin/cuda-pipe-gpu-tests
  for c in balanced compute-bound copy-bound async-overlap multi-kernel small; do
    step "$cp" run "configs/$c.yaml" --json "$out/files/run-$c.json" && figures "$out/files/run-$c.json"
  done
  step "$cp" run configs/small.yaml --chunks 64 --json "$out/files/run-small-64.json" && figures "$out/files/run-small-64.json"
  step "$cp" run configs/small.yaml --chunks 64 --gate --json "$out/files/run-small-64-gate.json" && figures "$out/files/run-small-64-gate.json"
  step "$cp" run --chunks 32 --json "$out/files/run-balanced-32.json" --html "$out/files/balanced.html" --trace "$out/files/balanced.trace.json" --timeline
  figures "$out/files/run-balanced-32.json"
fi
if [ "$part" = b ] || [ "$part" = all ]; then
  step "$cp" sweep --streams 1,2,4,8 --chunks 1,2,4,8,16,32,64 --json "$out/files/sweep-balanced.json" --html "$out/files/sweep-balanced.html" && figures "$out/files/sweep-balanced.json" | tail -3
  step "$cp" sweep --streams 1,2,4,8 --chunks 1,2,4,8,16,32,64 --exhaustive --max-time 200 --json "$out/files/sweep-balanced-exhaustive.json" && figures "$out/files/sweep-balanced-exhaustive.json" | tail -3
  step "$cp" sweep configs/small.yaml --json "$out/files/sweep-small.json" && figures "$out/files/sweep-small.json" | tail -3
fi
if [ "$part" = c ] || [ "$part" = all ]; then
  step scripts/perf-regression --update-baseline --out /tmp/perf --baselines "$out/files/baselines"
  step scripts/perf-regression --out /tmp/perf-check --baselines "$out/files/baselines" --md "$out/files/perf-check.md"
fi
} 2>&1 | tee "$out/log-$part.txt"
cd "$out" && tar czf "issue8-$part.tar.gz" files && rm -rf files
