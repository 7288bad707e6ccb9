"""A two-GPU data-parallel training step profiled on every rank, for `cuda-pipe analyze` and HTA (issue 27): an MLP of
LAYERS Linear(HIDDEN, HIDDEN) layers (ReLU between them) on BATCH rows a rank, MSE loss, plain SGD, in float32 with
full-precision matmuls (no TF32). Sized (16 layers of 4096, 256 rows) so that on an H100 a step should take 10-20 ms
(16 x 6 x 256 x 4096^2 = 412 GFLOP at FP32's 67 TFLOP/s peak, SIMT GEMMs at well under it) and the gradients'
all-reduce, LAYERS x HIDDEN^2 x 4 bytes (1 GiB), about 3 ms over NVLink, a visible share of it: estimates to be
checked against the traces, not measurements. Two variants:

  --overlap      DistributedDataParallel with its usual buckets (--bucket-mb, 25 by default): each bucket's
                 all-reduce starts during backward, as soon as its gradients are ready, beside the rest of backward
  --no-overlap   the same model without DDP: after loss.backward() has returned, every gradient is all-reduced
                 (dist.all_reduce, ReduceOp.AVG) one after another, then the optimizer steps; nothing else runs
                 beside the all-reduces, so communication is exposed
  --early        the same all-reduces as --no-overlap, each started (async_op=True) as soon as autograd has
                 accumulated its gradient (a post-accumulate-grad hook), all waited for before the optimizer steps:
                 what the exposed-communication finding advises, and nothing else. DDP also copies the gradients into
                 its buckets and scales them, work --no-overlap does not do, so --overlap is not a like-for-like fix

Every rank builds the model from seed 0 (the same weights; DDP also broadcasts rank 0's) and draws its own seeded
batch. WARMUP steps run unprofiled (NCCL's and cuBLAS's set-up, DDP's bucket rebuild after its first step), then
torch.profiler (CPU and CUDA, record_shapes and with_stack off) takes one warm-up step and STEPS active ones, each
closed by prof.step(), so the trace has ProfilerStep#N annotations; each step ends with a wait on the GPU (the
CUDA-event timing of the step), a sync that closes a step. Each rank writes OUT/rank<R>.pt.trace.json.gz (only
traces go there: HTA reads every .json/.gz in a folder), with Kineto's distributedInfo (added if the profiler left
it out). Rank 0 prints one JSON line: the variant, each rank's median step time by CUDA events, the all-reduced
bytes, and whether every rank ended with the same parameters (a check that gradients were averaged).

Usage: python3 -m torch.distributed.run --standalone --nproc_per_node=2 scripts/torch/ddp_overlap.py OUT
       (--overlap | --no-overlap | --early) [--layers 16] [--hidden 4096] [--batch 256] [--steps 5] [--warmup 3] [--timed 0] [--bucket-mb 25]
       --cpu runs it on the CPU with gloo instead (a dry run of the flow, for machines without a GPU)."""
import argparse
import gzip
import json
import os
import statistics
import time

# The GPU hosts forbid NVLink multicast (NVLS); cuda-pipe and ddp.py set the same before the first NCCL call.
os.environ.setdefault('NCCL_NVLS_ENABLE', '0')

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.profiler import ProfilerActivity, profile, schedule  # noqa: E402

