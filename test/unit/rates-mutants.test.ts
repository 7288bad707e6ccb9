import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { TOP_COPIES, pinnedRates, ratesFor, ratesFromCopies, ratesFromFile } from '../../src/analysis/rates.js';
import { UsageError } from '../../src/errors.js';
import { packageRoot } from '../../src/paths.js';
import { probeBandwidth } from '../helpers/probe-bandwidth.js';

// The link rates the floor divides bytes by (analysis/rates.ts) at the edges mutation testing found unpinned: which
// copies give a trace's rate, a probe's and a Result's rates per device, the fallback to the first device, and a
// direction borrowing the other's rate.

const close = (actual: number | null | undefined, expected: number, what = '') =>
  assert.ok(actual != null && Math.abs(actual - expected) < 1e-9, `${what} ${actual} ≠ ${expected}`);

const fixtures = join(packageRoot(), 'test', 'fixtures');
const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-rates-mutants-'));
let written = 0;
function write(document: unknown): string {
  written += 1;
  const path = join(dir, `document-${written}.json`);
  writeFileSync(path, JSON.stringify(document));
  return path;
}
const fixture = (name: string) => JSON.parse(readFileSync(join(fixtures, name), 'utf8'));

// 1e6 bytes a ms is 1 GB/s.
const h2d = (bytes: number | null, start: number, end: number, hostMemory?: 'pinned' | 'pageable' | null) => ({
  direction: 'h2d' as const,
  bytes,
  start,
  end,
  ...(hostMemory === undefined ? {} : { hostMemory }),
});

describe("a trace's own rates", { timeout: 5_000 }, () => {
  it('are those of its pinned copies of each direction, of known size and duration; a pageable copy says nothing', () => {
    const base = h2d(2e6, 0, 1);
    assert.deepEqual(ratesFromCopies([base]), { h2d: 2, d2h: null });
    for (const odd of [
      h2d(9e6, 2, 2.1, 'pageable'),
      h2d(null, 2, 2.1),
      h2d(0, 2, 2.1),
      h2d(9e6, 2, 2),
      h2d(9e6, 2, 1.9),
      { ...h2d(9e6, 2, 2.1), direction: 'd2d' as const },
    ])
      close(ratesFromCopies([base, odd]).h2d, 2, JSON.stringify(odd));
    close(ratesFromCopies([base, h2d(6e6, 2, 3, 'pinned')]).h2d, 4, 'pinned');
    close(ratesFromCopies([base, h2d(6e6, 2, 3, null)]).h2d, 4, 'host memory unknown');
  });

  it('take each direction apart', () => {
    const rates = ratesFromCopies([h2d(2e6, 0, 1), { ...h2d(9e6, 1, 4), direction: 'd2h' }]);
    close(rates.h2d, 2, 'h2d');
    close(rates.d2h, 3, 'd2h');
  });

  it(`sum the ${TOP_COPIES} fastest copies' bytes over their summed time, whatever order they come in`, () => {
    assert.equal(TOP_COPIES, 5);
    // 1, 2, ..., 7 GB/s, each 2 ms, the slowest first: the 5 fastest are 3 to 7 GB/s, 50e6 bytes in 10 ms.
    const copies = [1, 2, 3, 4, 5, 6, 7].map((gb, i) => h2d(gb * 2e6, i * 2, i * 2 + 2));
    close(ratesFromCopies(copies).h2d, 5, 'in order');
    close(ratesFromCopies([...copies].reverse()).h2d, 5, 'reversed');
    // A fast copy of few bytes against a slow one of many: rank by rate, not bytes. 1 GB/s × 6 and 4 GB/s.
    const slowBig = [0, 1, 2, 3, 4, 5].map((i) => h2d(10e6, i * 10, i * 10 + 10));
    close(ratesFromCopies([...slowBig, h2d(4e6, 70, 71)]).h2d, (4e6 + 4 * 10e6) / (1 + 40) / 1e6, 'by rate');
  });
});

