"""The PyTorch peer of configs/ddp.yaml (issue 24): a data-parallel backward pass as DDP overlaps it. 32 layers of
4 Mi float32 gradients (512 MiB) in BUCKETS buckets; each bucket's gradients are computed on the compute stream by
ddp.cu's layer_grads arithmetic (a resident 1 Mi float32 activation table, 600 dependent FMAs a gradient), compiled
with NVRTC through torch.cuda.jiterator, one launch a bucket; each bucket is then all-reduced (NCCL, sum) with
torch.distributed on a side stream that waits on an event recorded after the bucket's compute. Timed with CUDA
events, median of REPS after WARMUP, every rep started together on every rank (a barrier before it):

  serial      compute then all-reduce, bucket after bucket, on the compute stream
  overlapped  the all-reduces on the side stream behind each bucket's event, as DDP does
  compute     the gradients alone
  allreduce   the all-reduces alone, back to back

and exposed communication (overlapped - compute alone; and, with --profile, from one torch.profiler step: the NCCL
kernels' time that no compute kernel covered), the all-reduce's algbw and busbw as nccl-tests define them (algbw =
per-rank bytes / time, busbw = algbw x 2(n-1)/n), and a checksum check: the reduced gradients' per-layer checksums
(every 4,096th gradient, as ddp.cu's layer_checksum) equal world size x one rank's, exactly for one or two ranks.
Rank 0 prints one JSON line per figure on stdout and a table on stderr. The activation table holds common.pattern's
seeded values, not cuda-pipe's: the same arithmetic and cost, other bits. torch.distributed runs each all-reduce on
its process group's NCCL stream, which waits on the stream current at the call (here the side stream) and which that
stream then waits on; so the side stream orders it as cuda-pipe's comm stream orders its ncclAllReduce.

Usage: torchrun --nproc-per-node 2 scripts/torch/ddp.py [--buckets 1,2,4,8,16,32] [--iterations 600]
       [--reps 20] [--warmup 3] [--no-profile]
       (one process per GPU under mpirun or srun works too: their ranks are read, MASTER_ADDR defaults to
       127.0.0.1; one process alone is a one-rank group)"""
import argparse
import os
import statistics
import sys

# The GPU hosts forbid NVLink multicast (NVLS); cuda-pipe sets the same before its first NCCL call.
os.environ.setdefault('NCCL_NVLS_ENABLE', '0')

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

from common import fork, join, pattern, report  # noqa: E402

LAYERS = 32
LAYER_ELEMENTS = 4 * 1024 * 1024
ACT_ELEMENTS = 1024 * 1024  # ddp.cu's actMask + 1: the table repeats every 2^20 gradients
BLOCK_SHIFT = 20  # ddp.cu adds (g >> 20) * 0.0001f: a term per 2^20-gradient block of the whole buffer
CHECK_STEP = 4096

# ddp.cu's layer_grads for one gradient. jiterator gives no element index, so the index enters as inputs: `act` is
# the table broadcast along a bucket's rows of 2^20 gradients (act[g & actMask]) and `block` each row's g >> 20 as a
# float; reading both costs what ddp.cu's read of act costs (the table stays in L2). The loop is ddp.cu's.
LAYER_GRADS = """
template <typename T> T layer_grads(T act, T block, int iterations) {
    float x = act + block * 0.0001f;
    for (int k = 0; k < iterations; ++k) x = __fmaf_rn(x, 0.999f, 0.001f);
    return x;
}
"""


def launcher_identity():
    """(rank, world size, local rank) from torchrun, Open MPI or Slurm; (0, 1, 0) without a launcher."""
    for rank, size, local in (('RANK', 'WORLD_SIZE', 'LOCAL_RANK'),
                              ('OMPI_COMM_WORLD_RANK', 'OMPI_COMM_WORLD_SIZE', 'OMPI_COMM_WORLD_LOCAL_RANK'),
                              ('SLURM_PROCID', 'SLURM_NTASKS', 'SLURM_LOCALID')):
        if rank in os.environ and size in os.environ:
            return int(os.environ[rank]), int(os.environ[size]), int(os.environ.get(local, os.environ[rank]))
    return 0, 1, 0