from common import pattern  # noqa: E402
from ddp import init_nccl_group, launcher_identity  # noqa: E402


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('out', help='folder for the per-rank traces (nothing else is written there)')
    variant = parser.add_mutually_exclusive_group(required=True)
    variant.add_argument('--overlap', dest='variant', action='store_const', const='overlap',
                         help='DDP: all-reduce during backward')
    variant.add_argument('--no-overlap', dest='variant', action='store_const', const='no-overlap',
                         help='all-reduce after backward')
    variant.add_argument('--early', dest='variant', action='store_const', const='early',
                         help="--no-overlap's all-reduces, each started as its gradient is ready")
    parser.add_argument('--layers', type=int, default=16)
    parser.add_argument('--hidden', type=int, default=4096)
    parser.add_argument('--batch', type=int, default=256, help='rows a rank a step')
    parser.add_argument('--steps', type=int, default=5, help='profiled steps (after one profiler warm-up step)')
    parser.add_argument('--warmup', type=int, default=3, help='unprofiled steps first')
    parser.add_argument('--timed', type=int, default=0,
                        help='unprofiled steps timed after the warm-up (the profiler slows a step; these do not)')
    parser.add_argument('--bucket-mb', type=float, default=25, help="DDP's bucket_cap_mb (--overlap)")
    parser.add_argument('--cpu', action='store_true', help='CPU and gloo: a dry run without a GPU')
    args = parser.parse_args()
    for name in ('layers', 'hidden', 'batch', 'steps'):
        if getattr(args, name) < 1:
            parser.error(f'--{name} must be at least 1')
    return args


def build_model(layers, hidden, device):
    """Seed 0 on every rank: the same initial weights everywhere."""
    torch.manual_seed(0)
    blocks = []
    for i in range(layers):
        blocks.append(torch.nn.Linear(hidden, hidden))
        if i < layers - 1:
            blocks.append(torch.nn.ReLU())
    return torch.nn.Sequential(*blocks).to(device)


def make_step(args, model, device, rank, world):
    """One training step (zero grads, forward, loss, backward, all-reduce as the variant does, SGD)."""
    x = pattern((args.batch, args.hidden), torch.float32, 100 + rank, device=device.type)
    target = pattern((args.batch, args.hidden), torch.float32, 200 + rank, device=device.type)
    params = [p for p in model.parameters()]
    # gloo has no AVG: sum then divide, on the CPU dry run only.
    average_op = dist.ReduceOp.AVG if device.type == 'cuda' else None
    if args.variant == 'overlap':
        net = torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[device.index] if device.type == 'cuda' else None, bucket_cap_mb=args.bucket_mb)
    else:
        net = model
    optimizer = torch.optim.SGD(net.parameters(), lr=1e-4)
    pending = []

    def reduce(grad, wait):
        if average_op is not None:
            work = dist.all_reduce(grad, op=average_op, async_op=not wait)
        else:
            work = dist.all_reduce(grad, async_op=not wait)
        return work

    if args.variant == 'early':
        # Runs on autograd's thread once p.grad holds the whole gradient: the all-reduce is queued behind the
        # backward kernels that made it and runs beside the rest of backward.
        for p in params:
            p.register_post_accumulate_grad_hook(lambda p: pending.append((p, reduce(p.grad, wait=False))))

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(net(x), target)
        loss.backward()
        if args.variant == 'no-overlap':
            for p in params:
                reduce(p.grad, wait=True)
                if average_op is None:
                    p.grad.div_(world)
        while pending:
            p, work = pending.pop(0)
            work.wait()
            if average_op is None:
                p.grad.div_(world)
        optimizer.step()
    return step


class StepTimer:
    """A step's time: CUDA events on the current stream (waited on, which closes the step), or the wall clock on
    the CPU dry run."""

    def __init__(self, cuda):
        self.cuda = cuda
        self.samples = []

    def __call__(self, step):
        if self.cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            step()
            end.record()
            end.synchronize()
            return start.elapsed_time(end)
        began = time.perf_counter()
        step()
        return (time.perf_counter() - began) * 1e3


def finish_trace(raw_path, rank, world, backend):
    """Gzip the exported trace; adds distributedInfo where the profiler did not write it (HTA and analyze take the
    rank from it). Returns whether it had to be added."""
    with open(raw_path) as f:
        trace = json.load(f)
    added = 'distributedInfo' not in trace
    if added:
        # First in the document: HTA takes a file's rank from the first `"rank": N` it finds in the text.
        trace = {'distributedInfo': {'backend': backend, 'rank': rank, 'world_size': world}, **trace}
    with gzip.open(raw_path + '.gz', 'wt') as f:
        json.dump(trace, f)
    os.remove(raw_path)
    return added


