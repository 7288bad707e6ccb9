#!/usr/bin/env bash
# How dry-run/log.txt was made on the 2-core CPU box (no GPU): stand-ins for what only a GPU host has, then the batch.
# /tmp/htavenv: python3 -m venv, then pip install pandas numpy and the local CPU torch wheel (torch 2.13.0+cpu).
set -euo pipefail
mkdir -p /tmp/dry/bin /tmp/dry/bundle/cuda-pipe/bin
cat > /tmp/dry/bin/nvidia-smi <<'SMI'
#!/bin/sh
# Dry-run stand-in: two GPUs listed, nothing else.
case "$*" in *query-gpu=index,name*) printf '0, FAKE, 0, 0\n1, FAKE, 0, 0\n';; *query-gpu=index*) printf '0\n1\n';; *) echo "fake topology";; esac
SMI
printf '#!/bin/sh\nexec /tmp/htavenv/bin/python "$@"\n' > /tmp/dry/bin/python3
printf '#!/bin/sh\nexec node /work/wt-gpuval/bin/cuda-pipe "$@"\n' > /tmp/dry/bundle/cuda-pipe/bin/cuda-pipe
chmod +x /tmp/dry/bin/nvidia-smi /tmp/dry/bin/python3 /tmp/dry/bundle/cuda-pipe/bin/cuda-pipe
tar cJf /tmp/dry/bundle.tar.xz -C /tmp/dry/bundle cuda-pipe
cd /work/wt-gpuval
PATH=/tmp/dry/bin:$PATH DDP_ARGS="--cpu --layers 3 --hidden 256 --batch 64" bash scripts/gpu-analyze.sh /tmp/dryout /tmp/dry/bundle.tar.xz
