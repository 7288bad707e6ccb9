#!/usr/bin/env bash
# Issue 24's stalls reproduced on a host with two GPUs or more, each under a short timeout, with what every thread of
# the stuck process was doing 25 s in (the kernel's wait channel and system call per thread, and gdb's backtraces where
# gdb is installed) and how busy each GPU was. Usage on the GPU host: bash scripts/gpu-x2-stalls.sh OUT [BUNDLE]
source "$(dirname "$0")/gpu-common.sh"
cd /tmp/cuda-pipe
# What each thread of every cuda-pipe process is doing, after $1 seconds.
sample() {
  sleep "$1"
  local pid t
  for pid in $(pgrep -f 'dist/src/cli/main.js'); do
    echo "--- ${1}s in: pid $pid"
    for t in /proc/"$pid"/task/*; do
      echo "  $(cat "$t"/comm) state=$(awk '{print $3}' "$t"/stat) wchan=$(cat "$t"/wchan) syscall=$(cut -d' ' -f1 "$t"/syscall)"
    done
    if command -v gdb >/dev/null; then timeout 40 gdb -p "$pid" -batch -ex 'thread apply all bt 14' 2>&1 | grep -v '^\[New\|^\[Thread debugging\|libthread_db' | head -200; fi
  done
  nvidia-smi --query-gpu=index,utilization.gpu,memory.used --format=csv,noheader
}
step() {
  local limit=$1; shift
  echo; echo "=== $(date +%T) timeout $limit: $*"
  sample 25 &
  local sampler=$!
  local started=$SECONDS
  timeout -k 10 "$limit" "$@"
  echo "(exit $? after $((SECONDS - started)) s)"
  kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
}
{
  nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
  nvidia-smi topo -m
  echo "gdb: $(command -v gdb || echo none); mpirun: $(command -v mpirun || echo none); torchrun: $(command -v torchrun || echo none)"
  step 45 "$cp" run configs/ddp.yaml --devices all --chunks 4 --json "$out/a-devices.json"
  step 45 "$cp" run configs/ddp.yaml --devices all --chunks 4 --no-tracing
  step 45 "$cp" run configs/ddp.yaml --devices all --chunks 4 --reps 3
  step 60 mpirun --allow-run-as-root -np 2 -x PATH -x LD_LIBRARY_PATH -x NCCL_DEBUG "$cp" run configs/ddp.yaml --chunks 4 --no-tracing --nccl-dir /tmp
  if [ -x "$root/build/native/allreduce" ]; then
    step 60 "$root/build/native/allreduce" -g 2 -w 5 -n 20 -b 1M -e 1G -f 2
  fi
} 2>&1 | tee "$out/log.txt"
