import assert from 'node:assert/strict';
import { closeSync, openSync, readdirSync, readSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { repStep } from '../../src/analysis/rep-findings.js';
import { concludeResult } from '../../src/measure/conclusions.js';
import { packageRoot } from '../../src/paths.js';
import { renderRunTable } from '../../src/report/exporters/table.js';
import { renderSweepTable } from '../../src/report/exporters/sweep.js';
import { makeStyle } from '../../src/report/style.js';
import { loadResults } from '../../src/result/load.js';
import type { ModeResult } from '../../src/model/mode.js';
import { cpuStageOf } from '../../src/kinds/host/section.js';
import type { RunResult } from '../../src/result/schema.js';

// A conclusion is a claim: it must hold against what was measured on every Result the repository holds, not on one
// example. Every file under test/fixtures, baselines and docs/measurements that loads as a Result is read as `report`
// reads it (its conclusions drawn again from its modes), and every overlapped mode and the headline are held to
// what was measured: no prediction below a measured floor, no change naming the layout it is made on, no rate of
// 0.0 GB/s, and an efficiency and a best layout that agree with each other and with the bound.

const root = packageRoot();
const plain = makeStyle({ isTTY: false } as NodeJS.WriteStream);
const walk = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.json') ? [join(dir, e.name)] : [],
  );

/**
 * Whether a JSON file says it is a Result in its first bytes: the others (probes, A/B documents, traces) are skipped
 * unread.
 */
function saysResult(path: string): boolean {
  const head = Buffer.alloc(256);
  const fd = openSync(path, 'r');
  try {
    return /"schema":\s*"cuda-pipe\/result"/.test(head.subarray(0, readSync(fd, head, 0, head.length, 0)).toString());
  } finally {
    closeSync(fd);
  }
}

/**
 * Every recorded Result with its file; a file that does not load as one (a hand-edited or broken record) is left out.
 */
function recordedResults(): { file: string; result: RunResult }[] {
  return ['test/fixtures', 'baselines', 'docs/measurements']
    .flatMap((dir) => walk(join(root, dir)))
    .filter(saysResult)
    .flatMap((path) => {
      try {
        return loadResults(path).map((result) => ({ file: relative(root, path), result: concludeResult(result) }));
      } catch {
        return [];
      }
    });
}

const fastest = (mode: ModeResult) => mode.samplesMs.reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY);
const EPS = 1e-9;

/** The floors `mode`'s workload was measured to have, whatever its layout: each with what it is. */
function measuredFloors(mode: ModeResult, result: RunResult, chunks: number): { what: string; ms: number }[] {
  const model = mode.analysis?.model;
  if (!model) return [];
  const floors: { what: string; ms: number }[] = [];
  // The kernels alone at the mode's clock, as the model took them (whole buffers, or chunked where faster).
  const kernels =
    model.kernelsChunkedMs === null || model.parts.kernelWholeMs === 0
      ? model.parts.kernelWholeMs
      : Math.min(model.parts.kernelWholeMs, model.kernelsChunkedMs);
  floors.push({ what: 'the kernels alone', ms: kernels });
  const stage = cpuStageOf(mode);
  if (stage && stage.tasksPerRep > 0) {
    const work = stage.workMinMs ?? stage.tasksPerRep * stage.taskMedianMs;
    floors.push({
      what: 'the CPU stage a rep',
      ms: stage.workMinMs === undefined ? work / stage.workers : work / Math.min(stage.workers, stage.tasksPerRep),
    });
  }
  if ((mode.bytes.collective ?? 0) > 0) {
    for (const alone of result.modes.filter(
      (m) => m.device === mode.device && m.role.kind === 'stage' && m.role.stage === 'collective',
    )) {
      if ((alone.collective?.calls ?? 1) === chunks)
        floors.push({ what: `the collective alone in ${chunks} buckets`, ms: fastest(alone) });
    }
  }
  return floors;
}