def init_nccl_group(rank, world, device):
    try:
        # device_id (torch 2.3 and later) binds the group to this GPU at once, so a barrier knows its device.
        dist.init_process_group('nccl', rank=rank, world_size=world, device_id=device)
    except TypeError:
        dist.init_process_group('nccl', rank=rank, world_size=world)


def gradient_kernel(iterations):
    """The jiterator kernel, checked on a small input against the same loop on the host; else an eager stand-in."""
    try:
        fn = torch.cuda.jiterator._create_jit_fn(LAYER_GRADS, iterations=iterations)
        act = torch.tensor([[0.5, -0.25]], device='cuda')
        block = torch.tensor([[0.0], [3.0]], device='cuda')
        got = fn(act, block, iterations=iterations).cpu()
        # In float64 on the host: float32's rounding, once an FMA, stays within ~1,000 ulps of it (the loop
        # contracts by 0.999 a step), far inside 1e-3; a wrong kernel (no loop, a wrong index term) is far outside.
        expected = torch.tensor([[0.5, -0.25]], dtype=torch.float64) + torch.tensor([[0.0], [3.0]], dtype=torch.float64) * 0.0001
        for _ in range(iterations):
            expected = expected * 0.999 + 0.001
        if not torch.allclose(got.double(), expected, rtol=1e-3, atol=1e-5):
            raise RuntimeError(f'jiterator kernel gave {got.tolist()}, the loop {expected.tolist()}')
        return (lambda a, b: fn(a, b, iterations=iterations)), 'jiterator (NVRTC): ddp.cu layer_grads arithmetic'
    except Exception as error:  # noqa: BLE001 - any failure means the stand-in, said in every line
        def eager(a, b):
            x = a + b * 0.0001
            for _ in range(iterations):
                x.mul_(0.999).add_(0.001)
            return x
        return eager, (f'EAGER STAND-IN, not ddp.cu\'s cost ({iterations} elementwise launches a bucket, memory-bound): '
                       f'jiterator failed: {error}')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--buckets', default='8', help='bucket counts, comma-separated, each dividing 32 (e.g. 1,2,4,8,16,32)')
    parser.add_argument('--iterations', type=int, default=600, help="FMAs a gradient (ddp.yaml's 600)")
    parser.add_argument('--reps', type=int, default=20)
    parser.add_argument('--warmup', type=int, default=3)
    parser.add_argument('--no-profile', dest='profile', action='store_false', help='skip the torch.profiler step')
    args = parser.parse_args()
    bucket_counts = [int(b) for b in args.buckets.split(',') if b.strip()]
    for b in bucket_counts:
        if b < 1 or LAYERS % b:
            parser.error(f'--buckets {b}: a bucket count must divide the {LAYERS} layers')

    rank, world, local_rank = launcher_identity()
    os.environ.setdefault('MASTER_ADDR', '127.0.0.1')
    os.environ.setdefault('MASTER_PORT', '29500')
    torch.cuda.set_device(local_rank)
    init_nccl_group(rank, world, torch.device('cuda', local_rank))
    try:
        run(args, bucket_counts, rank, world)
    finally:
        dist.destroy_process_group()


