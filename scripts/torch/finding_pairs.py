"""Pairs of PyTorch programs, one per finding of `cuda-pipe analyze`: each pattern as a program has it (the problem)
and the same work with the finding's advice applied (the fix). Each variant is timed with CUDA events (median of
ROUNDS rounds of STEPS steps, the two variants taking turns and swapping who goes first each round, so drift between
them cancels), and profiled with torch.profiler into a Kineto trace of PROFILED steps (10 by default: the profiled
step of a host-heavy pattern moves from run to run, so a few steps say little). `analyze` predicts, from the
problem's trace alone, what the fix saves a step; the measured saving is the problem's median step minus the fix's.
scripts/bench/finding-pairs.mjs compares the two.

  pageable          a 64 MiB H2D from pageable memory, then compute, then a pinned D2H; fix: the H2D from pinned memory
  default_stream    the next batch's H2D on a blocking stream (cudaStreamCreate, as CUDA C++ and CuPy make them) and the
                    compute on the legacy default stream, which the blocking stream synchronises with; fix: the compute
                    on a PyTorch stream (non-blocking)
  default_torch     compute on the default stream beside PyTorch's own (non-blocking) copy stream; fix: the compute on a
                    stream of its own. Nothing waits on the default stream here: the finding must stay silent
  serialised        64 H2D copies of 256 KiB on two streams, each waiting for the other's last (an event chain), held
                    behind a few ms of compute so that the host has issued them all before they run; fix: no waits
                    between the two streams; the link has room (small copies run below its rate)
  serialised_full   two 32 MiB H2D copies on two streams, which the copy engines run one after the other at the link's
                    full rate; fix: one 64 MiB copy on one stream. Nothing to gain: the finding must stay silent
  copy_on_compute   compute, then the next batch's H2D on the compute stream, then compute on it and the D2H of the
                    result; fix: the same calls in the same order with the copies on streams of their own and events
  host_sync         four times a step: a reduction read back with .item() (a synchronize), then 20 tiny kernels and three
                    matrix products (the GPU's work outlasts the host's, so without the synchronize the GPU never
                    waits); fix: the reduction kept on the GPU (no .item())
  host_bound        1,000 tiny kernels a step; fix: the same kernels captured once in a CUDA graph and replayed

Usage: python3 scripts/torch/finding_pairs.py OUT [--only a,b] [--rounds 3] [--steps 20] [--profiled 10]
Writes OUT/<pattern>-problem.pt.trace.json.gz and OUT/<pattern>-fix.pt.trace.json.gz, and prints one JSON line per
pattern (each variant's median step, its samples, the device) on stdout. The data-parallel pair (exposed
communication) is scripts/torch/ddp_overlap.py --no-overlap against --overlap."""
import argparse
import ctypes
import json
import os
import statistics
import sys

import torch
from torch.profiler import ProfilerActivity, profile, schedule

from common import gzip_trace

SIDE = 2048


def blocking_stream(device):
    """A stream made by cudaStreamCreate with no flags: it synchronises with the legacy default stream, as streams
    of CUDA C++ programs and CuPy's default ones do. PyTorch's own streams are created non-blocking."""
    try:
        import cupy
        with cupy.cuda.Device(device.index):
            stream = cupy.cuda.Stream(non_blocking=False)
        return torch.cuda.ExternalStream(stream.ptr, device=device), stream
    except ImportError:
        pass
    for name in ('libcudart.so.13', 'libcudart.so.12', 'libcudart.so'):
        try:
            cudart = ctypes.CDLL(name)
            break
        except OSError:
            continue
    else:
        raise RuntimeError('no CuPy and no libcudart to create a blocking stream')
    handle = ctypes.c_void_p()
    status = cudart.cudaStreamCreate(ctypes.byref(handle))
    if status != 0:
        raise RuntimeError(f'cudaStreamCreate failed: {status}')
    return torch.cuda.ExternalStream(handle.value, device=device), cudart


