#!/usr/bin/env bash
# configs/ddp.yaml's knobs on N GPUs of one host, for each N given, with PyTorch's scripts/torch/ddp.py in the same
# call: a sweep of 8, 16 and 32 buckets racing the communication stream's priority (high, low), another racing NCCL's
# CTAs (collective.ctas 8, 16, 32), another the hardware queues (pipeline.connections 1, 8: a process each), then `run`
# at 16 and 32 buckets with each priority, twice. Everything lands in OUT/ddp-knobs.tgz.
# Usage (from the repository root, the bundle built): bash scripts/gpu/ddp-knobs.sh OUT "4 2"
set -u
o=$1/ddp-knobs; mkdir -p $o
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
tar xJf build/cuda-pipe-linux-x64.tar.xz -C /tmp || exit 9
cp=/tmp/cuda-pipe/bin/cuda-pipe
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $o/smi-before.csv
for p in high low; do sed "s/collective: { op: allreduce, buffer: grads }/collective: { op: allreduce, buffer: grads, priority: $p }/" configs/ddp.yaml > /tmp/ddp-$p.yaml; done
for n in $2; do
  vis=$(seq -s, 0 $((n-1)))
  export CUDA_VISIBLE_DEVICES=$vis
  timeout -k 10 150 $cp sweep configs/ddp.yaml --devices all --chunks 8,16,32 --set 'kernels[1].collective.priority=high,low' --max-time 30 --json $o/sweep-g$n.json > $o/sweep-g$n.log 2>&1; echo "sweep g$n exit $?" >> $o/exits.txt
  timeout -k 10 150 $cp sweep configs/ddp.yaml --devices all --chunks 8,16,32 --set 'kernels[1].collective.ctas=8,16,32' --max-time 20 --json $o/sweep-ctas-g$n.json > $o/sweep-ctas-g$n.log 2>&1; echo "sweep ctas g$n exit $?" >> $o/exits.txt
  timeout -k 10 150 $cp sweep configs/ddp.yaml --devices all --chunks 8,16,32 --set 'pipeline.connections=1,8' --max-time 20 --json $o/sweep-connections-g$n.json > $o/sweep-connections-g$n.log 2>&1; echo "sweep connections g$n exit $?" >> $o/exits.txt
  for i in 1 2; do for p in high low; do for c in 16 32; do
    timeout -k 10 60 $cp run /tmp/ddp-$p.yaml --devices all --chunks $c --json $o/run-g$n-$p-$c-$i.json > $o/run-g$n-$p-$c-$i.log 2>&1; echo "run g$n $p $c $i exit $?" >> $o/exits.txt
  done; done; done
  timeout -k 10 150 python3 -m torch.distributed.run --standalone --nproc_per_node=$n scripts/torch/ddp.py --buckets 8,16,32 > $o/torch-g$n.jsonl 2> $o/torch-g$n.err; echo "torch g$n exit $?" >> $o/exits.txt
done
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $o/smi-after.csv
cat $o/exits.txt
tar czf $1/ddp-knobs.tgz -C $1 ddp-knobs && rm -rf $o
