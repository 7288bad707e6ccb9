import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { analyzeTraces } from '../../src/analyze/analyze.js';
import type { AnalysisDocument } from '../../src/analyze/document.js';
import { parseTraceFile } from '../../src/analyze/parse.js';
import { packageRoot } from '../../src/paths.js';

// Real PyTorch profiler traces: scripts/torch/profile_patterns.py on one H100, four profiled steps each
// (docs/measurements/2026-11-26-h100-first-hour/second/, whose log.txt gives each program's step by CUDA events).

// parseTraceFile streams, so is async: each trace is read once, up front.
const NAMES = ['overlapped', 'pageable', 'serial', 'sync'];
const parsed = new Map(
  await Promise.all(NAMES.map(async (name) => [name, await parseTraceFile(join(packageRoot(), 'test', 'fixtures', 'analyze', 'torch-h100', `${name}.pt.trace.json.gz`))] as const)),
);
const analyse = (name: string): AnalysisDocument => analyzeTraces([parsed.get(name)!], { rates: null, toolVersion: 'test' });

describe('analyze on PyTorch profiler traces from an H100', () => {
  it("takes a step as the union of Kineto's per-stream step annotations: within 5% of the step CUDA events timed", () => {
    const [device] = analyse('overlapped').devices;
    assert.equal(device?.steps.length, 4);
    // CUDA events gave 3.340 ms a step; the H2D stream's annotation alone spans 1.22 ms of it.
    assert.ok(device && Math.abs(device.stepMs - 3.3403) / 3.3403 < 0.05, `${device?.stepMs} ms a step`);
  });

  it('finds the pageable copy, the mid-step synchronize and the default stream in the programs that have them', () => {
    const codes = (name: string) => analyse(name).findings.map((f) => f.code);
    assert.ok(codes('pageable').includes('pageable-copy'), codes('pageable').join(', '));
    assert.ok(codes('sync').includes('host-sync'), codes('sync').join(', '));
    assert.ok(codes('serial').includes('default-stream'), codes('serial').join(', '));
    assert.ok(!codes('overlapped').includes('pageable-copy') && !codes('overlapped').includes('default-stream'), codes('overlapped').join(', '));
  });
});
