import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Table from 'cli-table3';
import fc from 'fast-check';
import { parseConfigText } from '../../src/config/load.js';
import { UsageError } from '../../src/errors.js';
import { escapeControl } from '../../src/format.js';
import { packageRoot } from '../../src/paths.js';
import { renderTable } from '../../src/report/big-table.js';
import { renderRunTable } from '../../src/report/exporters/table.js';
import { makeStyle } from '../../src/report/style.js';
import { loadResults, parseResult } from '../../src/result/load.js';
import type { RunResult } from '../../src/result/schema.js';
import { modeId } from '../../src/vocabulary.js';
import { runCli } from '../helpers/cli.js';
import { cpuTimed } from '../helpers/cpu-time.js';

// Saved Results that contradict themselves, that print escape sequences, or that cost more than linear time to
// read and draw: each is refused with exit 2 naming the field, printed as text, or drawn in bounded time.

const traced = join(packageRoot(), 'test', 'fixtures', 'h200-balanced-16-traced.json');
const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-hostile-saved-'));

// biome-ignore lint/suspicious/noExplicitAny: the tests reach into any field of the file as hostile input would.
type Json = Record<string, any>;

const fixture = (): Json => JSON.parse(readFileSync(traced, 'utf8')) as Json;

function save(name: string, result: unknown): string {
  const path = join(dir, `${name}.json`);
  writeFileSync(path, typeof result === 'string' ? result : JSON.stringify(result));
  return path;
}

function refusal(change: (r: Json) => void): string {
  const result = fixture();
  change(result);
  try {
    parseResult(result);
  } catch (error) {
    assert.ok(error instanceof UsageError, `expected a UsageError, got ${String(error)}`);
    return error.message;
  }
  assert.fail('the Result was accepted');
}

/** Every time of a Result multiplied by `factor`, as a hostile edit would scale it. */
function scaled(r: Json, factor: number): void {
  for (const m of r.modes) {
    m.samplesMs = m.samplesMs.map((s: number) => s * factor);
    for (const key of ['median', 'mean', 'min', 'max', 'q1', 'q3', 'iqr', 'stdev']) m.stats[key] *= factor;
  }
}

describe('saved Results that contradict themselves', () => {
  it('refuses statistics that disagree with the mode’s own samples', () => {
    assert.match(
      refusal((r) => {
        r.modes[1].stats.median *= 2;
        r.modes[1].stats.max = r.modes[1].stats.median;
      }),
      /^modes\[1\]\.stats\.median: the median is [\d.]+, but the mode's own samples give [\d.]+; this is not a Result cuda-pipe wrote/,
    );
    assert.match(
      refusal((r) => {
        r.modes[0].samplesMs = r.modes[0].samplesMs.map((s: number) => s * 3);
      }),
      /^modes\[0\]\.stats\.median: the median is [\d.]+, but the mode's own samples give [\d.]+/,
    );
  });

  it('refuses a summary speedup that disagrees with the mode times, and a headline time that is not its mode’s', () => {
    assert.match(
      refusal((r) => {
        r.summary.speedup = 9;
      }),
      /^summary\.speedup: the speedup is 9, but 12\.55\d* ms over 5\.92\d* ms is 2\.119/,
    );
    assert.match(
      refusal((r) => {
        r.summary.overlappedMs = 1;
        r.summary.speedup = r.summary.serialMs;
      }),
      /^summary\.overlappedMs: the headline's time is 1 ms, but mode "overlapped:16x4:depth-first:chunk-per-stream" has a median of 5\.92/,
    );
  });

  it('refuses q1 above q3', () => {
    assert.match(
      refusal((r) => {
        [r.modes[2].stats.q1, r.modes[2].stats.q3] = [r.modes[2].stats.q3, r.modes[2].stats.q1];
      }),
      /^modes\[2\]\.stats\.q3: the first quartile [\d.]+ is above the third [\d.]+/,
    );
  });

  it('refuses an op that ends long after its rep, and a negative device index', () => {
    assert.match(
      refusal((r) => {
        r.timeline.reps[0].ops[3].endMs = 500;
      }),
      /^timeline\.reps\[0\]\.ops\[3\]\.endMs: the op ends at 500 ms, long after its rep ended at 6\.17\d* ms/,
    );
    assert.match(
      refusal((r) => {
        r.devices[0].index = -1;
        for (const m of r.modes) m.device = -1;
      }),
      /^devices\[0\]\.index: a device index is a whole number from 0, got -1/,
    );
  });

  it('refuses times scaled by 1e307 or 1e-320 rather than print +Infinity% or NaN×', () => {
    assert.match(
      refusal((r) => scaled(r, 1e307)),
      /^modes\[0\]\.samplesMs\[0\]: a time must be between 1e-9 and 10000000000 ms, got 1\.2\d*e\+308/,
    );
    assert.match(
      refusal((r) => scaled(r, 1e-320)),
      /^modes\[0\]\.samplesMs\[0\]: a time must be between 1e-9 and 10000000000 ms, got [\d.]+e-3\d\d/,
    );
    const report = runCli(
      [
        'report',
        save(
          'huge',
          (() => {
            const r = fixture();
            scaled(r, 1e307);
            return r;
          })(),
        ),
      ],
      {},
      { timeoutMs: 20_000 },
    );
    assert.equal(report.code, 2, report.stderr);
    assert.doesNotMatch(report.stdout + report.stderr, /Infinity|NaN/);
  });
});

