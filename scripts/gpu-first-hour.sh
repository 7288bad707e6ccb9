#!/usr/bin/env bash
# Issues 26 and 27 on a one-GPU host, from the bundle: `run` of the default config as a new user sees it (the
# README's first screen is copied from this log), with its Result and Chrome trace; the PyTorch programs of
# scripts/torch/profile_patterns.py profiled into Kineto traces, and `analyze` of each and of run's own trace; then
# the whole GPU suite. Usage on the GPU host: bash scripts/gpu-first-hour.sh OUT [BUNDLE]
source "$(dirname "$0")/gpu-common.sh"
{
  nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
  step 60 "$cp" run --json "$out/balanced.json" --trace "$out/balanced-trace.json"
  step 120 python3 "$root/scripts/torch/profile_patterns.py" "$out/traces"
  if "$cp" analyze --help >/dev/null 2>&1; then
    for trace in "$out"/traces/*.pt.trace.json.gz "$out/balanced-trace.json"; do
      step 60 "$cp" analyze "$trace" --json "${trace%%.*}.analysis.json"
    done
  fi
} 2>&1 | tee "$out/log.txt"
cd /tmp/cuda-pipe && timeout -k 10 "${SUITE_S:-240}" bin/node --test --test-concurrency=1 --test-timeout=200000 --test-reporter=spec dist/test/gpu/*.test.js dist/src/kinds/*/*.gpu.test.js > "$out/suite.log" 2>&1
echo "suite: exit $?" >> "$out/suite.log"
grep -E '^ℹ (tests|pass|fail|skipped|duration_ms)|^suite' "$out/suite.log" | tee -a "$out/log.txt"
