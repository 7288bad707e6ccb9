"""cuda-pipe's configs/balanced.yaml written in PyTorch, profiled for `cuda-pipe analyze` (issue 27), so that analyze
of this program's Kineto trace can be set against `cuda-pipe run configs/balanced.yaml` on the same GPU. The same
sizes, chunks and streams as balanced.yaml: 256 MiB of float32 in pinned host memory, 16 chunks round-robin over 4
streams (chunk i on stream i mod 4, cuda-pipe's chunk-per-stream), issued depth-first (per chunk: H2D, kernel, D2H),
into a pinned 256 MiB output.

The kernel is kernels/fma_loop.cu's arithmetic, out = x after ITERATIONS (1060) dependent __fmaf_rn(x, 0.999f,
0.001f), compiled with NVRTC through torch.cuda.jiterator, one launch a chunk, checked on a few values against the
same loop in float64 on the host. Differences from fma_loop.cu: jiterator's elementwise kernel picks its own grid and
block and vectorises its loads (fma_loop is grid-stride, block 256, grid auto), and it allocates each chunk's output
from PyTorch's caching allocator on the chunk's stream instead of writing a resident output buffer; the FMAs and bytes
per element are the same. Where jiterator fails, an EAGER STAND-IN runs the loop as x.mul_(0.999).add_(0.001),
2 x ITERATIONS memory-bound launches a chunk, far slower than fma_loop, and every output line says so.

Timed with CUDA events (common.time_steps: median of --reps after --warmup, unprofiled), then torch.profiler (CPU and
CUDA) takes one warm-up step and --steps active ones, each closed by prof.step() (ProfilerStep#N) and by a wait on
the step's end event. Writes OUT/balanced-torch.pt.trace.json.gz and prints one JSON line (common.report) with the
unprofiled median and the profiled steps' times, and a check that sampled outputs equal the kernel on those inputs
(each chunk copied in, computed and copied back to its place).

Usage: python3 scripts/torch/balanced_pipeline.py OUT [--mib 256] [--chunks 16] [--streams 4] [--iterations 1060]
       [--steps 5] [--reps 20] [--warmup 3]"""
import argparse
import os

import torch
from torch.profiler import ProfilerActivity, profile, schedule

from common import fork, gzip_trace, join, pattern, report, time_steps

FMA_LOOP = """
template <typename T> T fma_loop(T x, int iterations) {
    float y = x;
    for (int k = 0; k < iterations; ++k) y = __fmaf_rn(y, 0.999f, 0.001f);
    return y;
}
"""


