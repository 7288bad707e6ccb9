#!/usr/bin/env bash
# Re-runs scripts/gpu/analyze.sh's analyze steps (d) and its comparison (f) on the CPU machine, from the traces, Result and HTA
# output a GPU host left in FOLDER, with the analyze built here: analyze needs no GPU, so a fix to it is checked
# against the host's traces without another device run. Writes OUT laid out as FOLDER is (the traces are linked).
# Usage, from the repository root after `npm run build`: bash scripts/analyze/reanalyze.sh FOLDER OUT
set -euo pipefail
from=$(cd "${1:?the folder scripts/gpu/analyze.sh left}" && pwd)
out=${2:?output folder}
mkdir -p "$out"/analyze
for part in ddp torch run hta; do ln -sfn "$from/$part" "$out/$part"; done
cli=(node dist/src/cli/main.js)
for variant in no-overlap overlap; do
  "${cli[@]}" analyze "$from/ddp/$variant"/rank*.pt.trace.json.gz --json "$out/analyze/ddp-$variant.json" > "$out/analyze/ddp-$variant.txt"
done
for rank in 0 1; do
  "${cli[@]}" analyze "$from/ddp/no-overlap/rank$rank.pt.trace.json.gz" "$from/ddp/overlap/rank$rank.pt.trace.json.gz" --ab \
    --json "$out/analyze/ddp-ab-rank$rank.json" > "$out/analyze/ddp-ab-rank$rank.txt" || true
done
"${cli[@]}" analyze "$from/run/balanced-trace.json" --json "$out/analyze/balanced-run.json" > "$out/analyze/balanced-run.txt"
"${cli[@]}" analyze "$from/torch/balanced-torch.pt.trace.json.gz" --json "$out/analyze/balanced-torch.json" > "$out/analyze/balanced-torch.txt"
"${cli[@]}" analyze "$from/run/balanced-trace.json" --rates "$from/run/balanced.json" --json "$out/analyze/balanced-run-rates.json" > /dev/null
"${cli[@]}" analyze "$from/torch/balanced-torch.pt.trace.json.gz" --rates "$from/run/balanced.json" --json "$out/analyze/balanced-torch-rates.json" > /dev/null
python3 scripts/hta/compare_analyze.py "$out" --json "$out/compare.json" > "$out/compare.txt"
python3 scripts/hta/rounding_check.py "$from"/ddp/*/rank*.pt.trace.json.gz > "$out/hta-rounding.txt"
cat "$out/compare.txt" "$out/hta-rounding.txt"
