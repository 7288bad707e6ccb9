"""PyTorch's side of the GEMM comparison (issue 17): COUNT products C = A @ B of M x K by K x N in one dtype, issued
round-robin over STREAMS torch.cuda.Stream s, timed with CUDA events from one start every stream waits on to one end
after every stream joined back; median of REPS after WARMUP, as one JSON line. The same shapes, data rule and streams
as scripts/native/gemm.cu, so the two lines compare directly.

Usage: python3 scripts/torch/gemm.py [--dtype bf16] [--size 4096 | --m --n --k] [--count 16] [--streams 4] [--reps 10]
       [--warmup 3] [--data pattern|zeros] [--shared-b] [--graph]"""
import argparse
import statistics

import torch

from common import DTYPES, fork, join, pattern, report, set_matmul_precision, time_steps


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--dtype', choices=sorted(DTYPES), default='bf16')
    parser.add_argument('--size', type=int)
    parser.add_argument('--m', type=int, default=4096)
    parser.add_argument('--n', type=int, default=4096)
    parser.add_argument('--k', type=int, default=4096)
    parser.add_argument('--count', type=int, default=16)
    parser.add_argument('--streams', type=int, default=4)
    parser.add_argument('--reps', type=int, default=10)
    parser.add_argument('--warmup', type=int, default=3)
    parser.add_argument('--data', choices=['pattern', 'zeros'], default='pattern')
    parser.add_argument('--shared-b', action='store_true', help='one B for every product (resident weights)')
    parser.add_argument('--graph', action='store_true', help='capture one step as a CUDA graph and replay it')
    args = parser.parse_args()
    m, n, k = (args.size,) * 3 if args.size else (args.m, args.n, args.k)
    set_matmul_precision(args.dtype)
    dtype = DTYPES[args.dtype]

    def operand(shape, seed):
        return pattern(shape, dtype, seed) if args.data == 'pattern' else torch.zeros(shape, dtype=dtype, device='cuda')

    a = [operand((m, k), 2 * i + 1) for i in range(args.count)]
    b = [operand((k, n), 2 * i + 2) for i in range(1 if args.shared_b else args.count)]
    c = [torch.empty((m, n), dtype=dtype, device='cuda') for _ in range(args.count)]
    streams = [torch.cuda.Stream() for _ in range(args.streams)]
    torch.cuda.synchronize()

    def body():
        fork(streams)
        for i in range(args.count):
            with torch.cuda.stream(streams[i % args.streams]):
                torch.mm(a[i], b[0 if args.shared_b else i], out=c[i])
        join(streams)

    step = body
    if args.graph:
        # Run once outside the capture first: cuBLAS sets up each stream's handle and workspace on first use.
        with torch.cuda.stream(streams[0]):
            body()
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=streams[0]):
            body()
        torch.cuda.synchronize()

        def step():
            with torch.cuda.stream(streams[0]):
                graph.replay()

    samples = time_steps(step, streams[0], args.warmup, args.reps)
    median = statistics.median(samples)
    config = {'dtype': args.dtype, 'm': m, 'n': n, 'k': k, 'count': args.count, 'streams': args.streams,
              'issue': 'graph' if args.graph else 'stream', 'data': args.data, 'sharedB': args.shared_b,
              'warmup': args.warmup, 'reps': args.reps}
    report('torch-gemm', config, samples, tflops=round(2 * m * n * k * args.count / (median * 1e-3) / 1e12, 1))


if __name__ == '__main__':
    main()