describe('terminal injection', () => {
  it('a config name with escape sequences is refused, naming the field', () => {
    assert.throws(
      () => parseConfigText('name: "x\\e[2J\\e]0;pwned\\a"\nbuffers: {}\n', '/cfg/evil.yaml'),
      (error: unknown) =>
        error instanceof UsageError &&
        /^\/cfg\/evil\.yaml:\d+:\d+: name holds the control character U\+001B, which a terminal would act on/.test(
          error.message,
        ),
    );
    assert.throws(
      () => parseConfigText('buffers:\n  "a\\u202eb": { type: float32, count: 4, role: inout }\n', '/cfg/evil.yaml'),
      /buffers\.a\u202eb holds the control character U\+202E/,
    );
  });

  it('escapes every control and bidi character a Result holds, raw or written as a JSON escape, and nothing else', () => {
    // Raw in the file (JSON.stringify leaves DEL, C1 and the bidi controls as they are), and written as \\b, \\f, \\r
    // and \\u escapes (as it writes the C0 characters): each takes the walk that escapes them.
    const tricky = [
      'a\u202eb',
      'c\u0085d',
      'e\u007ff',
      'g\bh',
      'i\fj',
      'k\rl',
      'm\u0007n',
      'o\u2066p',
      'tab\tand\nline',
    ];
    const r = fixture();
    for (const name of tricky) {
      r.config.name = name;
      assert.equal(loadResults(save('tricky', r))[0]?.config.name, escapeControl(name), JSON.stringify(name));
    }
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 12 }), (name) => {
        r.config.name = name;
        return loadResults(save('drawn', r))[0]?.config.name === escapeControl(name);
      }),
      { numRuns: 200 },
    );
  });

  it('names in a Result reach the terminal escaped, in the table, the errors and Markdown alike', () => {
    const r = fixture();
    r.config.name = 'evil\u001b[2J\u001b]0;pwned\u0007';
    const path = save('evil', r);
    const [loaded] = loadResults(path);
    assert.equal(loaded?.config.name, 'evil\\u001b[2J\\u001b]0;pwned\\u0007');
    for (const args of [
      ['report', path],
      ['report', path, '--md', '-'],
    ]) {
      const run = runCli(args, {}, { timeoutMs: 20_000 });
      assert.equal(run.code, 0, run.stderr);
      assert.doesNotMatch(run.stdout, /[\u0007\u001b]/, args.join(' '));
      assert.match(run.stdout, /evil\\u001b\[2J/);
    }
    r.config.name = 'x';
    r.summary.mode = 'gone\u001b[31m';
    const bad = runCli(['report', save('evil-mode', r)], {}, { timeoutMs: 20_000 });
    assert.equal(bad.code, 2);
    assert.doesNotMatch(bad.stderr, /\u001b/);
    assert.match(bad.stderr, /the headline names mode "gone\\u001b\[31m"/);
  });
});

describe('costs that grow with a Result', () => {
  /** The traced fixture with `count` more overlapped modes, each its own chunk count. */
  function manyModes(count: number): RunResult {
    const r = fixture();
    const template = r.modes.find((m: Json) => m.role.kind === 'overlapped');
    for (let i = 0; i < count; i++) {
      const role = { kind: 'overlapped', layout: { ...template.role.layout, chunks: 1000 + i } };
      r.modes.push({ ...template, id: modeId(role as never), role });
    }
    return parseResult(r);
  }

  it('draws the table of 12,000 modes in linear time (it was quadratic: minutes)', () => {
    const result = manyModes(12_000);
    const { value: table, ms } = cpuTimed(() => renderRunTable(result, makeStyle()));
    assert.ok(ms < 15_000, `took ${ms.toFixed(0)} ms of CPU`);
    assert.equal(table.split('\n').filter((line) => /^│ overlapped \d+×4 /.test(line)).length, 12_001);
  });

  it('a table of 700 rows is the table cli-table3 draws whole', () => {
    const rows = Array.from({ length: 700 }, (_, i) => [
      `mode ${i}`,
      `${(i * 1.37).toFixed(3)} ms`,
      i % 7 === 0 ? 'wide cell here' : '',
    ]);
    const whole = new Table({
      head: ['mode', 'median', 'note'],
      style: { head: [], border: [] },
      colAligns: ['left', 'right', 'right'],
    });
    for (const row of rows) whole.push(row);
    assert.equal(
      renderTable({ head: ['mode', 'median', 'note'], colAligns: ['left', 'right', 'right'], rows }),
      whole.toString(),
    );
  });

  it('report --json and merge refuse a Result nested 200,000 levels deep with exit 2', () => {
    const text = JSON.stringify({ ...fixture(), extra: 0 }).replace(
      '"extra":0',
      `"extra":${'['.repeat(200_000)}${']'.repeat(200_000)}`,
    );
    const path = save('deep', text);
    for (const args of [
      ['report', path, '--json', '-'],
      ['merge', path, traced],
    ]) {
      const run = runCli(args, {}, { timeoutMs: 20_000 });
      assert.equal(run.code, 2, `${args[0]}: ${run.stderr}`);
      assert.match(run.stderr, /deep\.json: the JSON nests more than 64 levels deep \(at character \d+\)/);
      assert.doesNotMatch(run.stderr, /\n\s+at /);
    }
  });

  it('refuses YAML whose aliases expand to 15 million values, before expanding them', () => {
    const text = `a: &a [${Array(150_000).fill('1').join(',')}]\nb: [${Array(99).fill('*a').join(',')}]\nbuffers: {}\n`;
    const { ms } = cpuTimed(() =>
      assert.throws(
        () => parseConfigText(text, '/cfg/expand.yaml'),
        /^UsageError: \/cfg\/expand\.yaml: the YAML expands to more than 1000000 values with its aliases/,
      ),
    );
    assert.ok(ms < 10_000, `took ${ms.toFixed(0)} ms of CPU`);
  });
});
