import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { renderBmf } from '../../src/report/exporters/bmf.js';
import { csvField, renderRunCsv } from '../../src/report/exporters/csv.js';
import { gabEntries } from '../../src/report/exporters/gab.js';
import { loadResults } from '../../src/result/load.js';
import { runCli } from '../helpers/cli.js';

const FIXTURE = 'test/fixtures/h200-compute-bound.json';
const [recorded] = loadResults(FIXTURE);
if (!recorded) throw new Error(`${FIXTURE} holds no Result`);

/** A CSV reader enough for RFC 4180 quoting, to read back what the exporter wrote. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quoted && c === '"' && text[i + 1] === '"') {
      field += '"';
      i++;
    } else if (c === '"') {
      quoted = !quoted;
    } else if (!quoted && (c === ',' || c === '\n')) {
      row.push(field);
      field = '';
      if (c === '\n') {
        rows.push(row);
        row = [];
      }
    } else {
      field += c;
    }
  }
  row.push(field);
  rows.push(row);
  return rows;
}

describe('CSV export', () => {
  it('quotes commas, quotes and line breaks as RFC 4180 does, and defuses a spreadsheet formula', () => {
    assert.equal(csvField('plain'), 'plain');
    assert.equal(csvField('a,b'), '"a,b"');
    assert.equal(csvField('say "hi"'), '"say ""hi"""');
    assert.equal(csvField('two\nlines'), '"two\nlines"');
    assert.equal(csvField('=HYPERLINK("x")'), `"'=HYPERLINK(""x"")"`);
    assert.equal(csvField(-1.5), '-1.5');
    assert.equal(csvField(null), '');
    assert.equal(csvField(Number.NaN), '');
  });

  it('writes a header and one row per mode, each median as recorded', () => {
    const rows = parseCsv(renderRunCsv([recorded]));
    const [head, ...body] = rows;
    assert.ok(head);
    assert.equal(body.length, recorded.modes.length);
    const median = head.indexOf('median_ms');
    const mode = head.indexOf('mode');
    for (const [i, m] of recorded.modes.entries()) {
      assert.equal(body[i]?.[mode], m.id);
      assert.equal(Number(body[i]?.[median]), m.stats.median);
      assert.equal(body[i]?.length, head.length);
    }
  });

  it('reads back a config name holding a comma, quotes and a newline as it was', () => {
    const name = 'odd, "quoted"\nname';
    const rows = parseCsv(renderRunCsv([{ ...recorded, config: { ...recorded.config, name } }]));
    assert.equal(rows[1]?.[0], name);
    assert.equal(rows.length, recorded.modes.length + 1);
  });
});

describe('Bencher Metric Format export', () => {
  const document = JSON.parse(renderBmf([recorded])) as Record<
    string,
    { latency: { value: number; lower_value: number; upper_value: number } }
  >;

  it('gives every compared mode its median latency in ns, the quartiles as lower and upper values', () => {
    const serial = recorded.modes.find((m) => m.role.kind === 'serial');
    assert.ok(serial);
    assert.deepEqual(document['compute-bound/serial'], {
      latency: {
        value: serial.stats.median * 1e6,
        lower_value: serial.stats.q1 * 1e6,
        upper_value: serial.stats.q3 * 1e6,
      },
    });
    for (const { latency } of Object.values(document))
      assert.ok(latency.lower_value <= latency.value && latency.value <= latency.upper_value);
  });

  it('leaves out the issue-cost modes, which time the host, as compare does', () => {
    const issueCost = recorded.modes.filter((m) => m.role.kind === 'issue-cost');
    assert.ok(issueCost.length > 0);
    assert.equal(Object.keys(document).length, recorded.modes.length - issueCost.length);
    assert.ok(!Object.keys(document).some((name) => name.includes('issue-cost')));
  });
});

describe('github-action-benchmark export', () => {
  it('gives each mode its median in ms and range ± half the distance between its quartiles', () => {
    const entries = gabEntries([recorded]);
    const overlapped = recorded.modes.find((m) => m.role.kind === 'overlapped');
    assert.ok(overlapped);
    const entry = entries.find((e) => e.name === `compute-bound/${overlapped.id}`);
    assert.ok(entry);
    assert.equal(entry.unit, 'ms');
    assert.equal(entry.value, overlapped.stats.median);
    assert.equal(entry.range, `±${((overlapped.stats.q3 - overlapped.stats.q1) / 2).toPrecision(3)}`);
    assert.match(entry.extra, /^overlapped; 15 reps on NVIDIA H200/);
  });

  it('keeps names unique across Results of one config (one per --host-memory kind) and says the rank', () => {
    const names = gabEntries([recorded, recorded, { ...recorded, run: { ...recorded.run, rank: 3 } }]).map(
      (e) => e.name,
    );
    assert.equal(new Set(names).size, names.length);
    assert.ok(names.includes('compute-bound#2/serial'));
    assert.ok(names.includes('compute-bound@rank3/serial'));
  });
});

describe('export flags', () => {
  it('report --csv, --bmf and --gab write their files from a saved Result', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-exports-'));
    const run = runCli([
      'report',
      FIXTURE,
      '--csv',
      join(dir, 'r.csv'),
      '--bmf',
      join(dir, 'r.bmf.json'),
      '--gab',
      join(dir, 'r.gab.json'),
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(readFileSync(join(dir, 'r.csv'), 'utf8'), `${renderRunCsv([recorded])}\n`);
    assert.deepEqual(JSON.parse(readFileSync(join(dir, 'r.bmf.json'), 'utf8')), JSON.parse(renderBmf([recorded])));
    assert.deepEqual(JSON.parse(readFileSync(join(dir, 'r.gab.json'), 'utf8')), gabEntries([recorded]));
  });

  it('run --dry-run refuses --csv, as it does every document: a dry run has no Result', () => {
    const run = runCli(['run', '--dry-run', '--csv', '-']);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /--csv cannot go with --dry-run/);
  });
});
