import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { AnalysisDocumentSchema } from '../../src/analysis/document.js';
import { runCli } from '../helpers/cli.js';
import { makeResult } from '../helpers/results.js';

// The top-level verdict and the rule in every document that carries verdicts, and the views that state the band:
// `compare --json`, `analyze A B --ab --json` (`ab --json` needs a GPU: test/gpu/ab.test.ts; its schema and views
// are in ab.test.ts).

const DEADLINE = { timeout: 120_000 };
const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-verdicts-'));
const save = (name: string, value: unknown) => {
  const path = join(dir, name);
  writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value));
  return path;
};

describe('compare --json', () => {
  const baseline = save('baseline.json', makeResult());
  const slower = save('slower.json', makeResult({ scale: 1.1 }));

  it('leads with the comparison verdict and the rule: band, confidence and interval', DEADLINE, () => {
    const { code, stdout } = runCli(['compare', baseline, slower, '--json', '-']);
    assert.equal(code, 1);
    const json = JSON.parse(stdout);
    assert.equal(json.verdict, 'slower');
    assert.deepEqual(json.rule, { band: 0.01, confidence: 0.9, interval: 'hodges-lehmann' });
    const serial = json.pairs[0];
    assert.equal(serial.verdict, 'slower');
    assert.deepEqual(
      [serial.interval.estimate, serial.interval.low, serial.interval.high].map((x: number) =>
        Number((x * 100).toFixed(2)),
      ),
      [10, 9.71, 10.29],
    );
    assert.equal(
      serial.reason,
      'B/A +10.0% (90% interval +9.7% to +10.3%): clear of no change, the estimate past the ±1.0% band',
    );
  });

  it('takes --threshold as the band: at 15% the 10% slowdown is same, exit 0', DEADLINE, () => {
    const { code, stdout } = runCli(['compare', baseline, slower, '--threshold', '15', '--json', '-']);
    assert.equal(code, 0);
    const json = JSON.parse(stdout);
    assert.deepEqual([json.verdict, json.rule.band], ['same', 0.15]);
  });

  it('says in the text what same means and the band, and what to do about noisy pairs', DEADLINE, () => {
    const noisy = save('noisy.json', makeResult({ scale: 1.02, noise: 0.2, samples: 6 }));
    const base = save('base6.json', makeResult({ noise: 0.2, samples: 6 }));
    const { code, stdout: wrapped } = runCli(['compare', base, noisy]);
    assert.equal(code, 0, wrapped);
    // Prose is wrapped to the width with a two-space indent: read it unwrapped.
    const stdout = wrapped.replace(/\n {2}/g, ' ');
    assert.match(stdout, /^noisy \(no regression shown\): 0 slower, 0 faster, 0 same, 6 noisy$/m);
    assert.match(
      stdout,
      /same when the whole interval lies inside the ±1\.0% band \(an equivalence test, TOST at 5%\)/,
    );
    assert.match(
      stdout,
      /note: noisy means the interval is too wide to show a change or its absence: take more reps, or measure on a quieter host/,
    );
    const md = runCli(['compare', base, noisy, '--md', '-']).stdout;
    assert.match(md, /^Verdict \*\*noisy \(no regression shown\)\*\*: 0 slower, 0 faster, 0 same, 6 noisy\.$/m);
    assert.match(md, /\| change \(90% interval\) \|/);
    assert.match(md, /<sub>Verdicts read one 90% interval of B\/A \(the Hodges–Lehmann shift/);
  });
});

describe('analyze A B --ab --json', () => {
  /** A trace of GPU steps of the given lengths (ms), each one kernel filling it, one after the other. */
  function stepsTrace(name: string, lengthsMs: readonly number[]): string {
    let ts = 0;
    const events = lengthsMs.flatMap((ms, i) => {
      const dur = ms * 1000;
      const step = {
        ph: 'X',
        cat: 'gpu_user_annotation',
        name: `ProfilerStep#${i}`,
        pid: 0,
        tid: 7,
        ts,
        dur,
        args: { device: 0 },
      };
      const kernel = { ph: 'X', cat: 'kernel', name: 'k', pid: 0, tid: 13, ts, dur, args: { device: 0, stream: 13 } };
      ts += dur + 100;
      return [step, kernel];
    });
    return save(name, JSON.stringify({ schemaVersion: 1, traceEvents: events }));
  }
  const before = stepsTrace('before.json', [10, 10.1, 9.9, 10, 10.05, 9.95, 10, 10]);

  it('holds the verdict of every device in one, and the rule, beside each device’s interval', DEADLINE, () => {
    const after = stepsTrace('after.json', [12, 12.12, 11.88, 12, 12.06, 11.94, 12, 12]);
    const { code, stdout } = runCli(['analyze', before, after, '--ab', '--json', '-']);
    assert.equal(code, 1);
    const document = AnalysisDocumentSchema.parse(JSON.parse(stdout));
    assert.equal(document.verdict, 'slower');
    assert.deepEqual(document.verdictRule, { band: 0.01, confidence: 0.9, interval: 'hodges-lehmann' });
    const [device] = document.verdicts ?? [];
    assert.deepEqual(
      [device?.verdict, device?.interval && Number((device.interval.estimate * 100).toFixed(2))],
      ['slower', 20],
    );
  });

  it('calls two steps a side noisy, with the reason, and exits 0', DEADLINE, () => {
    const a = stepsTrace('two-a.json', [10, 10.1]);
    const b = stepsTrace('two-b.json', [12, 12.1]);
    const { code, stdout } = runCli(['analyze', a, b, '--ab', '--json', '-']);
    assert.equal(code, 0);
    const document = AnalysisDocumentSchema.parse(JSON.parse(stdout));
    assert.equal(document.verdict, 'noisy');
    assert.deepEqual(
      document.verdicts?.map((v) => [v.verdict, v.interval, v.reason]),
      [['noisy', null, '2 and 2 samples: too few for a 90% interval']],
    );
  });

  it('takes --threshold as the band: at 25% the 20% slower steps are same', DEADLINE, () => {
    const after = stepsTrace('after-25.json', [12, 12.12, 11.88, 12, 12.06, 11.94, 12, 12]);
    const { code, stdout } = runCli(['analyze', before, after, '--ab', '--threshold', '25', '--json', '-']);
    assert.equal(code, 0);
    const document = AnalysisDocumentSchema.parse(JSON.parse(stdout));
    assert.deepEqual([document.verdict, document.verdictRule?.band], ['same', 0.25]);
  });
});
