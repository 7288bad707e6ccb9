import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { analyzeTraces } from '../../src/analysis/analyze.js';
import type { AnalysisDocument, FindingCode } from '../../src/analysis/document.js';
import { ratesFromFile } from '../../src/analysis/rates.js';
import { parseTraceFile } from '../../src/traces/parse.js';
import { packageRoot } from '../../src/paths.js';
import { median } from '../../src/quantile.js';

// A finding's saving is a prediction; the finding pairs test it on the GPU (scripts/torch/finding_pairs.py, run by
// scripts/gpu/validate.sh on two H200s): each pattern as a program has it and with the finding's advice applied, both
// profiled. From the problem's trace alone analyze must predict what the fix saved a step, within 25% of the
// saving measured under the same profiler (the problem's traced step less the fix's); where the fix saves nothing,
// the finding must stay silent. The link's rate comes from an H200 Result, as a user passes --rates.

const pairs = join(packageRoot(), 'docs', 'measurements', '2026-11-28-h200x2-validation', 'second', 'pairs');
const rates = ratesFromFile(join(packageRoot(), 'test', 'fixtures', 'h200-balanced-16-traced.json'));

async function analyse(pattern: string, variant: 'problem' | 'fix'): Promise<AnalysisDocument> {
  return analyzeTraces([await parseTraceFile(join(pairs, `${pattern}-${variant}.pt.trace.json.gz`))], {
    rates,
    toolVersion: 'test',
  });
}

const saving = (document: AnalysisDocument, code: FindingCode) =>
  document.findings.filter((f) => f.code === code).reduce((sum, f) => sum + f.ms, 0);

describe('finding pairs on an H200: the saving predicted from the problem against the saving measured', () => {
  for (const [pattern, code] of [
    ['pageable', 'pageable-copy'],
    ['default_stream', 'default-stream'],
    ['serialised', 'serialised-copies'],
    ['copy_on_compute', 'copy-on-compute-stream'],
    ['host_sync', 'host-sync'],
    ['host_bound', 'host-bound'],
  ] as const) {
    it(`${code}: within 25% of what ${pattern}'s fix saved`, { timeout: 60_000 }, async () => {
      const [problem, fix] = [await analyse(pattern, 'problem'), await analyse(pattern, 'fix')];
      const measured = problem.devices[0]!.stepMs - fix.devices[0]!.stepMs;
      const predicted = saving(problem, code);
      assert.ok(measured > 0.05, `${pattern}: the fix saved ${measured} ms`);
      assert.ok(
        Math.abs(predicted - measured) <= 0.25 * measured,
        `${code}: predicted ${predicted.toFixed(3)} ms, measured ${measured.toFixed(3)} ms`,
      );
    });
  }

  for (const [pattern, code] of [
    ['default_torch', 'default-stream'],
    ['serialised_full', 'serialised-copies'],
  ] as const) {
    it(`${code} stays silent on ${pattern}, whose fix saved nothing`, { timeout: 60_000 }, async () => {
      const [problem, fix] = [await analyse(pattern, 'problem'), await analyse(pattern, 'fix')];
      assert.ok(
        Math.abs(problem.devices[0]!.stepMs - fix.devices[0]!.stepMs) < 0.05,
        `${pattern}: the fix moved the step`,
      );
      assert.equal(saving(problem, code), 0);
    });
  }
});

describe('the data-parallel pair on two H200s: the same all-reduces after backward, then each started as its gradient is ready', () => {
  // ddp_overlap.py --no-overlap against --early (docs/measurements/2026-11-28-h200x2-ddp-early/). The saving is the
  // one timed without the profiler: the fix's all-reduces are started from Python hooks on autograd's thread, which the
  // profiler slows, so under it the fixed program took 14.2 to 14.8 ms a step against 12.2 ms without (the problem's
  // 14.8 against 15.1 ms), and the traced saving measures the profiler, not the fix.
  const early = join(packageRoot(), 'docs', 'measurements', '2026-11-28-h200x2-ddp-early');
  const timed = (variant: string): number => {
    const rows = readFileSync(join(early, 'ddp.jsonl'), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { variant: string; ranks: { timedMedianMs: number }[] });
    // The slowest rank's: every rank waits for it at each all-reduce.
    return Math.max(...rows.find((r) => r.variant === variant)!.ranks.map((r) => r.timedMedianMs));
  };

  it('exposed-communication: within 25% of what starting the all-reduces early saved', {
    timeout: 60_000,
  }, async () => {
    const ranks = await Promise.all(
      [0, 1].map((rank) => parseTraceFile(join(early, 'ddp-no-overlap', `rank${rank}.pt.trace.json.gz`))),
    );
    const problem = analyzeTraces(ranks, { rates, toolVersion: 'test' });
    const perRank = problem.devices.map((d) =>
      problem.findings
        .filter((f) => f.code === 'exposed-communication' && f.rank === d.rank)
        .reduce((sum, f) => sum + f.ms, 0),
    );
    const predicted = median(perRank);
    const measured = timed('no-overlap') - timed('early');
    assert.ok(measured > 2, `starting the all-reduces early saved ${measured} ms`);
    assert.ok(
      Math.abs(predicted - measured) <= 0.25 * measured,
      `predicted ${predicted.toFixed(3)} ms, measured ${measured.toFixed(3)} ms`,
    );
  });
});

describe('the misjudgements the finding pairs show are gone', () => {
  it('a pageable program is not also called host-bound: the host sat in its copies, which pinning frees, not in launches', {
    timeout: 60_000,
  }, async () => {
    const problem = await analyse('pageable', 'problem');
    assert.deepEqual(
      problem.findings.map((f) => f.code),
      ['pageable-copy'],
    );
  });

  it("a pageable program's floor takes the pinned link's rate, not its own pageable copies'", {
    timeout: 60_000,
  }, async () => {
    // Without --rates: the trace's only pinned copy is its 16 MiB D2H, whose rate stands in for H2D; the pageable H2D
    // itself ran at 5 to 9 GB/s and, taken as the link's rate, made a floor near the step.
    const problem = analyzeTraces([await parseTraceFile(join(pairs, 'pageable-problem.pt.trace.json.gz'))], {
      rates: null,
      toolVersion: 'test',
    });
    const device = problem.devices[0]!;
    assert.ok(device.rates.h2dGbPerSecond! > 40, `H2D rate ${device.rates.h2dGbPerSecond} GB/s`);
    assert.ok(device.efficiency < 0.5, `efficiency ${device.efficiency}`);
    assert.ok(problem.notes.some((n) => /no pinned h2d copy to take its rate from/.test(n)));
    assert.ok(problem.notes.some((n) => /the rate is too low and the floor too high/.test(n)));
  });
});

describe('DDP on two H100s: compute on the default stream beside NCCL on its own', () => {
  it('names no default-stream finding: the NCCL stream ran beside the default stream, so nothing waited on it', {
    timeout: 60_000,
  }, async () => {
    const ranks = await Promise.all(
      [0, 1].map((rank) =>
        parseTraceFile(
          join(
            packageRoot(),
            'test',
            'fixtures',
            'analyze',
            'torch-h100x2-ddp',
            `overlap-rank${rank}.pt.trace.json.gz`,
          ),
        ),
      ),
    );
    const document = analyzeTraces(ranks, { rates: null, toolVersion: 'test' });
    assert.ok(
      !document.findings.some((f) => f.code === 'default-stream'),
      document.findings.map((f) => f.code).join(', '),
    );
  });
});
