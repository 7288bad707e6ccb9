#!/usr/bin/env bash
# Builds the native baselines into build/native/ with the local nvcc, for the H200 host (sm_90, CUDA 13 runtime
# linked statically), and checks that each binary asks for no glibc newer than the GPU host's 2.39:
# - gemm (scripts/native/gemm.cu): libcublas is opened at run time, so none is needed here;
# - matmul (scripts/native/matmul.cu): libcublasLt is opened at run time too;
# - allreduce (scripts/native/allreduce.cu): libnccl is opened at run time too. Its function types come from an
#   nccl.h where one is found ($NCCL_HOME/include, CUDA's include folder, /usr/include, /usr/local/include, or PyTorch's
#   nvidia/nccl/include), else from the program's own copy of NCCL's declarations; the binary says which.
# Usage: bash scripts/native/build.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out="$root/build/native"
mkdir -p "$out"
flags=(-O2 -std=c++17 -Werror all-warnings -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90)

check_glibc() {
  local newest
  newest=$(objdump -T "$1" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -1)
  if [ "$(printf '%s\n2.39\n' "$newest" | sort -V | tail -1)" != "2.39" ]; then
    echo "$1 needs glibc $newest, newer than the GPU host's 2.39" >&2
    exit 1
  fi
  echo "built $1 (needs glibc $newest or newer)"
}

# The first folder holding nccl.h, or nothing.
nccl_include() {
  local candidates=("${NCCL_HOME:+$NCCL_HOME/include}" "${CUDA_HOME:+$CUDA_HOME/include}" /usr/local/cuda/include /usr/include /usr/local/include)
  local python
  for python in python3 python; do
    command -v "$python" >/dev/null || continue
    candidates+=("$("$python" -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "include"))' 2>/dev/null || true)")
  done
  candidates+=(/usr/lib/python3*/*-packages/nvidia/nccl/include /usr/local/lib/python3*/*-packages/nvidia/nccl/include)
  local dir
  for dir in "${candidates[@]}"; do
    if [ -n "$dir" ] && [ -f "$dir/nccl.h" ]; then
      echo "$dir"
      return
    fi
  done
}

nvcc "${flags[@]}" -o "$out/gemm" "$root/scripts/native/gemm.cu" -ldl
check_glibc "$out/gemm"
nvcc "${flags[@]}" -o "$out/matmul" "$root/scripts/native/matmul.cu" -ldl
check_glibc "$out/matmul"

include=$(nccl_include)
if [ -n "$include" ]; then
  echo "allreduce: NCCL's types from $include/nccl.h"
  # The compiler's own folders are searched already; naming them with -I would reorder its system headers.
  case "$include" in /usr/include | /usr/local/include) include_flag=() ;; *) include_flag=(-I"$include") ;; esac
  nvcc "${flags[@]}" "${include_flag[@]}" -o "$out/allreduce" "$root/scripts/native/allreduce.cu" -ldl
else
  echo "allreduce: no nccl.h found; NCCL's types from the program's own declarations"
  nvcc "${flags[@]}" -o "$out/allreduce" "$root/scripts/native/allreduce.cu" -ldl
fi
check_glibc "$out/allreduce"
