import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { packageRoot } from '../../src/paths.js';
import { RunResultSchema } from '../../src/result/schema.js';
import { runCli } from '../helpers/cli.js';

// `--json <file|->` and `--md <file|->` mean the same in every command: the document goes to the file, or to stdout
// for `-` (then the command's table goes to stderr), and a missing folder is exit 2 before anything runs.

const fixtures = join(packageRoot(), 'test', 'fixtures');
const v1 = join(fixtures, 'h100-balanced-1.json');
const other = join(fixtures, 'h100-balanced-2.json');
const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-flags-'));

describe('--json and --md in every command', () => {
  it('probe and overhead take a file for --json, checked before any GPU work', () => {
    for (const command of ['probe', 'overhead']) {
      const { code, stderr } = runCli([command, '--json', join(dir, 'missing', 'out.json')]);
      assert.equal(code, 2, `${command}: ${stderr}`);
      assert.match(
        stderr,
        /^cuda-pipe: Cannot write \S+missing\/out\.json: the folder \S+missing does not exist\./,
        command,
      );
    }
  });

  it('compare writes --json to a file and --md to stdout, the table then on stderr; two documents cannot share stdout', () => {
    const target = join(dir, 'compare.json');
    const { stdout, stderr } = runCli(['compare', v1, other, '--json', target, '--md', '-']);
    assert.ok(Array.isArray(JSON.parse(readFileSync(target, 'utf8')).pairs));
    assert.match(stdout, /^### cuda-pipe compare: /);
    assert.match(stderr, /slower, \d+ faster, \d+ same, \d+ noisy/);
    const both = runCli(['compare', v1, other, '--json', '-', '--md', '-']);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /^cuda-pipe: Only one document can go to stdout \(-\); --json and --md ask to\./);
  });

  it('report --json - rewrites a version 1 file as a version 2 Result, --md <file> writes Markdown, the table goes to stderr', () => {
    const md = join(dir, 'report.md');
    const { code, stdout, stderr } = runCli(['report', v1, '--json', '-', '--md', md]);
    assert.equal(code, 0, stderr);
    const [result] = ([] as unknown[]).concat(JSON.parse(stdout));
    assert.equal(RunResultSchema.parse(result).version, 2);
    assert.match(readFileSync(md, 'utf8'), /^### cuda-pipe · balanced on NVIDIA H100 80GB HBM3/);
    assert.match(stderr, /speedup over serial/);
  });

  it('sweep refuses two documents for one file before it measures anything', () => {
    const target = join(dir, 'sweep.json');
    const { code, stderr } = runCli(['sweep', '--json', target, '--html', target]);
    assert.equal(code, 2, stderr);
    assert.match(
      stderr,
      /^cuda-pipe: --json and --html both name \S+sweep\.json: the second document would replace the first\./,
    );
  });

  it('report writes every document it is asked for to its own file', () => {
    const paths = {
      json: join(dir, 'all.json'),
      md: join(dir, 'all.md'),
      svg: join(dir, 'all.svg'),
      html: join(dir, 'all.html'),
      trace: join(dir, 'all.trace.json'),
    };
    const traced = join(fixtures, 'h200-balanced-16-traced.json');
    const { code, stderr } = runCli([
      'report',
      traced,
      ...Object.entries(paths).flatMap(([flag, path]) => [`--${flag}`, path]),
    ]);
    assert.equal(code, 0, stderr);
    assert.equal(JSON.parse(readFileSync(paths.json, 'utf8')).schema, 'cuda-pipe/result');
    assert.match(readFileSync(paths.md, 'utf8'), /^### cuda-pipe/);
    assert.match(readFileSync(paths.svg, 'utf8'), /^<svg /);
    assert.match(readFileSync(paths.html, 'utf8'), /^<!doctype html>/);
    assert.ok(Array.isArray(JSON.parse(readFileSync(paths.trace, 'utf8')).traceEvents));
  });
});
