"""The seeds' multi-stream inference pipeline written in PyTorch, the way a user would (issue 17, section 4): BATCHES
batches of ROWS activations of IN features each, in pinned host memory, go round-robin over STREAMS torch.cuda.Stream s:
H2D, a dense layer with resident weights (x @ W1^T), bias and activation (ReLU), a second dense layer (h @ W2^T), and
D2H of the OUT-feature outputs (smaller than the inputs). A step is every batch once, timed with CUDA events; prints
the median ms per step as one JSON line. Run with --streams 1 for the serial figure.

Usage: python3 scripts/torch/inference.py [--batches 16] [--rows 512] [--in-features 4096] [--hidden 4096]
       [--out-features 1000] [--streams 4] [--dtype bf16] [--reps 20] [--warmup 3] [--check] [--trace FILE]
       [--grid]"""
import argparse

import torch
from torch.profiler import ProfilerActivity, profile

from common import DTYPES, fork, gzip_trace, join, pattern, report, set_matmul_precision, time_steps


GRID_BATCHES = [1, 2, 4, 8, 16, 32]
GRID_STREAMS = [1, 2, 4, 8]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--batches', type=int, default=16)
    parser.add_argument('--rows', type=int, default=512, help='items per batch')
    parser.add_argument('--in-features', type=int, default=4096)
    parser.add_argument('--hidden', type=int, default=4096)
    parser.add_argument('--out-features', type=int, default=1000)
    parser.add_argument('--streams', type=int, default=4)
    parser.add_argument('--dtype', choices=sorted(DTYPES), default='bf16', help='of activations, weights and outputs')
    parser.add_argument('--reps', type=int, default=20)
    parser.add_argument('--warmup', type=int, default=3)
    parser.add_argument('--check', action='store_true', help='compare every output with a single-stream run')
    parser.add_argument('--trace', help='after timing, profile 3 steps with torch.profiler into this Kineto trace (gzipped beside it)')
    parser.add_argument('--grid', action='store_true',
                        help='every layout of batches 1..32 and streams 1..8 (streams <= batches) over batches x rows items, '
                             'in one process: one JSON line each')
    args = parser.parse_args()
    set_matmul_precision(args.dtype)
    if args.grid:
        items = args.batches * args.rows
        for batches in GRID_BATCHES:
            for streams in (s for s in GRID_STREAMS if s <= batches):
                measure(args, batches, items // batches, streams)
    else:
        measure(args, args.batches, args.rows, args.streams)


def measure(args, batches, rows, n_streams):
    dtype = DTYPES[args.dtype]
    inputs = [pattern((rows, args.in_features), dtype, 100 + i, device='cpu', pin=True) for i in range(batches)]
    outputs = [torch.empty((rows, args.out_features), dtype=dtype).pin_memory() for _ in range(batches)]
    # Resident weights, copied once before timing; scaled so that activations stay of order one through both layers.
    w1 = pattern((args.hidden, args.in_features), dtype, 1) * (args.in_features ** -0.5)
    b1 = pattern((args.hidden,), dtype, 2)
    w2 = pattern((args.out_features, args.hidden), dtype, 3) * (args.hidden ** -0.5)
    streams = [torch.cuda.Stream() for _ in range(n_streams)]
    # One device input buffer per stream: a stream's batches reuse it in stream order.
    device_inputs = [torch.empty((rows, args.in_features), dtype=dtype, device='cuda') for _ in streams]
    torch.cuda.synchronize()

    def step():
        fork(streams)
        for i in range(batches):
            stream = streams[i % len(streams)]
            with torch.cuda.stream(stream):
                x = device_inputs[i % len(streams)]
                x.copy_(inputs[i], non_blocking=True)
                h = torch.relu_(torch.nn.functional.linear(x, w1, b1))
                y = torch.nn.functional.linear(h, w2)
                outputs[i].copy_(y, non_blocking=True)
        join(streams)

    samples = time_steps(step, streams[0], args.warmup, args.reps)
    if args.trace:
        # Profiled apart from the timed steps, so the profiler's own cost is in no sample.
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(3):
                step()
            torch.cuda.synchronize()
        prof.export_chrome_trace(args.trace)
        gzip_trace(args.trace)
    extra = {}
    if args.check:
        overlapped = [o.clone() for o in outputs]
        for i in range(batches):
            x = inputs[i].to('cuda')
            outputs[i].copy_(torch.nn.functional.linear(torch.relu_(torch.nn.functional.linear(x, w1, b1)), w2))
        torch.cuda.synchronize()
        extra['maxAbsDiffFromSerial'] = max(float((a.float() - b.float()).abs().max()) for a, b in zip(overlapped, outputs))
    config = {'batches': batches, 'rows': rows, 'inFeatures': args.in_features, 'hidden': args.hidden,
              'outFeatures': args.out_features, 'streams': n_streams, 'dtype': args.dtype, 'warmup': args.warmup,
              'reps': args.reps}
    element = torch.tensor([], dtype=dtype).element_size()
    report('torch-inference', config, samples,
           h2dBytesPerStep=batches * rows * args.in_features * element,
           d2hBytesPerStep=batches * rows * args.out_features * element,
           gemmFlopsPerStep=2 * batches * rows * args.hidden * (args.in_features + args.out_features), **extra)


if __name__ == '__main__':
    main()