describe('rates from a probe', { timeout: 5_000 }, () => {
  const probe = (first: unknown[] | null, second: unknown[] | null) => {
    const document = fixture('h200x2-probe.json');
    document.devices[0].bandwidth = first;
    document.devices[1].bandwidth = second;
    return write(document);
  };

  it("are each probed device's pinned rate of each direction, the pageable ones and other directions passed over", () => {
    const source = ratesFromFile(
      probe(
        [
          probeBandwidth('d2h', 'pageable', 11),
          probeBandwidth('h2d', 'pageable', 12),
          probeBandwidth('d2h', 'pinned', 54.1),
        ],
        [
          probeBandwidth('bidirectional', 'pinned', 90),
          probeBandwidth('h2d', 'pinned', 50),
          probeBandwidth('d2h', 'pinned', 51),
        ],
      ),
    );
    assert.equal(source.source, 'probe');
    assert.deepEqual(
      [...source.byDevice],
      [
        [0, { h2d: null, d2h: 54.1 }],
        [1, { h2d: 50, d2h: 51 }],
      ],
    );
  });

  it('leave out a device probed without --bandwidth, or with an empty list', () => {
    const source = ratesFromFile(probe([], [probeBandwidth('h2d', 'pinned', 50)]));
    assert.deepEqual([...source.byDevice.keys()], [1]);
    assert.deepEqual(ratesFor(source, 0), { h2d: 50, d2h: null });
  });

  it('are refused, with a hint, where no device has any', () => {
    assert.throws(
      () => ratesFromFile(probe(null, [])),
      (error: unknown) =>
        error instanceof UsageError &&
        /the probe has no copy rates/.test(error.message) &&
        /probe --bandwidth --json/.test(error.hint ?? ''),
    );
  });
});

describe("rates from a Result's traced copies", { timeout: 5_000 }, () => {
  const op = (device: number, kind: string, startMs: number, endMs: number, bytes: number, engine?: number[]) => ({
    mode: 'm',
    device,
    stream: 's0',
    chunk: 0,
    startMs,
    endMs,
    issuedMs: 0,
    kind,
    buffer: kind === 'kernel' ? null : 'b',
    kernel: kind === 'kernel' ? 'k' : null,
    bytes,
    ...(engine ? { engineStartMs: engine[0], engineEndMs: engine[1] } : {}),
  });
  type Role = { kind: string; stage?: string };
  const copyAlone = ({ role }: { role: Role }) =>
    role.kind === 'stage' && (role.stage === 'h2d' || role.stage === 'd2h');
  /** The recorded Result with these traced ops and without its copies timed alone, which would give the rates. */
  const result = (ops: unknown[] | null) => {
    const document = fixture('h200-balanced-16-traced.json');
    document.modes = document.modes.filter((m: { role: Role }) => !copyAlone(m));
    if (ops === null) document.timeline = null;
    else document.timeline.reps = [{ ...document.timeline.reps[0], ops }];
    return document;
  };

  it("are each device's copies, timed by their engine where the trace gives it, kernels passed over", () => {
    const source = ratesFromFile(
      write(
        result([
          op(0, 'h2d', 0, 4, 4e6, [1, 3]), // 2 GB/s on the engine, 1 GB/s from start to end
          op(0, 'd2h', 4, 5, 3e6),
          op(0, 'kernel', 5, 5.001, 9e9),
          op(1, 'h2d', 0, 1, 8e6),
        ]),
      ),
    );
    assert.equal(source.source, 'result');
    assert.equal(source.file?.endsWith('.json'), true);
    const zero = ratesFor(source, 0);
    close(zero.h2d, 2, 'device 0 h2d');
    close(zero.d2h, 3, 'device 0 d2h');
    assert.deepEqual(ratesFor(source, 1), { h2d: 8, d2h: null });
  });

  it('take the rates of every Result in a file', () => {
    const source = ratesFromFile(write([result([op(0, 'd2h', 0, 1, 5e6)]), result([op(1, 'h2d', 0, 1, 6e6)])]));
    assert.deepEqual(
      [...source.byDevice],
      [
        [0, { h2d: null, d2h: 5 }],
        [1, { h2d: 6, d2h: null }],
      ],
    );
  });

  it('leave out a device that copied nothing', () => {
    const source = ratesFromFile(write(result([op(0, 'kernel', 0, 1, 1e6), op(1, 'd2h', 0, 2, 4e6)])));
    assert.deepEqual([...source.byDevice], [[1, { h2d: null, d2h: 2 }]]);
  });

  it('are refused, with a hint, where the Result traced no copies or nothing at all', () => {
    for (const document of [result([op(0, 'kernel', 0, 1, 1e6)]), result(null)])
      assert.throws(
        () => ratesFromFile(write(document)),
        (error: unknown) =>
          error instanceof UsageError &&
          /the Result has no copies to take rates from, alone or traced/.test(error.message) &&
          /tracing on/.test(error.hint ?? ''),
      );
  });
});

