import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { configDevices, planConfig } from '../../src/api/run.js';
import { mergeResults } from '../../src/compare/merge.js';
import { loadConfigFile } from '../../src/config/load.js';
import { EnvironmentError } from '../../src/errors.js';
import { concludeResult } from '../../src/measure/conclusions.js';
import { packageRoot } from '../../src/paths.js';
import { renderRunTable } from '../../src/report/exporters/table.js';
import { renderSweepTable } from '../../src/report/exporters/sweep.js';
import { renderMerge } from '../../src/report/merge.js';
import { renderPlan } from '../../src/report/plan.js';
import { makeStyle } from '../../src/report/style.js';
import { loadResults } from '../../src/result/load.js';
import type { RunResult } from '../../src/result/schema.js';
import { cpuStageOf } from '../../src/kinds/host/section.js';

// Issue 36's misjudgements of `run`, `sweep`, `report` and `merge`, each on the recorded Result that showed it, read
// as `report` reads it: its conclusions drawn again from its modes. Each test names the line it printed before.

const plain = makeStyle({ isTTY: false } as NodeJS.WriteStream);
const measured = (...path: string[]) => join(packageRoot(), 'docs', 'measurements', ...path);
const reported = (path: string): RunResult => {
  const [result] = loadResults(path);
  assert.ok(result, path);
  return concludeResult(result);
};
/** The report, wide enough that no line wraps. */
const table = (result: RunResult, verbose = false) => renderRunTable(result, plain, { columns: 1000, verbose });
const line = (text: string, start: string) => text.split('\n').find((l) => l.startsWith(start)) ?? '';
const headline = (result: RunResult) => result.modes.find((m) => m.id === result.summary.mode);