def run(args, bucket_counts, rank, world):
    grads_of, kernel_note = gradient_kernel(args.iterations)
    # Every rank the same seeded table, as every cuda-pipe rank has the same seeded `act`: the reduced gradients are
    # then world x one rank's.
    act = pattern((1, ACT_ELEMENTS), torch.float32, 7)
    compute = torch.cuda.Stream()
    comm = torch.cuda.Stream()
    rows = []
    for buckets in bucket_counts:
        layers = LAYERS // buckets
        blocks = layers * LAYER_ELEMENTS >> BLOCK_SHIFT
        block_ids = [torch.arange(b * blocks, (b + 1) * blocks, dtype=torch.float32, device='cuda').view(-1, 1)
                     for b in range(buckets)]
        done = [torch.cuda.Event() for _ in range(buckets)]
        # The step's gradients live until the next step replaces them, after the rep's end event was waited on: the
        # caching allocator cannot hand their memory to the compute stream while an all-reduce still reads it.
        grads = [grads_of(act, block_ids[b]).view(-1) for b in range(buckets)]

        def serial():
            with torch.cuda.stream(compute):
                for b in range(buckets):
                    grads[b] = grads_of(act, block_ids[b]).view(-1)
                    dist.all_reduce(grads[b])

        def overlapped():
            fork([compute, comm])
            for b in range(buckets):
                with torch.cuda.stream(compute):
                    grads[b] = grads_of(act, block_ids[b]).view(-1)
                    done[b].record(compute)
                with torch.cuda.stream(comm):
                    comm.wait_event(done[b])
                    dist.all_reduce(grads[b])
            join([compute, comm])

        def compute_alone():
            with torch.cuda.stream(compute):
                for b in range(buckets):
                    grads[b] = grads_of(act, block_ids[b]).view(-1)

        def allreduce_alone():
            fork([compute, comm])
            with torch.cuda.stream(comm):
                for b in range(buckets):
                    dist.all_reduce(grads[b])
            join([compute, comm])

        figures = {}
        for name, step in (('serial', serial), ('overlapped', overlapped), ('compute', compute_alone), ('allreduce', allreduce_alone)):
            figures[name] = timed(step, compute, args.warmup, args.reps)

        check = checksum_check(compute_alone, overlapped, grads, world)
        profiled = profile_exposed(overlapped) if args.profile else {'profilerSkipped': '--no-profile'}
        row = summarise(args, buckets, world, figures, check, profiled, kernel_note, rank)
        rows.append(row)
    if rank == 0:
        table(rows, world)


def timed(step, stream, warmup, reps):
    """Each rep from an event on `stream` to one after the step, behind a barrier: no rank's collectives wait for a
    rank that started its rep later. Each rank's median, gathered: a step is as slow as its slowest rank."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    samples = []
    for rep in range(warmup + reps):
        dist.barrier()
        torch.cuda.synchronize()
        start.record(stream)
        step()
        end.record(stream)
        end.synchronize()
        if rep >= warmup:
            samples.append(start.elapsed_time(end))
    medians = [None] * dist.get_world_size()
    dist.all_gather_object(medians, statistics.median(samples))
    return {'samples': samples, 'rankMedians': medians, 'median': max(medians)}


def checksums(grads):
    """ddp.cu's layer_checksum's figure: per layer the float32 sum of every 4,096th gradient."""
    flat = torch.cat(grads).view(LAYERS, LAYER_ELEMENTS)
    return flat[:, ::CHECK_STEP].sum(dim=1, dtype=torch.float32)


def checksum_check(compute_alone, reduced_step, grads, world):
    """The all-reduce's sum: world x one rank's checksums, exact for one or two ranks (x + x = 2x in float32, and a
    power of two scales every partial sum exactly), within 1e-5 relative for more (a ring adds x three times)."""
    compute_alone()
    torch.cuda.synchronize()
    single = checksums(grads)
    reduced_step()
    torch.cuda.synchronize()
    reduced = checksums(grads)
    expected = single * world
    exact = bool(torch.equal(reduced, expected))
    relative = float(((reduced - expected).abs() / expected.abs().clamp_min(1e-30)).max())
    passed = exact if world <= 2 else relative <= 1e-5
    return {'checksumPassed': passed, 'checksumExact': exact, 'checksumMaxRelDiff': relative,
            'checksumLayer0': float(reduced[0]), 'checksumLayer0SingleRank': float(single[0])}


def profile_exposed(step):
    """One overlapped step under torch.profiler: NCCL kernels' time, and the part no compute kernel ran beside."""
    try:
        from torch.profiler import ProfilerActivity, profile
        torch.cuda.synchronize()
        dist.barrier()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            step()
            torch.cuda.synchronize()
        kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA and e.time_range.end > e.time_range.start]
        comm = merged([(e.time_range.start, e.time_range.end) for e in kernels if 'nccl' in e.name.lower()])
        work = merged([(e.time_range.start, e.time_range.end) for e in kernels if 'nccl' not in e.name.lower() and 'memcpy' not in e.name.lower() and 'memset' not in e.name.lower()])
        comm_us = sum(b - a for a, b in comm)
        covered_us = sum(max(0, min(b, d) - max(a, c)) for a, b in comm for c, d in work)
        return {'profilerCommMs': comm_us / 1e3, 'profilerExposedCommMs': (comm_us - covered_us) / 1e3,
                'profilerOverlapFraction': covered_us / comm_us if comm_us else None}
    except Exception as error:  # noqa: BLE001 - the profiler is a second opinion; its absence is said, not fatal
        return {'profilerSkipped': str(error)}


