#!/usr/bin/env bash
# inference-matmul.yaml at 16 × 4 lost to PyTorch in all 4 rounds of scripts/gpu-matmul-grid.sh while winning every
# other layout. One suspect is how CUDA maps streams to the device's hardware work queues
# (CUDA_DEVICE_MAX_CONNECTIONS, 8 by default): this runs cuda-pipe at 16 × 2, 16 × 4 and 16 × 8, and PyTorch at 16 × 4,
# under several values, 100 reps after 10, in ROUNDS rounds. Usage: bash scripts/gpu-matmul-connections.sh OUT [ROUNDS].
source "$(dirname "$0")/gpu-common.sh" "${1:?usage: gpu-matmul-connections.sh OUT [ROUNDS]}"
rounds=${2:-2}
config=$root/configs/inference-matmul.yaml
{
  for round in $(seq 1 "$rounds"); do
    for connections in 1 2 4 8 16 32; do
      for streams in 2 4 8; do
        step 60 env CUDA_DEVICE_MAX_CONNECTIONS=$connections "$cp" run "$config" --chunks 16 --streams "$streams" --reps 100 --warmup 10 --no-tracing --json "$out/c$connections-16x$streams-r$round.json" > /dev/null
      done
      step 60 sh -c 'exec env CUDA_DEVICE_MAX_CONNECTIONS=$1 python3 "$2" --batches 16 --rows 512 --streams 4 --reps 100 --warmup 10 >> "$0"' "$out/torch.jsonl" "$connections" "$root/scripts/torch/inference.py"
    done
  done
  /tmp/cuda-pipe/bin/node -e '
    const fs = require("fs"); const dir = process.argv[1];
    const torch = fs.readFileSync(dir + "/torch.jsonl", "utf8").trim().split("\n").map((l) => JSON.parse(l));
    for (const f of fs.readdirSync(dir).filter((f) => f.endsWith(".json")).sort()) {
      const r = JSON.parse(fs.readFileSync(dir + "/" + f, "utf8"));
      const m = r.modes.find((m) => m.role.kind === "overlapped");
      console.log(f, m.stats.median.toFixed(4), r.verification.status);
    }
    const values = [1, 2, 4, 8, 16, 32];
    torch.forEach((t, i) => console.log(`torch 16x4 round ${Math.floor(i / values.length) + 1} connections ${values[i % values.length]}`, t.medianMs));
  ' "$out" | tee "$out/summary.txt"
} > "$out/connections.log" 2>&1