describe('a collective config (ddp.yaml on two H100s) is advised about its buckets', () => {
  const ddp = reported(measured('2026-11-26-h100x2-kinds', 'final', 'ddp.json'));
  const text = table(ddp);

  it('names its buckets as the best layout, never one chunk on one stream limited by an H2D it has not', () => {
    // Before: "best layout: about 1 chunks × 1 streams, 3.336 ms predicted (limited by H2D; ideal 3.331 ms)".
    assert.equal(
      line(text, 'best layout:'),
      'best layout: this layout (8 buckets), 3.597 ms predicted; none predicted faster; the all-reduce alone was measured ' +
        'in 8 buckets only: sweep pipeline.chunks to predict others',
    );
    assert.doesNotMatch(text, /H2D;|chunks × \d+ streams/);
  });

  it('predicts no best below the collective alone or the compute alone', () => {
    const floor = headline(ddp)?.analysis?.model?.floor;
    const alone = ddp.modes.find((m) => m.role.kind === 'stage' && m.role.stage === 'collective');
    const compute = ddp.modes
      .filter((m) => m.role.kind === 'stage' && m.role.stage === 'kernel')
      .reduce((sum, m) => sum + Math.min(...m.samplesMs), 0);
    assert.ok(floor && alone);
    assert.ok(floor.ms >= Math.min(...alone.samplesMs) && floor.ms >= compute, `${floor.ms} ms`);
  });

  it('has one efficiency, against the bucket model: the headline says what the communication section says', () => {
    // Before: "efficiency: 0.77 = this layout's floor 3.359 ms / 4.385 ms measured", beside the bucket model's 0.82.
    assert.equal(line(text, 'efficiency:'), "efficiency: 0.82 = this layout's floor 3.597 ms / 4.385 ms measured");
    assert.match(
      text,
      /bound 3\.597 ms \(limited by the compute, then the last bucket's all-reduce \(0\.266 ms\)\) against 4\.385 ms measured, efficiency 0\.82/,
    );
    assert.equal(ddp.summary.efficiency, headline(ddp)?.analysis?.efficiency);
    assert.match(
      line(text, 'limited by:'),
      /^limited by: communication: the compute, then the last bucket's all-reduce \(0\.266 ms\)/,
    );
  });

  it('puts the exposed all-reduce on the collective in --verbose, and names what the bucket model leaves out', () => {
    // Before: "serialisation and effects the model does not capture 1.027 ms; … contending for memory and the engines".
    const lost = line(table(ddp, true), 'lost against the ideal');
    assert.match(
      lost,
      /^lost against the ideal at 8 buckets: exposed communication 0\.266 ms, serialisation and effects the model does not capture 0\.788 ms/,
    );
    assert.match(lost, /NCCL's kernels sharing the SMs with the compute, which the bucket model leaves out/);
  });

  it('names a change of buckets where the model predicts one: one bucket on one GPU, where serial was measured faster', () => {
    const one = table(reported(measured('2026-11-26-h100-kinds-3', 'h100-x1-one-gpu', 'ddp.json')));
    assert.match(line(one, 'best layout:'), /^best layout: serial \(1 bucket\), 3\.312 ms measured/);
    assert.match(line(one, 'change:'), /^change: use 1 bucket, pipeline\.chunks 1 \(now 8\): saves 0\.048 ms/);
  });

  it("gives a sweep the model's best in buckets, and never one its own race measured slower", () => {
    // Before: "model's best: 3.325 ms at about 1 chunks × 1 streams (limited by H2D); measured best 23.1% above it".
    const sweep = renderSweepTable(reported(measured('2026-11-26-h100x2-rerun', 'x2', 'ddp-sweep.json')), plain, 1000);
    assert.match(
      line(sweep, "model's best:"),
      /^model's best: this layout \(32 buckets\), 3\.449 ms predicted; none predicted faster/,
    );
    const h200 = renderSweepTable(reported(measured('2026-11-26-h200x2-final', 'sweep.json')), plain, 1000);
    assert.match(
      line(h200, "model's best:"),
      /the model predicts 2 buckets faster \(4\.453 ms\), but it was measured at 5\.145 ms/,
    );
  });

  it('gives a 128-byte D2H a rate in MB/s, never 0.0 GB/s', () => {
    // Before: "│ D2H alone on GPU 0 │ 5.62 µs │ … │ 0.0 GB/s │".
    assert.match(line(text, '│ D2H alone on GPU 0'), /│ +22\.8 MB\/s │$/);
    assert.doesNotMatch(text, /\b0\.0 GB\/s/);
  });
});

describe('a predicted best never below a measured floor', () => {
  it("keeps host-stage.yaml's best at or above its CPU stage a rep", () => {
    // Before: "best layout: about 16 chunks × 2 streams, 1.456 ms predicted (limited by link; ideal 1.341 ms)",
    // with the CPU stage 18.09 ms a rep on one worker.
    const result = reported(measured('2026-11-24-h200-final', 'workers', 'host-stage-1.json'));
    const mode = headline(result);
    const stage = mode && cpuStageOf(mode);
    assert.ok(stage?.workMinMs !== undefined);
    assert.ok((mode?.analysis?.model?.floor.ms ?? 0) >= stage.workMinMs / Math.min(stage.workers, stage.tasksPerRep));
    assert.equal(
      line(table(result), 'best layout:'),
      'best layout: this layout (16 chunks × 4 streams), 18.09 ms predicted; none predicted faster',
    );
  });

  it("keeps loader.yaml's best at or above its loader's fills a rep", () => {
    // Before: "best layout: about 64 chunks × 3 streams, 5.606 ms predicted (limited by link; ideal 5.336 ms)".
    const result = reported(measured('2026-11-24-h200-final', 'review', 'loader.json'));
    const mode = headline(result);
    const stage = mode && cpuStageOf(mode);
    assert.ok(stage?.workMinMs !== undefined);
    assert.ok((mode?.analysis?.model?.floor.ms ?? 0) >= stage.workMinMs / Math.min(stage.workers, stage.tasksPerRep));
    assert.match(
      line(table(result), 'best layout:'),
      /^best layout: this layout \(16 chunks × 4 streams\), 9\.747 ms predicted/,
    );
  });
});

describe('a host stage on the JS thread, which the model has no term for', () => {
  it('gets no best layout from the GPU stages alone, and no change to one', () => {
    // Before: "best layout: about 16 chunks × 2 streams, 1.457 ms predicted (limited by link; ideal 1.342 ms)" for a
    // layout measured at 21.63 ms, its checksum on the JS thread in no term of the bound.
    const result = reported(measured('2026-11-23-h200-issues15-16', 'bound-final', 'run-host-stage-1.json'));
    assert.equal(
      line(table(result), 'best layout:'),
      'best layout: not predicted: the model has no term for the host stage checksum on the JS thread',
    );
    assert.notEqual(headline(result)?.analysis?.model?.advice?.code, 'layout');
  });
});

describe('a change never names the layout it is made on', () => {
  it('gives inference.yaml at 16 chunks no change to about 16 chunks, and the change its traced rep shows', () => {
    // Before: "best layout: about 16 chunks × 2 streams, 1.313 ms predicted" then "change: use more chunks (about 16)".
    // The layout model names no other layout; the traced rep, replayed with its copies on streams of their own (the
    // rules analyze applies to a user's trace), ends 0.070 ms sooner: 0.088 ms while the replay put the GPU's least
    // gap between two ops, not its usual one, after each moved copy.
    const text = table(reported(measured('2026-11-24-h200-issues17-18', 'pipelines', 'inference.json')));
    assert.equal(
      line(text, 'best layout:'),
      'best layout: this layout (16 chunks × 4 streams), 1.316 ms predicted; none predicted faster',
    );
    assert.equal(
      line(text, 'why:'),
      'why: copy-on-compute-stream 0.070 ms (the traced rep replayed without each cause: what it would save)',
    );
    assert.equal(
      line(text, 'change:'),
      'change: give the copies streams of their own (topology: stage-per-stream): saves 0.070 ms in the traced rep; the layout model names none (lost to fill and drain: 0.186 ms)',
    );
    assert.doesNotMatch(line(text, 'change:'), /16 chunks/);
  });

  it('names the best layout where it is another, with what it saves', () => {
    const text = table(reported(measured('2026-11-24-h200-final', 'inference-vs-torch', 'ours-8x2-r1.json')));
    assert.match(line(text, 'best layout:'), /^best layout: about 16 chunks × 2 streams, 1\.310 ms predicted/);
    assert.match(line(text, 'change:'), /^change: use 16 chunks \(now 8\): saves 0\.028 ms; lost to fill and drain/);
  });
});

describe('clocks before blame', () => {
  it('puts the kernel parts of gemm.yaml at the layout clock before calling the bound beaten', () => {
    // Before: "efficiency: 1.07 = this layout's floor 3.165 ms / 2.952 ms measured" and a warning of "a defect in
    // cuda-pipe's model"; the kernels alone ran at 1515 MHz, the layout at 1980 MHz.
    const result = reported(measured('2026-11-24-h200-gemm-seeded', 'gemm-burst.json'));
    const text = table(result);
    assert.equal(
      line(text, 'efficiency:'),
      "efficiency: 0.82 = this layout's floor 2.422 ms / 2.952 ms measured, parts put at 1980 MHz",
    );
    assert.match(
      text,
      /^clocks: kernel parts at 1515 MHz, this layout at 1980 MHz: the bound puts the parts at 1980 MHz$/m,
    );
    assert.ok(!result.warnings.some((w) => w.code === 'above-bound'));
  });

  it('explains the kernel alone slower than serial for the same work by their clocks', () => {
    const text = table(reported(measured('2026-11-24-h200-gemm-seeded', 'gemm-burst.json')));
    assert.match(
      text,
      /^clocks: kernel product alone \(3\.226 ms at 1515 MHz\) is slower than serial \(2\.793 ms at 1980 MHz\), which runs the same kernels and more: at serial's clock they would take 2\.468 ms \(cycles = time × MHz\), so the clock explains it$/m,
    );
  });

  it('says a bound beaten while the clock moved is not at matching clocks, and blames no model', () => {
    // Before: "measured faster than the model's bound (bound 3.112 ms, limited by kernels; efficiency 1.11): … a defect
    // in cuda-pipe's model".
    const result = reported(measured('2026-11-26-h100x2-kinds', 'one-gpu-final', 'gemm.json'));
    const above = result.warnings.find((w) => w.code === 'above-bound');
    assert.match(
      above?.message ?? '',
      /ran at 1380 to 1545 MHz and this layout at 1380 to 1980 MHz \(NVML\): the comparison is not at matching clocks/,
    );
    assert.doesNotMatch(above?.message ?? '', /defect/);
    const weights = table(reported(measured('2026-11-24-h200-final', 'pipelines', 'weight-streaming.json')));
    assert.match(
      weights,
      /^clocks: kernel parts at 1170–1575 MHz, this layout at 1425–1650 MHz: moving, so not matched$/m,
    );
  });
});

describe('merge of DDP ranks', () => {
  it('leads with the step and the scaling against one GPU computing alone, never a rate of a few bytes', () => {
    // Before: "total: 0.0 GB/s across 2 GPUs, 1.99× the fastest single GPU (vm GPU 0 (rank 0), 0.0 GB/s)".
    const ranks = ['rank0.json', 'rank1.json'].map((f) => reported(measured('2026-11-26-h200x2-final', f)));
    const text = renderMerge(mergeResults(ranks), plain, 1000);
    assert.equal(
      line(text, 'step:'),
      'step: 5.177 ms, set by the slowest GPU, vm GPU 1 (rank 1), 0.6% behind the median of 5.148 ms: every rank waits for it at each collective',
    );
    assert.match(
      line(text, 'scaling:'),
      /^scaling: 2 GPUs, each computing 3\.3\d\d ms a step alone \(its kernels alone\): 1\.2\d× one GPU's compute/,
    );
    assert.doesNotMatch(text, /GB\/s/);
    assert.doesNotMatch(text, /a host's total adds the rate/);
  });
});

describe('run --dry-run', () => {
  it('says the outputs will be verified: none ran', () => {
    // Before: "…; H2D 256 MiB, D2H 256 MiB; outputs verified" on every verified mode of a plan nothing ran.
    const loaded = loadConfigFile(join(packageRoot(), 'configs', 'balanced.yaml'));
    const noDriver = () => {
      throw new EnvironmentError('no driver');
    };
    const text = renderPlan(planConfig(loaded, { gate: false, devices: configDevices(loaded, noDriver) }).plan);
    assert.doesNotMatch(text, /outputs verified/);
    assert.match(text, /^mode serial: .*; its outputs will be verified$/m);
  });
});
