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
      assert.match(stderr, /^cuda-pipe: Cannot write \S+missing\/out\.json: the folder \S+missing does not exist\./, command);
    }
  });

  it('compare --json - prints the comparison alone on stdout, the table on stderr', () => {
    const { code, stdout, stderr } = runCli(['compare', v1, other, '--json', '-']);
    assert.ok(code === 0 || code === 1, stderr);
    const comparison = JSON.parse(stdout);
    assert.ok(Array.isArray(comparison.pairs) && comparison.pairs.length > 0);
    assert.match(stderr, /slower, \d+ faster, \d+ same, \d+ noisy/);
  });

  it('compare --json <file> writes it and keeps the table on stdout; two documents cannot share stdout', () => {
    const target = join(dir, 'compare.json');
    const { stdout } = runCli(['compare', v1, other, '--json', target]);
    assert.ok(Array.isArray(JSON.parse(readFileSync(target, 'utf8')).pairs));
    assert.match(stdout, /slower, \d+ faster, \d+ same, \d+ noisy/);
    const both = runCli(['compare', v1, other, '--json', '-', '--md', '-']);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /^cuda-pipe: Only one document can go to stdout \(-\); --json and --md ask to\./);
  });

  it('report --json rewrites a version 1 file as a version 2 Result; --md <file> writes Markdown beside the table', () => {
    const json = runCli(['report', v1, '--json', '-']);
    assert.equal(json.code, 0, json.stderr);
    const [result] = ([] as unknown[]).concat(JSON.parse(json.stdout));
    assert.equal(RunResultSchema.parse(result).version, 2);
    assert.match(json.stderr, /speedup over serial/);
    const md = join(dir, 'report.md');
    const written = runCli(['report', v1, '--md', md]);
    assert.equal(written.code, 0, written.stderr);
    assert.match(readFileSync(md, 'utf8'), /^### cuda-pipe · balanced on NVIDIA H100 80GB HBM3/);
    assert.match(written.stdout, /speedup over serial/);
  });
});
