#!/usr/bin/env bash
# Sends SIGTERM to `run --dry-run --ops` over the largest plan allowed at a random moment (0.3 to 3.3 s in, while it
# starts, plans, compiles into an empty kernel cache or lists ops) N times, and counts how each run ended: 130 is the
# documented exit, 139 a crash (SIGSEGV), 143 death by the signal before any handler of ours existed, 0 done first.
# Usage: bash scripts/bench/signal-trials.sh N   (from the repository root, after `npm run build`)
set -uo pipefail
n=${1:?usage: signal-trials.sh N}
declare -A ended
for _ in $(seq 1 "$n"); do
  cache=$(mktemp -d)
  ms=$((300 + RANDOM % 3000))
  CUDA_PIPE_CACHE_DIR=$cache node bin/cuda-pipe run --dry-run --ops --chunks 16384 \
    --host-memory pinned,pageable,write-combined >/dev/null 2>&1 &
  pid=$!
  sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
  kill -TERM "$pid" 2>/dev/null
  wait "$pid"
  rc=$?
  echo "signal at $ms ms: exit $rc"
  ended[$rc]=$((${ended[$rc]:-0} + 1))
  rm -rf "$cache"
done
for rc in "${!ended[@]}"; do echo "exit $rc: ${ended[$rc]} of $n"; done | sort