class Patterns:
    def __init__(self, mib, device):
        self.device = device
        n = mib * 2**20 // 4
        self.n = n
        self.weights = torch.randn(SIDE, SIDE, device=device) / SIDE**0.5
        self.compute = torch.cuda.Stream()
        self.h2d = torch.cuda.Stream()
        self.d2h = torch.cuda.Stream()
        self.second = torch.cuda.Stream()
        self.tiny = torch.zeros(256, device=device)
        self.pinned_in = [torch.randn(n).pin_memory() for _ in range(2)]
        self.pageable_in = torch.randn(n)
        self.pinned_out = torch.empty(SIDE * SIDE).pin_memory()
        self.on_device = [torch.randn(n, device=device) for _ in range(2)]
        self.blocking, self._keep = blocking_stream(device)
        self.graph = None

    def streams(self):
        return [self.compute, self.h2d, self.d2h, self.second, self.blocking]

    def work(self, x, products=8):
        a = x[: SIDE * SIDE].view(SIDE, SIDE)
        for _ in range(products):
            a = torch.tanh(a @ self.weights)
        return a

    # pageable ---------------------------------------------------------------------------------------------------
    def pageable(self, fixed):
        source = self.pinned_in[0] if fixed else self.pageable_in

        def step(i):
            cur = self.on_device[0]
            with torch.cuda.stream(self.compute):
                cur.copy_(source, non_blocking=True)
                y = self.work(cur)
                self.pinned_out.copy_(y.flatten(), non_blocking=True)
        return step

    # default stream ---------------------------------------------------------------------------------------------
    def default_stream(self, fixed):
        def step(i):
            cur, nxt = self.on_device[i % 2], self.on_device[(i + 1) % 2]
            with torch.cuda.stream(self.blocking):
                nxt.copy_(self.pinned_in[(i + 1) % 2], non_blocking=True)
            if fixed:
                with torch.cuda.stream(self.compute):
                    self.work(cur)
            else:
                with torch.cuda.stream(torch.cuda.default_stream(self.device)):
                    self.work(cur)
        return step

    def default_torch(self, fixed):
        def step(i):
            cur, nxt = self.on_device[i % 2], self.on_device[(i + 1) % 2]
            with torch.cuda.stream(self.h2d):
                nxt.copy_(self.pinned_in[(i + 1) % 2], non_blocking=True)
            stream = self.compute if fixed else torch.cuda.default_stream(self.device)
            with torch.cuda.stream(stream):
                self.work(cur)
        return step

    # serialised copies ------------------------------------------------------------------------------------------
    def serialised(self, fixed):
        pieces = 64
        piece = 256 * 1024 // 4
        dst = self.on_device[0]
        src = self.pinned_in[0]

        def step(i):
            # A gate: the copy streams wait for about 8 ms of compute, so that the host has issued every copy and wait
            # before the first copy runs (under the profiler too, whose host calls are slower), and the copies' time
            # on the GPU is theirs, not the host's.
            with torch.cuda.stream(self.compute):
                self.work(self.on_device[1], products=24)
            self.h2d.wait_stream(self.compute)
            self.second.wait_stream(self.compute)
            streams = (self.h2d, self.second)
            for k in range(pieces):
                stream, other = streams[k % 2], streams[(k + 1) % 2]
                with torch.cuda.stream(stream):
                    dst[k * piece:(k + 1) * piece].copy_(src[k * piece:(k + 1) * piece], non_blocking=True)
                if not fixed:
                    other.wait_stream(stream)
            self.compute.wait_stream(self.h2d)
            self.compute.wait_stream(self.second)
            with torch.cuda.stream(self.compute):
                self.work(dst, products=2)
        return step

    def serialised_full(self, fixed):
        half = self.n // 4
        dst = self.on_device[0]
        src = self.pinned_in[0]

        def step(i):
            if fixed:
                with torch.cuda.stream(self.h2d):
                    dst[: 2 * half].copy_(src[: 2 * half], non_blocking=True)
            else:
                with torch.cuda.stream(self.h2d):
                    dst[:half].copy_(src[:half], non_blocking=True)
                with torch.cuda.stream(self.second):
                    dst[half:2 * half].copy_(src[half:2 * half], non_blocking=True)
            self.compute.wait_stream(self.h2d)
            self.compute.wait_stream(self.second)
            with torch.cuda.stream(self.compute):
                self.work(dst, products=2)
        return step

    # copy on the compute stream ---------------------------------------------------------------------------------
    def copy_on_compute(self, fixed):
        def step(i):
            cur, nxt = self.on_device[0], self.on_device[1]
            if not fixed:
                with torch.cuda.stream(self.compute):
                    self.work(cur)
                    nxt.copy_(self.pinned_in[1], non_blocking=True)
                    y = self.work(nxt)
                    self.pinned_out.copy_(y.flatten(), non_blocking=True)
                return
            with torch.cuda.stream(self.compute):
                self.work(cur)
            with torch.cuda.stream(self.h2d):
                nxt.copy_(self.pinned_in[1], non_blocking=True)
            self.compute.wait_stream(self.h2d)
            with torch.cuda.stream(self.compute):
                y = self.work(nxt)
            self.d2h.wait_stream(self.compute)
            with torch.cuda.stream(self.d2h):
                self.pinned_out.copy_(y.flatten(), non_blocking=True)
        return step

    # host sync --------------------------------------------------------------------------------------------------
    def host_sync(self, fixed):
        def step(i):
            x = self.on_device[0]
            with torch.cuda.stream(self.compute):
                for _ in range(4):
                    total = x[:4096].sum()
                    if not fixed:
                        total.item()
                    for _ in range(20):
                        self.tiny.add_(1.0)
                    self.work(x, products=3)
        return step

    # host bound -------------------------------------------------------------------------------------------------
    def host_bound(self, fixed):
        def body():
            for _ in range(1000):
                self.tiny.add_(1.0)

        if fixed and self.graph is None:
            self.compute.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(self.compute):
                body()  # warm up before the capture
            torch.cuda.synchronize()
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph, stream=self.compute):
                body()
            torch.cuda.synchronize()

        def step(i):
            with torch.cuda.stream(self.compute):
                if fixed:
                    self.graph.replay()
                else:
                    body()
        return step


