#!/usr/bin/env bash
# Builds the native GEMM baseline (scripts/native/gemm.cu) into build/native/gemm with the local nvcc, for the H200
# host (sm_90, CUDA 13 runtime linked statically; libcublas is opened at run time, so none is needed here), and
# checks that the binary asks for no glibc newer than the GPU host's 2.39. Usage: bash scripts/native/build.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out="$root/build/native"
mkdir -p "$out"
nvcc -O2 -std=c++17 -Werror all-warnings -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 \
  -o "$out/gemm" "$root/scripts/native/gemm.cu" -ldl
newest=$(objdump -T "$out/gemm" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -1)
if [ "$(printf '%s\n2.39\n' "$newest" | sort -V | tail -1)" != "2.39" ]; then
  echo "build/native/gemm needs glibc $newest, newer than the GPU host's 2.39" >&2
  exit 1
fi
echo "built $out/gemm (needs glibc $newest or newer)"