def fma_kernel(iterations):
    """fma_loop's arithmetic through jiterator, checked against the loop in float64 on the host; else the eager
    stand-in. Returns (fn, note)."""
    try:
        fn = torch.cuda.jiterator._create_jit_fn(FMA_LOOP, iterations=iterations)
        probe = torch.tensor([0.5, -0.25, 0.0, 1.0], device='cuda')
        got = fn(probe, iterations=iterations).cpu().double()
        expected = probe.cpu().double()
        for _ in range(iterations):
            expected = expected * 0.999 + 0.001
        # float32 rounding once an FMA stays far inside 1e-3 of float64 (the map contracts by 0.999 a step); a
        # kernel without the loop, or with the wrong constants, is far outside it.
        if not torch.allclose(got, expected, rtol=1e-3, atol=1e-5):
            raise RuntimeError(f'jiterator kernel gave {got.tolist()}, the loop {expected.tolist()}')
        return (lambda x: fn(x, iterations=iterations)), 'jiterator (NVRTC): fma_loop.cu arithmetic, one launch a chunk'
    except Exception as error:  # noqa: BLE001 - any failure means the stand-in, said in every line
        def eager(x):
            y = x.clone()
            for _ in range(iterations):
                y.mul_(0.999).add_(0.001)
            return y
        return eager, (f'EAGER STAND-IN, not fma_loop.cu\'s cost ({2 * iterations} elementwise launches a chunk, '
                       f'memory-bound): jiterator failed: {error}')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('out', help='folder for the trace')
    parser.add_argument('--mib', type=int, default=256, help="input and output size (balanced.yaml's 256MiB)")
    parser.add_argument('--chunks', type=int, default=16)
    parser.add_argument('--streams', type=int, default=4)
    parser.add_argument('--iterations', type=int, default=1060, help="fma_loop's iterations argument")
    parser.add_argument('--steps', type=int, default=5, help='profiled steps (after one profiler warm-up step)')
    parser.add_argument('--reps', type=int, default=20, help='unprofiled timed steps')
    parser.add_argument('--warmup', type=int, default=3)
    args = parser.parse_args()
    elements = args.mib * 2**20 // 4
    if args.chunks < 1 or args.streams < 1 or elements % args.chunks:
        parser.error(f'--chunks {args.chunks} must divide {elements} elements, and --streams be at least 1')
    os.makedirs(args.out, exist_ok=True)
    chunk = elements // args.chunks

    kernel, kernel_note = fma_kernel(args.iterations)
    # balanced.yaml's input is seeded random; these are common.pattern's seeded values, not cuda-pipe's bits.
    host_in = pattern((elements,), torch.float32, 1, device='cpu', pin=True)
    host_out = torch.empty(elements, dtype=torch.float32).pin_memory()
    device_in = torch.empty(elements, dtype=torch.float32, device='cuda')
    streams = [torch.cuda.Stream() for _ in range(args.streams)]
    torch.cuda.synchronize()

    def step():
        fork(streams)
        for c in range(args.chunks):
            part = slice(c * chunk, (c + 1) * chunk)
            with torch.cuda.stream(streams[c % len(streams)]):
                device_in[part].copy_(host_in[part], non_blocking=True)
                result = kernel(device_in[part])
                host_out[part].copy_(result, non_blocking=True)
        join(streams)

    unprofiled = time_steps(step, streams[0], args.warmup, args.reps)
    profiled = profiled_steps(step, streams[0], args)
    check = output_check(kernel, host_in, host_out)
    config = {'mib': args.mib, 'chunks': args.chunks, 'streams': args.streams, 'order': 'depth-first',
              'topology': 'chunk-per-stream', 'iterations': args.iterations, 'hostMemory': 'pinned',
              'warmup': args.warmup, 'reps': args.reps, 'kernel': kernel_note}
    report('torch-balanced', config, unprofiled, profiledStepsMs=[round(s, 4) for s in profiled],
           trace='balanced-torch.pt.trace.json.gz', **check)


def profiled_steps(step, first_stream, args):
    """One profiler cycle (a warm-up step, then --steps active), exported when it ends, then gzip-compressed."""
    path = os.path.join(args.out, 'balanced-torch.pt.trace.json')
    samples = []
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=0, warmup=1, active=args.steps, repeat=1),
                 on_trace_ready=lambda p: p.export_chrome_trace(path),
                 record_shapes=False, with_stack=False, profile_memory=False) as prof:
        for i in range(args.steps + 1):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record(first_stream)
            step()
            end.record(first_stream)
            end.synchronize()
            if i > 0:
                samples.append(start.elapsed_time(end))
            prof.step()
    gzip_trace(path)
    return samples


def output_check(kernel, host_in, host_out):
    """Every 65,536th output against the same kernel run once on those inputs: bitwise equal when each chunk went in,
    through the kernel and back to its own place."""
    index = torch.arange(0, host_in.numel(), 65536)
    expected = kernel(host_in[index].to('cuda')).cpu()
    got = host_out[index]
    return {'outputCheckPassed': bool(torch.equal(got, expected)), 'outputCheckSamples': int(index.numel()),
            'outputCheckMismatches': int((got != expected).sum())}


if __name__ == '__main__':
    main()
