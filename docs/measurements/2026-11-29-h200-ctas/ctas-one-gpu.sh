#!/usr/bin/env bash
# collective.ctas on a GPU host, from the bundle: configs/ddp.yaml run with 2 CTAs under NCCL_DEBUG=INFO (NCCL's own
# lines on the channels it set up, as evidence the config reached it), then a sweep racing 2 and 16 CTAs at 8 and 16
# buckets on every visible GPU. Usage, from the repository root with the bundle built: bash THIS OUT
set -u
o=$1/ctas; mkdir -p "$o"
export NCCL_NVLS_ENABLE=0 CUDA_PIPE_CACHE_DIR=/tmp/cuda-pipe-cache
tar xJf build/cuda-pipe-linux-x64.tar.xz -C /tmp || exit 9
cp=/tmp/cuda-pipe/bin/cuda-pipe
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$o/gpus.csv"
sed 's/collective: { op: allreduce, buffer: grads }/collective: { op: allreduce, buffer: grads, ctas: 2 }/' configs/ddp.yaml > /tmp/ddp-ctas2.yaml
sed -i "s#source: ddp.cu#source: $PWD/kernels/ddp.cu#" /tmp/ddp-ctas2.yaml
NCCL_DEBUG=INFO timeout -k 10 90 $cp run /tmp/ddp-ctas2.yaml --devices all --reps 10 --warmup 2 --json "$o/run-ctas2.json" > "$o/run-ctas2.log" 2>&1
echo "run ctas 2 exit $?" >> "$o/exits.txt"
timeout -k 10 150 $cp sweep configs/ddp.yaml --devices all --chunks 8,16 --set 'kernels[1].collective.ctas=2,16' --max-time 15 --json "$o/sweep-ctas.json" > "$o/sweep-ctas.log" 2>&1
echo "sweep ctas exit $?" >> "$o/exits.txt"
cat "$o/exits.txt"