describe('the conclusions of every recorded Result', { timeout: 120_000 }, () => {
  const recorded = recordedResults();

  it('read hundreds of Results, of one GPU and of several, runs and sweeps, with a model and without', () => {
    assert.ok(recorded.length >= 500, `${recorded.length} Results`);
    assert.ok(
      recorded.some(({ result }) => result.sweep !== null) && recorded.some(({ result }) => result.devices.length > 1),
    );
    assert.ok(
      recorded.some(({ result }) => result.modes.some((m) => m.analysis?.model)) &&
        recorded.some(({ result }) => result.modes.every((m) => !m.analysis?.model)),
    );
  });

  it('predict no best layout, nor a bound for a layout, below a floor that was measured', () => {
    const below: string[] = [];
    for (const { file, result } of recorded) {
      for (const mode of result.modes.filter((m) => m.role.kind === 'overlapped' && m.analysis?.model)) {
        const { floor } = mode.analysis?.model ?? { floor: null };
        const bound = mode.analysis?.bound.ms ?? 0;
        if (!floor || mode.role.kind !== 'overlapped') continue;
        // Serial, where it beat every prediction, is its own measurement.
        const serial = result.modes.find((m) => m.device === mode.device && m.role.kind === 'serial');
        if (floor.limitedBy === 'serial') {
          if (!serial || Math.abs(floor.ms - fastest(serial)) > EPS)
            below.push(`${file} ${mode.id}: a serial floor ${floor.ms} that serial did not measure`);
          continue;
        }
        for (const f of measuredFloors(mode, result, floor.chunks))
          if (floor.ms < f.ms - EPS) below.push(`${file} ${mode.id}: best ${floor.ms} ms below ${f.what}, ${f.ms} ms`);
        for (const f of measuredFloors(mode, result, mode.role.layout.chunks))
          if (bound < f.ms - EPS) below.push(`${file} ${mode.id}: bound ${bound} ms below ${f.what}, ${f.ms} ms`);
      }
    }
    assert.deepEqual(below, []);
  });

  it('never name, in a change, the layout it is made on, nor one the model predicts no faster', () => {
    const same: string[] = [];
    for (const { file, result } of recorded) {
      for (const mode of result.modes) {
        const advice = mode.analysis?.model?.advice;
        if (mode.role.kind !== 'overlapped' || !advice || advice.code !== 'layout') continue;
        const { chunks, streams } = mode.role.layout;
        const to = advice.to;
        const bound = mode.analysis?.bound.ms ?? 0;
        if (!to || (to.chunks === chunks && to.streams === streams)) same.push(`${file} ${mode.id}: ${advice.change}`);
        else if ((mode.analysis?.model?.floor.ms ?? bound) >= bound * 0.99)
          same.push(`${file} ${mode.id}: ${advice.change}, predicted no faster`);
        else if (
          advice.savingMs < 0 ||
          advice.savingMs > mode.stats.median - (mode.analysis?.model?.floor.ms ?? 0) + EPS
        )
          same.push(`${file} ${mode.id}: saves ${advice.savingMs}`);
      }
    }
    assert.deepEqual(same, []);
  });

  it('print no rate of 0.0 GB/s anywhere in the report', () => {
    const zero: string[] = [];
    for (const { file, result } of recorded) {
      // Wide enough that nothing wraps: the words are the claim, the width is render-width's.
      const text = result.sweep
        ? renderSweepTable(result, plain, 10_000)
        : renderRunTable(result, plain, { columns: 10_000, verbose: true });
      for (const line of text.split('\n')) if (/(^|[^\d.])0\.0 GB\/s/.test(line)) zero.push(`${file}: ${line.trim()}`);
    }
    assert.deepEqual(zero, []);
  });

  it('give an efficiency against the bound they print, and a best layout no slower than this one, which the change names', () => {
    const disagree: string[] = [];
    for (const { file, result } of recorded) {
      const head = result.modes.find((m) => m.id === result.summary.mode);
      if (head?.analysis && Math.abs(result.summary.efficiency - head.analysis.efficiency) > EPS)
        disagree.push(`${file}: the headline's efficiency is not its mode's`);
      for (const mode of result.modes) {
        const analysis = mode.analysis;
        if (mode.role.kind !== 'overlapped' || !analysis) continue;
        if (Math.abs(analysis.efficiency - analysis.bound.ms / mode.stats.median) > EPS)
          disagree.push(`${file} ${mode.id}: efficiency ${analysis.efficiency} ≠ bound / median`);
        const model = analysis.model;
        if (!model || model.advice === undefined) continue;
        if (model.floor.limitedBy !== 'serial' && model.floor.ms > analysis.bound.ms + EPS)
          disagree.push(`${file} ${mode.id}: best ${model.floor.ms} above this layout's ${analysis.bound.ms}`);
        const here = model.floor.chunks === mode.role.layout.chunks && model.floor.streams === mode.role.layout.streams;
        if (here && Math.abs(model.floor.ms - analysis.bound.ms) > EPS)
          disagree.push(`${file} ${mode.id}: this layout as best, at another time than its bound`);
        const to = model.advice?.code === 'layout' ? model.advice.to : undefined;
        if (to && (to.chunks !== model.floor.chunks || to.streams !== model.floor.streams))
          disagree.push(`${file} ${mode.id}: a change to another layout than the best`);
      }
    }
    assert.deepEqual(disagree, []);
  });

  it("divide a traced rep's findings by a floor whose per-op cost fits in the rep's own time", () => {
    const over: string[] = [];
    let reps = 0;
    for (const { file, result } of recorded) {
      for (const rep of result.timeline?.reps ?? []) {
        const { floor } = repStep(result, rep).step;
        reps++;
        if (floor.opCostMs > rep.totalMs) over.push(`${file} ${rep.mode} GPU ${rep.device}: ${floor.opCostMs} ms`);
      }
    }
    assert.ok(reps >= 300, `${reps} traced reps`);
    assert.deepEqual(over, []);
  });
});
