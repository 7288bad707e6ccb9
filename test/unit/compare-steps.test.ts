import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { analyzeTraces } from '../../src/analysis/analyze.js';
import type { DeviceAnalysis } from '../../src/analysis/document.js';
import { separateRunsRule } from '../../src/compare/rule.js';
import { judgeSteps } from '../../src/compare/steps.js';
import { packageRoot } from '../../src/paths.js';
import { parseTraceFile } from '../../src/traces/parse.js';

// `analyze A B --ab` judges each device's step times as two separate runs. The devices here are one analysed
// fixture's, given other files, ranks and step times, so each case knows exactly which side should pair with which.

const parsed = await parseTraceFile(join(packageRoot(), 'test', 'fixtures', 'analyze', 'copy-overlapped.json'));
const analysed = analyzeTraces([parsed], { rates: null, toolVersion: 'test' }).devices[0] as DeviceAnalysis;

const STEPS_MS = [10, 10.1, 9.9, 10.05, 9.95, 10.02, 9.98, 10.03, 9.97, 10];
const scaled = (factor: number) => STEPS_MS.map((ms) => ms * factor);

function device(file: string, rank: number | null, index: number, stepsMs: readonly number[]): DeviceAnalysis {
  const step = analysed.steps[0];
  assert.ok(step, 'the fixture has a step');
  const steps = stepsMs.map((ms, i) => ({ ...step, name: `step ${i}`, ms }));
  return { ...analysed, file, rank, device: index, steps };
}

function near(actual: number, expected: number, what: string): void {
  assert.ok(Math.abs(actual - expected) < 1e-9, `${what}: ${actual} is not ${expected}`);
}

describe('analyze --ab: judging two traces step by step (compare/steps.ts)', { timeout: 30_000 }, () => {
  it('calls 10% longer steps slower, with the medians, the counts, both files and the interval of B/A − 1', () => {
    const judged = judgeSteps([device('a.json', 0, 0, STEPS_MS)], [device('b.json', 0, 0, scaled(1.1))]);
    assert.equal(judged.verdict, 'slower');
    assert.deepEqual(judged.verdictRule, separateRunsRule());
    assert.equal(judged.verdicts.length, 1);
    const [v] = judged.verdicts;
    assert.ok(v);
    const who = [v.device, v.rank, v.baselineFile, v.candidateFile, v.steps];
    assert.deepEqual(who, [0, 0, 'a.json', 'b.json', [10, 10]]);
    near(v.baselineMs, 10, 'baseline median');
    near(v.candidateMs, 11, 'candidate median');
    near(v.change, 0.1, 'change');
    assert.equal(v.verdict, 'slower');
    assert.ok(v.interval, 'ten steps a side give an interval');
    near(v.interval.estimate, 0.1, 'estimate');
    const { low, high } = v.interval;
    assert.ok(low > 0.05 && low < 0.1 && high > 0.1 && high < 0.15, JSON.stringify(v.interval));
    assert.match(v.reason ?? '', /\S/);
  });

  it('calls 10% shorter steps faster and the same steps same', () => {
    assert.equal(judgeSteps([device('a', 0, 0, STEPS_MS)], [device('b', 0, 0, scaled(0.9))]).verdict, 'faster');
    const same = judgeSteps([device('a', 0, 0, STEPS_MS)], [device('b', 0, 0, STEPS_MS)]);
    assert.equal(same.verdict, 'same');
    assert.equal(same.verdicts[0]?.change, 0);
  });

  it('gates on every device: one slower and one faster is mixed', () => {
    const before = [device('a0', 0, 0, STEPS_MS), device('a1', 1, 1, STEPS_MS)];
    const judged = judgeSteps(before, [device('b0', 0, 0, scaled(1.1)), device('b1', 1, 1, scaled(0.9))]);
    assert.deepEqual(
      judged.verdicts.map((v) => v.verdict),
      ['slower', 'faster'],
    );
    assert.equal(judged.verdict, 'mixed');
  });

  it('pairs devices by rank whatever order the candidate traces come in', () => {
    const before = [device('a1', 1, 0, STEPS_MS), device('a2', 2, 0, STEPS_MS)];
    const judged = judgeSteps(before, [device('b2', 2, 0, scaled(0.9)), device('b1', 1, 0, scaled(1.1))]);
    assert.deepEqual(
      judged.verdicts.map((v) => [v.rank, v.baselineFile, v.candidateFile, v.verdict]),
      [
        [1, 'a1', 'b1', 'slower'],
        [2, 'a2', 'b2', 'faster'],
      ],
    );
  });

  it('pairs devices without a rank by device index, and by list order where no key matches', () => {
    const before = [device('a0', null, 0, STEPS_MS), device('a1', null, 1, STEPS_MS)];
    const byIndex = judgeSteps(before, [device('b1', null, 1, STEPS_MS), device('b0', null, 0, STEPS_MS)]);
    assert.deepEqual(
      byIndex.verdicts.map((v) => [v.baselineFile, v.candidateFile]),
      [
        ['a0', 'b0'],
        ['a1', 'b1'],
      ],
    );
    const byOrder = judgeSteps(before, [device('b5', null, 5, STEPS_MS), device('b6', null, 6, STEPS_MS)]);
    assert.deepEqual(
      byOrder.verdicts.map((v) => [v.device, v.baselineFile, v.candidateFile]),
      [
        [0, 'a0', 'b5'],
        [1, 'a1', 'b6'],
      ],
    );
  });

  it('leaves out a device with no steps on either side, or no partner, and calls nothing judged noisy', () => {
    const before = [device('a0', 0, 0, []), device('a1', 1, 1, STEPS_MS), device('a2', 2, 2, STEPS_MS)];
    const judged = judgeSteps(before, [device('b0', 0, 0, STEPS_MS), device('b1', 1, 1, [])]);
    assert.deepEqual(judged.verdicts, []);
    assert.equal(judged.verdict, 'noisy');
  });

  it('judges by the rule it is given: a 25% band calls a 10% change same', () => {
    const rule = separateRunsRule(0.25);
    const judged = judgeSteps([device('a', 0, 0, STEPS_MS)], [device('b', 0, 0, scaled(1.1))], rule);
    assert.equal(judged.verdict, 'same');
    assert.equal(judged.verdictRule, rule);
  });

  it('gives no interval and calls it noisy with too few steps to judge', () => {
    const judged = judgeSteps([device('a', 0, 0, [10, 10.2])], [device('b', 0, 0, [11, 11.2])]);
    assert.deepEqual(judged.verdicts[0]?.steps, [2, 2]);
    assert.equal(judged.verdicts[0]?.interval, null);
    assert.equal(judged.verdicts[0]?.verdict, 'noisy');
  });
});
