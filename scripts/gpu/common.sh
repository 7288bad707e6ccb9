# Sourced by the GPU-host scripts: the output folder ($1, made absolute) and the bundle ($2, default the build's)
# unpacked into /tmp, `cp` the CLI in it, the kernel cache in /tmp, NVLink multicast off (the hosts' notes require
# it; launchers' children inherit it), and `step LIMIT CMD…`, which logs a command, runs it under its timeout and
# says how it ended and after how long.
set -uo pipefail
out=${1:?output folder}
bundle=${2:-build/cuda-pipe-linux-x64.tar.xz}
mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$(pwd)
tar xJf "$bundle" -C /tmp
cp=/tmp/cuda-pipe/bin/cuda-pipe
export CUDA_PIPE_CACHE_DIR=/tmp/cuda-pipe-cache NCCL_DEBUG=${NCCL_DEBUG:-WARN} NCCL_NVLS_ENABLE=0
step() {
  local limit=$1; shift
  echo; echo "=== $(date +%T) timeout $limit: $*"
  local started=$SECONDS
  timeout -k 5 "$limit" "$@"
  echo "(exit $? after $((SECONDS - started)) s)"
}