def param_checksum(model):
    """float64 sum of every parameter: equal on every rank when the gradients were averaged everywhere."""
    with torch.no_grad():
        return float(sum(p.double().sum() for p in model.parameters()))


def main():
    args = parse_args()
    rank, world, local_rank = launcher_identity()
    os.environ.setdefault('MASTER_ADDR', '127.0.0.1')
    os.environ.setdefault('MASTER_PORT', '29500')
    if args.cpu:
        device = torch.device('cpu')
        dist.init_process_group('gloo', rank=rank, world_size=world)
    else:
        torch.cuda.set_device(local_rank)
        # 'highest': fp32 matmuls in full fp32, the compute share this step is sized by.
        torch.set_float32_matmul_precision('highest')
        device = torch.device('cuda', local_rank)
        init_nccl_group(rank, world, device)
    try:
        run(args, rank, world, device)
    finally:
        dist.destroy_process_group()


def run(args, rank, world, device):
    os.makedirs(args.out, exist_ok=True)
    model = build_model(args.layers, args.hidden, device)
    step = make_step(args, model, device, rank, world)
    timer = StepTimer(device.type == 'cuda')
    for _ in range(args.warmup):
        timer(step)
    dist.barrier()
    timed = [timer(step) for _ in range(args.timed)]
    # Every rank enters the profiled steps together; no collective of our own inside them (a barrier is an NCCL
    # all-reduce too, and would count as communication).
    dist.barrier()
    raw_path = os.path.join(args.out, f'rank{rank}.pt.trace.json')
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == 'cuda' else [])
    samples = []
    # One cycle (a warm-up step, then the active ones), exported when it ends: a trace exported after the context
    # closes holds only the next, empty cycle (profile_patterns.py learnt this).
    with profile(activities=activities, schedule=schedule(wait=0, warmup=1, active=args.steps, repeat=1),
                 on_trace_ready=lambda p: p.export_chrome_trace(raw_path),
                 record_shapes=False, with_stack=False, profile_memory=False) as prof:
        for i in range(args.steps + 1):
            ms = timer(step)
            if i > 0:
                samples.append(ms)
            prof.step()
    added = finish_trace(raw_path, rank, world, dist.get_backend())
    mine = {'rank': rank, 'medianMs': round(statistics.median(samples), 4),
            'timedMedianMs': round(statistics.median(timed), 4) if timed else None,
            'timedSamplesMs': [round(s, 4) for s in timed],
            'samplesMs': [round(s, 4) for s in samples], 'checksum': param_checksum(model),
            'distributedInfoAdded': added, 'traceBytes': os.path.getsize(raw_path + '.gz')}
    everyone = [None] * world
    dist.all_gather_object(everyone, mine)
    if rank == 0:
        grad_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
        print(json.dumps({
            'program': 'ddp_overlap', 'variant': args.variant, 'torch': torch.__version__,
            'device': torch.cuda.get_device_name(device) if device.type == 'cuda' else 'cpu',
            'backend': dist.get_backend(), 'worldSize': world, 'layers': args.layers, 'hidden': args.hidden,
            'batch': args.batch, 'bucketMb': args.bucket_mb if args.variant == 'overlap' else None, 'gradientBytes': grad_bytes,
            'profiledSteps': args.steps, 'warmup': args.warmup, 'nvls': os.environ.get('NCCL_NVLS_ENABLE'),
            'slowestRankMedianMs': max(r['medianMs'] for r in everyone),
            'paramsEqualAcrossRanks': len({r['checksum'] for r in everyone}) == 1,
            'ranks': everyone, 'traces': sorted(os.listdir(args.out)),
        }), flush=True)


if __name__ == '__main__':
    main()