def merged(intervals):
    """Intervals merged where they overlap, so concurrent kernels count once."""
    out = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def summarise(args, buckets, world, figures, check, profiled, kernel_note, rank):
    bucket_bytes = LAYERS // buckets * LAYER_ELEMENTS * 4
    total_bytes = LAYERS * LAYER_ELEMENTS * 4
    allreduce_ms = figures['allreduce']['median']
    algbw = total_bytes / (allreduce_ms / 1e3) / 1e9
    busbw = algbw * 2 * (world - 1) / world
    exposed = figures['overlapped']['median'] - figures['compute']['median']
    config = {'buckets': buckets, 'bucketBytes': bucket_bytes, 'gradientBytes': total_bytes, 'worldSize': world,
              'iterations': args.iterations, 'warmup': args.warmup, 'reps': args.reps,
              'nvls': os.environ.get('NCCL_NVLS_ENABLE'), 'kernel': kernel_note}
    if rank == 0:
        for name in ('serial', 'overlapped', 'compute', 'allreduce'):
            extra = {'figure': name, 'rankMediansMs': [round(m, 4) for m in figures[name]['rankMedians']],
                     'slowestRankMedianMs': round(figures[name]['median'], 4)}
            if name == 'allreduce':
                extra.update(algbwGBps=round(algbw, 2), busbwGBps=round(busbw, 2), calls=buckets)
            if name == 'overlapped':
                extra.update(exposedCommMs=round(exposed, 4), exposedOfAllreduce=round(exposed / allreduce_ms, 4),
                             speedupOverSerial=round(figures['serial']['median'] / figures['overlapped']['median'], 4),
                             **check, **profiled)
            report('torch-ddp', config, figures[name]['samples'], **extra)
    return {'buckets': buckets, 'bucketBytes': bucket_bytes, **{k: v['median'] for k, v in figures.items()},
            'exposed': exposed, 'algbw': algbw, 'busbw': busbw, 'check': check['checksumPassed'],
            'profiled': profiled.get('profilerExposedCommMs'), 'kernel': kernel_note}


def table(rows, world):
    out = sys.stderr
    print(f'torch-ddp on {world} rank{"s" if world != 1 else ""} of {torch.cuda.get_device_name()} '
          f'(NCCL_NVLS_ENABLE={os.environ.get("NCCL_NVLS_ENABLE")}; each figure the slowest rank\'s median, ms)', file=out)
    print(f'gradients: {rows[0]["kernel"]}', file=out)
    head = ('buckets', 'bucket', 'serial', 'overlapped', 'compute', 'allreduce', 'exposed', 'exposed%', 'profiler', 'busbw GB/s', 'check')
    print(' '.join(f'{h:>10}' for h in head), file=out)
    for r in rows:
        cells = (r['buckets'], f'{r["bucketBytes"] / 2**20:g} MiB', f'{r["serial"]:.3f}', f'{r["overlapped"]:.3f}',
                 f'{r["compute"]:.3f}', f'{r["allreduce"]:.3f}', f'{r["exposed"]:.3f}',
                 f'{100 * r["exposed"] / r["allreduce"]:.1f}%',
                 '-' if r['profiled'] is None else f'{r["profiled"]:.3f}', f'{r["busbw"]:.1f}',
                 'ok' if r['check'] else 'FAILED')
        print(' '.join(f'{c:>10}' for c in cells), file=out)


if __name__ == '__main__':
    main()