describe("rates from a Result's copies each timed alone", { timeout: 5_000 }, () => {
  it('are its H2D and D2H alone, before its traced copies, which ran side by side and look slower', () => {
    const source = ratesFromFile(join(fixtures, 'h200-balanced-16-traced.json'));
    const rates = ratesFor(source, 0);
    close(Number(rates.h2d?.toFixed(2)), 55.39, 'h2d');
    close(Number(rates.d2h?.toFixed(2)), 55.16, 'd2h');
    assert.deepEqual([...source.byDevice.keys()], [0]);
  });

  it("are passed over where a buffer is pageable: the Result's traced pinned copies give the rates then", () => {
    const document = fixture('h200-balanced-16-traced.json');
    document.buffers[1].hostMemory = 'pageable';
    const rates = ratesFor(ratesFromFile(write(document)), 0);
    close(Number(rates.h2d?.toFixed(2)), 34.9, 'h2d from the traced copies');
  });
});

describe('rates from an A/B document', { timeout: 5_000 }, () => {
  it('are refused, with a hint: it holds no copies', () => {
    // A version-1 A/B document of no modes, put together from the recorded probe's and Result's own parts.
    const probe = fixture('h200x2-probe.json');
    const run = fixture('h200-balanced-16-traced.json');
    const side = (name: string) => ({
      name,
      path: null,
      hash: 'h',
      verification: { status: 'skipped', mismatches: [] },
    });
    const ab = {
      schema: 'cuda-pipe/ab',
      version: 1,
      tool: probe.tool,
      createdAt: run.createdAt,
      run: run.run,
      device: probe.devices[0].facts,
      software: probe.software,
      a: side('a'),
      b: side('b'),
      rule: {
        minPairs: 5,
        maxPairs: 50,
        maxTimeMs: 1e3,
        warmup: 1,
        floor: 0.02,
        multiple: 3,
        threshold: null,
        confidence: 0.95,
      },
      gate: false,
      clocks: { checked: false, note: '' },
      modes: [],
      unpaired: [],
      notes: [],
    };
    assert.throws(
      () => ratesFromFile(write(ab)),
      (error: unknown) =>
        error instanceof UsageError &&
        /an A\/B document holds no copy rates/.test(error.message) &&
        /probe --bandwidth --json/.test(error.hint ?? ''),
    );
  });
});

describe("a device's rates", { timeout: 5_000 }, () => {
  const source = (entries: [number, { h2d: number | null; d2h: number | null }][]) => ({
    source: 'probe' as const,
    file: 'p.json',
    byDevice: new Map(entries),
  });

  it("are its own, else the file's first device's, else none", () => {
    const two = source([
      [3, { h2d: 1, d2h: 2 }],
      [1, { h2d: 5, d2h: 6 }],
    ]);
    assert.deepEqual(ratesFor(two, 1), { h2d: 5, d2h: 6 });
    assert.deepEqual(ratesFor(two, 0), { h2d: 1, d2h: 2 });
    assert.deepEqual(ratesFor(source([]), 0), { h2d: null, d2h: null });
  });

  it('let a direction without a rate borrow the other', () => {
    assert.deepEqual(pinnedRates({ h2d: null, d2h: 7 }), { h2d: 7, d2h: 7, borrowed: 'h2d' });
    assert.deepEqual(pinnedRates({ h2d: 9, d2h: null }), { h2d: 9, d2h: 9, borrowed: 'd2h' });
    assert.deepEqual(pinnedRates({ h2d: 9, d2h: 7 }), { h2d: 9, d2h: 7, borrowed: null });
    assert.deepEqual(pinnedRates({ h2d: null, d2h: null }), { h2d: null, d2h: null, borrowed: null });
  });
});
