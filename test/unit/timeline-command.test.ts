import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Chalk } from 'chalk';
import { type TimelineOptions, writeTimelineOutputs } from '../../src/cli/timeline.js';
import { UsageError } from '../../src/errors.js';
import { renderGantt } from '../../src/report/gantt.js';
import { renderHtml } from '../../src/report/html.js';
import { renderSvg } from '../../src/report/svg.js';
import { renderTrace } from '../../src/report/trace.js';
import { syntheticRunResult } from '../helpers/synthetic-timeline.js';

const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-timeline-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const result = syntheticRunResult();
const file = join(dir, 'result.json');
writeFileSync(file, JSON.stringify(result, null, 2));

/** Runs timelineCommand in a child, as the CLI will, so its stdout and stderr can be read. */
function timeline(options: TimelineOptions): { code: number | null; stdout: string; stderr: string } {
  const script = `import { timelineCommand } from './src/cli/timeline.ts';
    timelineCommand(${JSON.stringify(file)}, ${JSON.stringify(options)}).then((code) => { process.exitCode = code; }, (e) => { console.error(e.message); process.exitCode = 2; });`;
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe('timeline command', () => {
  it('prints the Gantt at the width asked for and writes each document asked for', () => {
    const paths = { svg: join(dir, 't.svg'), html: join(dir, 't.html'), trace: join(dir, 't.json') };
    const run = timeline({ ...paths, width: 90 });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, `${renderGantt(result, { style: new Chalk({ level: 0 }), columns: 90 })}\n`);
    assert.equal(readFileSync(paths.svg, 'utf8'), renderSvg(result));
    assert.equal(readFileSync(paths.html, 'utf8'), renderHtml(result));
    assert.equal(readFileSync(paths.trace, 'utf8'), renderTrace(result));
  });

  it('sends a document asked for with - to stdout and moves the Gantt to stderr', () => {
    const run = timeline({ trace: '-', width: 80 });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, renderTrace(result));
    assert.match(run.stderr, /^serial: traced rep$/m);
  });

  it('refuses two documents on stdout', () => {
    const run = timeline({ svg: '-', html: '-' });
    assert.equal(run.code, 2);
    assert.match(run.stderr, /Only one of --svg, --html and --trace can write to stdout \(-\); --svg and --html both ask to\./);
  });

  it('says a file with no traced rep has nothing to draw, naming the file', () => {
    const script = `import { timelineCommand } from './src/cli/timeline.ts';
      timelineCommand('test/fixtures/h100-balanced-1.json', {}).catch((e) => { console.error(e.message); process.exitCode = 2; });`;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(run.status, 2);
    assert.match(run.stderr, /h100-balanced-1\.json holds no traced rep to draw\./);
  });
});

describe('timeline outputs after run', () => {
  it('refuses a document on stdout when run already wrote one there', async () => {
    await assert.rejects(writeTimelineOutputs(result, { trace: '-' }, true), (error: unknown) =>
      error instanceof UsageError && /stdout already carries another document, so --trace cannot write to it/.test(error.message));
  });
});
