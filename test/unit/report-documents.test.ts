import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { renderAbMarkdown, renderAbTable } from '../../src/report/ab.js';
import { renderProbe } from '../../src/report/probe.js';
import { makeStyle } from '../../src/report/style.js';
import { AbResultSchema } from '../../src/result/ab.js';
import { loadDocument } from '../../src/result/load.js';
import { ProbeDocumentSchema } from '../../src/result/probe.js';
import { DEFAULT_COLUMNS, fitLines } from '../../src/report/width.js';
import { runCli } from '../helpers/cli.js';

// Documents recorded on the H200 hosts: an `ab --json` of two identical configs, and `probe --json` of two GPUs.
// Piped, report's output fits DEFAULT_COLUMNS.
const AB = 'docs/measurements/2026-11-23-h200-issues15-16/verdicts/ab-base-3.json';
const PROBE = 'test/fixtures/h200x2-probe.json';
const plain = makeStyle({ isTTY: false } as NodeJS.WriteStream);
const read = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as unknown;

describe('report re-renders every document the tool writes', () => {
  it('tells an A/B document, a probe and Results apart by their schema', () => {
    assert.equal(loadDocument(AB).kind, 'ab');
    assert.equal(loadDocument(PROBE).kind, 'probe');
    assert.equal(loadDocument('test/fixtures/h200-compute-bound.json').kind, 'results');
  });

  it('prints a saved A/B document as ab printed it, and its Markdown with --md -', () => {
    const ab = AbResultSchema.parse(read(AB));
    const table = runCli(['report', AB]);
    assert.equal(table.code, 0, table.stderr);
    assert.equal(table.stdout, `${fitLines(renderAbTable(ab, plain, DEFAULT_COLUMNS), DEFAULT_COLUMNS)}\n`);
    assert.match(table.stdout, /overlapped 16×4 depth-first/);
    const md = runCli(['report', AB, '--md', '-']);
    assert.equal(md.code, 0, md.stderr);
    assert.equal(md.stdout, `${renderAbMarkdown(ab)}\n`);
  });

  it('prints a saved probe as probe printed it, and writes it again with --json', () => {
    const probe = ProbeDocumentSchema.parse(read(PROBE));
    const run = runCli(['report', PROBE]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, `${fitLines(renderProbe(probe, plain, DEFAULT_COLUMNS), DEFAULT_COLUMNS)}\n`);
    const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-report-'));
    const again = runCli(['report', PROBE, '--json', join(dir, 'probe.json')]);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(read(join(dir, 'probe.json')), probe);
  });

  it('refuses a format the document cannot be drawn in, naming the flag and what it can write', () => {
    const run = runCli(['report', PROBE, '--csv', '-']);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /--csv cannot render a probe document/);
    assert.match(run.stderr, /report writes --json/);
    const ab = runCli(['report', AB, '--svg', '-']);
    assert.equal(ab.code, 2);
    assert.match(ab.stderr, /--svg cannot render an A\/B document/);
  });

  it('names the field of an A/B document that does not match its schema', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-report-'));
    const broken = join(dir, 'ab.json');
    writeFileSync(broken, JSON.stringify({ ...(read(AB) as object), modes: 'none' }));
    const run = runCli(['report', broken]);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /ab\.json: modes: not a valid A\/B document/);
  });
});
