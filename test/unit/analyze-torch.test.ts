import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { analyzeTraces } from '../../src/analysis/analyze.js';
import type { AnalysisDocument } from '../../src/analysis/document.js';
import { parseTraceFile } from '../../src/traces/parse.js';
import { packageRoot } from '../../src/paths.js';

// Real PyTorch profiler traces: scripts/torch/profile_patterns.py on one H100, four profiled steps each
// (docs/measurements/2026-11-26-h100-first-hour/second/, whose log.txt gives each program's step by CUDA events;
// host-bound and serialised from docs/measurements/2026-11-26-h100-patterns-2/).

// parseTraceFile streams, so is async: each trace is read once, up front.
const NAMES = ['overlapped', 'pageable', 'serial', 'sync', 'host-bound', 'serialised'];
const parsed = new Map(
  await Promise.all(
    NAMES.map(
      async (name) =>
        [
          name,
          await parseTraceFile(
            join(packageRoot(), 'test', 'fixtures', 'analyze', 'torch-h100', `${name}.pt.trace.json.gz`),
          ),
        ] as const,
    ),
  ),
);
const analyse = (name: string): AnalysisDocument =>
  analyzeTraces([parsed.get(name)!], { rates: null, toolVersion: 'test' });

describe('analyze on PyTorch profiler traces from an H100', () => {
  it('takes a step from the work launched within it, widened by its GPU annotations: within 5% of the step CUDA events timed', () => {
    const [device] = analyse('overlapped').devices;
    assert.equal(device?.steps.length, 4);
    // CUDA events gave 3.340 ms a step; the H2D stream's annotation alone spans 1.22 ms of it.
    assert.ok(device && Math.abs(device.stepMs - 3.3403) / 3.3403 < 0.05, `${device?.stepMs} ms a step`);
  });

  it('finds the pageable copy and the mid-step synchronize, and not the default stream where nothing waited on it', () => {
    const codes = (name: string) => analyse(name).findings.map((f) => f.code);
    assert.ok(codes('pageable').includes('pageable-copy'), codes('pageable').join(', '));
    assert.ok(codes('sync').includes('host-sync'), codes('sync').join(', '));
    // Everything on the default stream: no other stream waited on it, and on one other stream it would run the same.
    assert.ok(!codes('serial').includes('default-stream'), codes('serial').join(', '));
    assert.ok(
      !codes('overlapped').includes('pageable-copy') && !codes('overlapped').includes('default-stream'),
      codes('overlapped').join(', '),
    );
  });

  it('finds a thousand tiny kernels a step host-bound, and not two H2D copies at the link rate serialised', () => {
    // host-bound: 12.97 ms a step by CUDA events, its 1,000 kernels 1.2 ms of it. serialised: two 32 MiB H2D copies
    // issued at once on two streams, the second starting when the first ended, each at the link's full rate: run at
    // once they would share the link and end no sooner (patterns-2/*.analyze.txt).
    const top = (name: string) => analyse(name).findings[0];
    assert.equal(top('host-bound')?.code, 'host-bound');
    assert.ok((top('host-bound')?.ms ?? 0) > 10, `${top('host-bound')?.ms} ms saved`);
    assert.ok(!analyse('serialised').findings.some((f) => f.code === 'serialised-copies'));
    assert.ok(!analyse('overlapped').findings.some((f) => f.code === 'serialised-copies'));
  });
});

// Two ranks of DistributedDataParallel with bucketed all-reduce on two H100s (scripts/torch/ddp_overlap.py --overlap,
// docs/measurements/2026-11-26-h100x2-analyze/): the program's own CUDA events gave 16.166 ms a step.
const ddp = await Promise.all(
  [0, 1].map((rank) =>
    parseTraceFile(
      join(packageRoot(), 'test', 'fixtures', 'analyze', 'torch-h100x2-ddp', `overlap-rank${rank}.pt.trace.json.gz`),
    ),
  ),
);

describe('analyze on a two-rank DDP trace from two H100s', () => {
  const document = analyzeTraces(ddp, { rates: null, toolVersion: 'test' });

  it("takes the step from its launches where Kineto's step annotation holds only the kernels no inner annotation took", () => {
    // The GPU annotation ProfilerStep#N spans 17 µs: Kineto gives each kernel to the innermost annotation
    // (DistributedDataParallel.forward, nccl:all_reduce, Optimizer.step), and only a few are left to the step.
    for (const device of document.devices) {
      assert.equal(device.steps.length, 5);
      assert.ok(device.stepMs > 15 && device.stepMs < 16.2, `rank ${device.rank}: ${device.stepMs} ms a step`);
    }
  });

  it("gives each rank's NCCL overlap as the share of merged all-reduce time with another kernel running", () => {
    // From the kernels' own times (scripts/hta/rounding_check.py, asWritten): 80.495% and 86.453%. HTA prints 79.96%
    // and 85.48% because it first moves every event inward to whole microseconds (htaRounded: 79.958%, 85.482%).
    const overlap = document.devices.map((d) => d.overlap.commWithCompute);
    assert.ok(Math.abs(overlap[0]! - 0.80495) < 0.0005 && Math.abs(overlap[1]! - 0.86453) < 0.0005, overlap.join(', '));
  });

  it('pairs the 80 all-reduces of the two ranks and names the rank that arrives last most often', () => {
    const collectives = document.collectives;
    assert.equal(collectives?.kind, 'measured');
    if (collectives?.kind !== 'measured') return;
    assert.equal(collectives.count, 80);
    // Rank 0 arrived last at 61 of the 80 (the text output of this trace,
    // docs/measurements/2026-11-26-h100x2-analyze/).
    assert.deepEqual(
      collectives.mostOftenLast.who.map((p) => p.rank),
      [0],
    );
    assert.equal(collectives.mostOftenLast.count, 61);
  });
});
