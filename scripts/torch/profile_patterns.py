"""PyTorch programs, each showing one pattern that `cuda-pipe analyze` (issue 27) should find, profiled with
torch.profiler into Kineto Chrome traces (gzip-compressed), a few steps each, small enough to commit as fixtures:

  overlapped   H2D of the next batch (pinned, its own stream) while the compute stream multiplies this batch; D2H of
               the result on a third stream behind an event
  pageable     the same step, but the H2D from pageable memory on the compute stream
  sync         a torch.cuda.synchronize() in the middle of each step, then more work
  serial       copies and compute all on one stream (nothing can overlap)
  host_bound   a thousand tiny kernels a step, each shorter than its launch: the GPU waits on the host
  serialised   two H2D copies issued at once on two streams, then the compute that needs both

Usage: python3 scripts/torch/profile_patterns.py OUT [--steps 4] [--mib 64] [--only host_bound,serialised]
Writes OUT/<pattern>.pt.trace.json.gz and prints, per pattern, the step time (CUDA events, median of the profiled
steps) on stdout as one JSON line."""
import argparse
import json
import os
import statistics

import torch
from torch.profiler import ProfilerActivity, profile, schedule

from common import gzip_trace


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--mib", type=int, default=64)
    parser.add_argument("--only", default="", help="comma-separated pattern names (default: every pattern)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    n = args.mib * 2**20 // 4
    side = 2048
    device = torch.device("cuda")
    weights = torch.randn(side, side, device=device)
    compute = torch.cuda.Stream()
    h2d = torch.cuda.Stream()
    d2h = torch.cuda.Stream()
    h2d_second = torch.cuda.Stream()
    tiny = torch.zeros(256, device=device)
    pinned_in = [torch.randn(n).pin_memory() for _ in range(2)]
    pageable_in = torch.randn(n)
    pinned_out = torch.empty(n).pin_memory()
    on_device = [torch.empty(n, device=device) for _ in range(2)]

    def work(x):
        # A few matrix products over a slice of the batch: compute of a step, milliseconds long.
        a = x[: side * side].view(side, side)
        for _ in range(8):
            a = torch.tanh(a @ weights)
        return a

    def overlapped(step):
        cur, nxt = on_device[step % 2], on_device[(step + 1) % 2]
        with torch.cuda.stream(h2d):
            nxt.copy_(pinned_in[(step + 1) % 2], non_blocking=True)
        loaded = torch.cuda.Event()
        loaded.record(h2d)
        with torch.cuda.stream(compute):
            y = work(cur)
            done = torch.cuda.Event()
            done.record(compute)
        with torch.cuda.stream(d2h):
            d2h.wait_event(done)
            pinned_out[: side * side].copy_(y.flatten(), non_blocking=True)
        compute.wait_event(loaded)

    def pageable(step):
        cur = on_device[0]
        with torch.cuda.stream(compute):
            cur.copy_(pageable_in, non_blocking=True)
            y = work(cur)
            pinned_out[: side * side].copy_(y.flatten(), non_blocking=True)

    def sync(step):
        cur = on_device[0]
        with torch.cuda.stream(compute):
            cur.copy_(pinned_in[0], non_blocking=True)
            y = work(cur)
        torch.cuda.synchronize()
        with torch.cuda.stream(compute):
            y = work(y.flatten())
            pinned_out[: side * side].copy_(y.flatten(), non_blocking=True)

    def serial(step):
        cur = on_device[0]
        cur.copy_(pinned_in[0], non_blocking=True)
        y = work(cur)
        pinned_out[: side * side].copy_(y.flatten(), non_blocking=True)

    def host_bound(step):
        with torch.cuda.stream(compute):
            for _ in range(1000):
                tiny.add_(1.0)

    def serialised(step):
        half = n // 2
        with torch.cuda.stream(h2d):
            on_device[0][:half].copy_(pinned_in[0][:half], non_blocking=True)
        with torch.cuda.stream(h2d_second):
            on_device[0][half:].copy_(pinned_in[0][half:], non_blocking=True)
        compute.wait_stream(h2d)
        compute.wait_stream(h2d_second)
        with torch.cuda.stream(compute):
            y = work(on_device[0])
            pinned_out[: side * side].copy_(y.flatten(), non_blocking=True)

    patterns = [("overlapped", overlapped), ("pageable", pageable), ("sync", sync), ("serial", serial),
                ("host_bound", host_bound), ("serialised", serialised)]
    only = [p for p in args.only.split(",") if p]
    for name, body in [(name, body) for name, body in patterns if not only or name in only]:
        for step in range(3):
            body(step)
        torch.cuda.synchronize()
        times = []
        path = os.path.join(args.out, f"{name}.pt.trace.json")
        # One cycle (a warm-up step, then the active ones), exported when it ends: a trace exported after the
        # context closes holds only the next, empty cycle.
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                     schedule=schedule(wait=0, warmup=1, active=args.steps, repeat=1),
                     on_trace_ready=lambda p, path=path: p.export_chrome_trace(path)) as prof:
            for step in range(args.steps + 1):
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                body(step)
                torch.cuda.current_stream().wait_stream(compute)
                torch.cuda.current_stream().wait_stream(h2d)
                torch.cuda.current_stream().wait_stream(d2h)
                torch.cuda.current_stream().wait_stream(h2d_second)
                end.record()
                torch.cuda.synchronize()
                if step > 0:
                    times.append(start.elapsed_time(end))
                prof.step()
        gzip_trace(path)
        print(json.dumps({"pattern": name, "steps": len(times), "stepMedianMs": round(statistics.median(times), 4),
                          "trace": os.path.basename(path) + ".gz", "device": torch.cuda.get_device_name()}), flush=True)


if __name__ == "__main__":
    main()