NAMES = ['pageable', 'default_stream', 'default_torch', 'serialised', 'serialised_full', 'copy_on_compute',
         'host_sync', 'host_bound']


def timed(patterns, step, steps, warmup=3):
    """Each step from an event on the current stream, which every stream waits on, to one after every stream
    joined back; synchronised after each step, as a training loop's step that reads its loss back is."""
    here = torch.cuda.current_stream()
    samples = []
    for i in range(warmup + steps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record(here)
        for s in patterns.streams():
            s.wait_stream(here)
        step(i)
        for s in patterns.streams():
            here.wait_stream(s)
        end.record(here)
        end.synchronize()
        if i >= warmup:
            samples.append(start.elapsed_time(end))
    return samples


def profiled(patterns, step, steps, path):
    here = torch.cuda.current_stream()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=0, warmup=1, active=steps, repeat=1),
                 on_trace_ready=lambda p: p.export_chrome_trace(path)) as prof:
        for i in range(steps + 1):
            for s in patterns.streams():
                s.wait_stream(here)
            step(i)
            for s in patterns.streams():
                here.wait_stream(s)
            torch.cuda.synchronize()
            prof.step()
    gzip_trace(path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('out')
    parser.add_argument('--only', default='')
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--steps', type=int, default=20)
    parser.add_argument('--profiled', type=int, default=10)
    parser.add_argument('--mib', type=int, default=64)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    device = torch.device('cuda', 0)
    torch.cuda.set_device(device)
    torch.set_float32_matmul_precision('highest')
    patterns = Patterns(args.mib, device)
    only = [p for p in args.only.split(',') if p]
    for name in [n for n in NAMES if not only or n in only]:
        try:
            variants = {'problem': getattr(patterns, name)(False), 'fix': getattr(patterns, name)(True)}
            samples = {'problem': [], 'fix': []}
            for r in range(args.rounds):
                order = ['problem', 'fix'] if r % 2 == 0 else ['fix', 'problem']
                for v in order:
                    samples[v] += timed(patterns, variants[v], args.steps)
            for v in ('problem', 'fix'):
                profiled(patterns, variants[v], args.profiled, os.path.join(args.out, f'{name}-{v}.pt.trace.json'))
            medians = {v: statistics.median(samples[v]) for v in samples}
            print(json.dumps({'pattern': name, 'device': torch.cuda.get_device_name(device), 'torch': torch.__version__,
                              'problemMs': round(medians['problem'], 4), 'fixMs': round(medians['fix'], 4),
                              'savedMs': round(medians['problem'] - medians['fix'], 4),
                              'problemSamplesMs': [round(s, 4) for s in samples['problem']],
                              'fixSamplesMs': [round(s, 4) for s in samples['fix']]}), flush=True)
        except Exception as error:  # one pattern's failure must not lose the others' results
            print(json.dumps({'pattern': name, 'error': repr(error)}), flush=True)
            print(f'{name}: {error!r}', file=sys.stderr)


if __name__ == '__main__':
    main()
