import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Chalk } from 'chalk';
import { renderGantt } from '../../src/report/gantt.js';
import { renderHtml } from '../../src/report/html.js';
import { renderSvg } from '../../src/report/svg.js';
import { renderTrace } from '../../src/report/trace.js';
import { runCli } from '../helpers/cli.js';
import { syntheticRunResult } from '../helpers/synthetic-timeline.js';

const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-timeline-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const result = syntheticRunResult();
const file = join(dir, 'result.json');
writeFileSync(file, JSON.stringify(result, null, 2));

describe('cuda-pipe timeline', () => {
  it('prints the Gantt at the width asked for and writes each document asked for, from the saved file alone', () => {
    const paths = { svg: join(dir, 't.svg'), html: join(dir, 't.html'), trace: join(dir, 't.json') };
    const run = runCli([
      'timeline',
      file,
      '--svg',
      paths.svg,
      '--html',
      paths.html,
      '--trace',
      paths.trace,
      '--width',
      '90',
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, `${renderGantt(result, { style: new Chalk({ level: 0 }), columns: 90 })}\n`);
    assert.equal(readFileSync(paths.svg, 'utf8'), `${renderSvg(result)}\n`);
    assert.equal(readFileSync(paths.html, 'utf8'), `${renderHtml(result)}\n`);
    assert.equal(readFileSync(paths.trace, 'utf8'), `${renderTrace(result)}\n`);
  });

  it('sends a document asked for with - to stdout and moves the Gantt to stderr', () => {
    const run = runCli(['timeline', file, '--trace', '-', '--width', '80']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, `${renderTrace(result)}\n`);
    assert.match(run.stderr, /^serial: traced rep$/m);
  });

  it('refuses two documents on stdout', () => {
    const run = runCli(['timeline', file, '--svg', '-', '--html', '-']);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /Only one document can go to stdout \(-\); --svg and --html ask to\./);
  });

  it('says a file with no traced rep has nothing to draw, naming the file', () => {
    const run = runCli(['timeline', join('test', 'fixtures', 'h100-balanced-1.json')]);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /h100-balanced-1\.json holds no traced rep to draw\./);
  });

  it("redraws the recorded H200 run's 4 streams", () => {
    const run = runCli(['timeline', join('test', 'fixtures', 'h200-balanced-16-traced.json'), '--width', '100']);
    assert.equal(run.code, 0, run.stderr);
    for (const stream of ['s0', 's1', 's2', 's3'])
      assert.match(run.stdout, new RegExp(`^${stream} +\\|[HKDhkd.]+\\|$`, 'm'));
  });
});
