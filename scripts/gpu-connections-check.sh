#!/usr/bin/env bash
# pipeline.connections on a GPU host, from the bundle: inference-matmul.yaml (connections: 1) and the same config
# without it at 16 × 4, taking turns twice, 100 reps after 10 (the Result must record connections 1 and verify); a
# sweep asking for two values must stop with exit 2 before measuring; then the GPU tests of the kinds session 34
# touched (cuBLAS, matmul, the host's workers). Usage: bash scripts/gpu-connections-check.sh OUT. Logs to OUT/check.log.
source "$(dirname "$0")/gpu-common.sh" "${1:?usage: gpu-connections-check.sh OUT}"
config=$root/configs/inference-matmul.yaml
sed '/^  connections: /d' "$config" > "$out/inference-matmul-default-queues.yaml"
{
  for round in 1 2; do
    step 60 "$cp" run "$config" --chunks 16 --streams 4 --reps 100 --warmup 10 --no-tracing --json "$out/one-queue-r$round.json"
    step 60 "$cp" run "$out/inference-matmul-default-queues.yaml" --chunks 16 --streams 4 --reps 100 --warmup 10 --no-tracing --json "$out/default-queues-r$round.json"
  done
  step 60 "$cp" sweep "$config" --set pipeline.connections=1,8
  (cd /tmp/cuda-pipe && step 240 bin/node --test --test-concurrency=1 --test-reporter=spec dist/src/kinds/gemm/cublas.gpu.test.js \
    dist/src/kinds/matmul/matmul.gpu.test.js dist/src/kinds/host/workers.gpu.test.js)
  /tmp/cuda-pipe/bin/node -e '
    const fs = require("fs"); const dir = process.argv[1];
    for (const f of fs.readdirSync(dir).filter((f) => f.endsWith(".json")).sort()) {
      const r = JSON.parse(fs.readFileSync(dir + "/" + f, "utf8"));
      const m = r.modes.find((m) => m.role.kind === "overlapped");
      console.log(f, "connections", r.pipeline.connections ?? "unset", "overlapped median", m.stats.median.toFixed(4), "ms, verification", r.verification.status);
    }' "$out" | tee "$out/summary.txt"
} > "$out/check.log" 2>&1
