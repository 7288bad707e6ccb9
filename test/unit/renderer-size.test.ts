import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Chalk } from 'chalk';
import fc from 'fast-check';
import { clip, measure, union } from '../../src/analysis/intervals.js';
import { idleGaps } from '../../src/analysis/timeline.js';
import { renderGantt, rowCells } from '../../src/report/gantt.js';
import { renderSvg, svgLayout } from '../../src/report/svg.js';
import { lanes, renderTrace } from '../../src/report/trace.js';
import {
  analyzeTracedRep,
  MAX_PICTURE_ROWS,
  STAGES,
  type Stage,
  timelineGroups,
} from '../../src/report/timeline-common.js';
import type { RunResult } from '../../src/result/schema.js';
import type { TimelineOp, TracedRep } from '../../src/result/timeline.js';
import { runCli } from '../helpers/cli.js';
import { syntheticRunResult } from '../helpers/synthetic-timeline.js';

// Every renderer is linear (or n log n) in the ops of a rep, draws a bounded picture whatever the rep's size, and
// never spreads an unbounded array into a call. The fast versions are checked against the plain definitions they
// replaced, on random reps; their speed is measured by scripts/bench/renderers.mjs, not timed here.

const plain = new Chalk({ level: 0 });
const KINDS = ['h2d', 'kernel', 'd2h', 'host', 'peer'] as const;

const op = (stream: string, kind: Stage, startMs: number, endMs: number, issuedMs = 0): TimelineOp => ({
  mode: 'm',
  device: 0,
  stream,
  kind,
  chunk: null,
  buffer: null,
  kernel: null,
  bytes: 0,
  startMs,
  endMs,
  issuedMs,
});

/** Ops on a grid of quarter ms, so the arithmetic of both versions is exact. */
const opsArbitrary = fc.array(
  fc
    .record({
      stream: fc.constantFrom('s0', 's1', 's2'),
      kind: fc.constantFrom(...KINDS),
      start: fc.integer({ min: 0, max: 60 }),
      length: fc.integer({ min: 0, max: 12 }),
      issued: fc.integer({ min: 0, max: 64 }),
    })
    .map((o) => op(o.stream, o.kind, o.start / 4, (o.start + o.length) / 4, o.issued / 4)),
  { maxLength: 40 },
);

const repOf = (ops: readonly TimelineOp[]): TracedRep => ({
  mode: 'm',
  device: 0,
  totalMs: 18,
  issueMs: 1,
  streams: [{ id: 's0', flags: 'non-blocking', priority: null }],
  ops: [...ops],
});

/** The Gantt's cells as first written: every cell against every op, quadratic but plainly right. */
function cellsByDefinition(ops: readonly TimelineOp[], spanMs: number, width: number): (Stage | null)[] {
  const cellMs = spanMs > 0 ? spanMs / width : 1;
  const cells = Array.from({ length: width }, (_, c) => {
    const from = c * cellMs;
    const to = from + cellMs;
    const cover = new Map<Stage, number>();
    for (const o of ops) {
      const overlap = Math.min(to, o.endMs) - Math.max(from, o.startMs);
      if (overlap > 0) cover.set(o.kind, (cover.get(o.kind) ?? 0) + overlap);
    }
    const total = [...cover.values()].reduce((a, b) => a + b, 0);
    if (total < cellMs / 2) return null;
    return STAGES.reduce<Stage | null>(
      (best, s) => ((cover.get(s) ?? 0) > (best ? (cover.get(best) ?? 0) : 0) ? s : best),
      null,
    );
  });
  for (const o of ops) {
    const first = Math.min(width - 1, Math.floor(o.startMs / cellMs));
    const last = Math.min(width - 1, Math.max(first, Math.ceil(o.endMs / cellMs) - 1));
    if (!cells.slice(first, last + 1).includes(o.kind))
      cells[Math.min(width - 1, Math.floor((o.startMs + o.endMs) / 2 / cellMs))] = o.kind;
  }
  return cells;
}

/** Trace lanes as first written: the first lane whose last op has ended, found by scanning. */
function lanesByDefinition(ops: readonly TimelineOp[]): TimelineOp[][] {
  const out: TimelineOp[][] = [];
  const ends: number[] = [];
  for (const o of [...ops].sort((a, b) => a.startMs - b.startMs || a.endMs - b.endMs)) {
    const lane = ends.findIndex((end) => end <= o.startMs);
    const at = lane === -1 ? out.length : lane;
    if (lane === -1) out.push([]);
    out[at]!.push(o);
    ends[at] = o.endMs;
  }
  return out;
}

describe('the fast renderers agree with the definitions they replaced', () => {
  it('Gantt cells', () => {
    fc.assert(
      fc.property(opsArbitrary, fc.constantFrom(8, 16, 32, 64), (ops, width) => {
        assert.deepEqual(rowCells(ops, 16, width), cellsByDefinition(ops, 16, width));
      }),
      { numRuns: 300 },
    );
  });

  it('trace lanes', () => {
    fc.assert(
      fc.property(opsArbitrary, (ops) => {
        assert.deepEqual(lanes(ops, 0), lanesByDefinition(ops));
      }),
      { numRuns: 300 },
    );
  });

  it("the time a copy waited for its engine: what other streams' copies of its kinds covered in the wait", () => {
    fc.assert(
      fc.property(opsArbitrary, fc.constantFrom(1, 2), (ops, copyEngines) => {
        const rep = repOf(ops);
        const sharing = (kind: Stage): Stage[] =>
          kind === 'peer'
            ? ['peer']
            : kind === 'h2d' || kind === 'd2h'
              ? copyEngines >= 2
                ? [kind]
                : ['h2d', 'd2h']
              : [];
        for (const gap of idleGaps(rep, { copyEngines })) {
          const waiting = rep.ops[gap.op]!;
          const kinds = sharing(waiting.kind);
          const others = rep.ops
            .filter((o) => o.stream !== gap.stream && kinds.includes(o.kind))
            .map((o) => ({ start: o.startMs, end: o.endMs }));
          const expected = measure(clip(clip(union(others), 0, rep.totalMs), gap.startMs + gap.hostMs, gap.endMs));
          assert.ok(Math.abs(gap.engineMs - expected) < 1e-9, `${gap.engineMs} ≠ ${expected}`);
        }
      }),
      { numRuns: 300 },
    );
  });
});

/** A Result whose one traced rep has `chunks` chunks over `streams` streams, each chunk's ops back to back. */
function large(chunks: number, streams: number): RunResult {
  const base = syntheticRunResult();
  const rep = base.timeline!.reps.find((r) => r.mode !== 'serial')!;
  const ops: TimelineOp[] = [];
  for (let c = 0; c < chunks; c += 1) {
    const stream = `s${c % streams}`;
    const t = c * 0.003;
    ops.push(
      { ...op(stream, 'h2d', t, t + 0.001), mode: rep.mode },
      { ...op(stream, 'kernel', t + 0.001, t + 0.002), mode: rep.mode },
      { ...op(stream, 'd2h', t + 0.002, t + 0.003), mode: rep.mode },
    );
  }
  const streamList = Array.from({ length: streams }, (_, i) => ({
    id: `s${i}`,
    flags: 'non-blocking' as const,
    priority: null,
  }));
  return { ...base, timeline: { reps: [{ ...rep, totalMs: chunks * 0.003, streams: streamList, ops }] } };
}

describe('pictures of large reps', () => {
  it('a rep of 210,000 ops on one stream is analysed and measured without spreading its ops into a call', () => {
    const result = large(70_000, 1);
    const rep = result.timeline!.reps[0]!;
    const [group] = timelineGroups(result);
    assert.equal(group!.spanMs, rep.totalMs);
    const a = analyzeTracedRep(result, rep);
    assert.equal(a.issue.ops, 210_000);
    assert.ok(Math.abs(a.busy.idle) < 1e-6, `idle ${a.busy.idle}`);
  });

  it('draws at most MAX_PICTURE_ROWS streams, and says how many it left out', () => {
    const result = large(1000, 300);
    const gantt = renderGantt(result, { style: plain, columns: 120 });
    assert.equal(gantt.split('\n').filter((l) => /^s\d+ +\|/.test(l)).length, MAX_PICTURE_ROWS);
    assert.match(
      gantt.replace(/\n +/g, ' '),
      new RegExp(`172 more streams not drawn: a picture shows the first ${MAX_PICTURE_ROWS} of 300`),
    );
    const layout = svgLayout(result);
    assert.equal(layout.panels[0]!.rows.length, MAX_PICTURE_ROWS);
    assert.match(renderSvg(result), /172 more streams not drawn/);
    // The trace is data, not a picture: every stream, every op.
    const trace = JSON.parse(renderTrace(result)) as { traceEvents: { ph: string; cat?: string }[] };
    assert.equal(trace.traceEvents.filter((e) => e.ph === 'X' && e.cat !== 'rep').length, 2 * 3000);
  });

  it('draws a row with more ops than pixels a pixel at a time, and says so', () => {
    const result = large(2000, 2);
    const svg = renderSvg(result);
    assert.doesNotMatch(svg, /class="op /);
    assert.match(svg, /class="cells h2d"/);
    assert.match(svg, /Every row has more ops than pixels: drawn a pixel at a time/);
    const bars = svg.match(/<rect class="cells /g)?.length ?? 0;
    assert.ok(bars <= 2 * 960, `${bars} bars for 2 rows`);
  });

  it('bounds the SVG width and refuses a Gantt wider than 1000 columns at the flag', () => {
    assert.equal(svgLayout(large(10, 1), { width: 1e8 }).width, 8192);
    assert.equal(svgLayout(large(10, 1), { width: 1 }).width, 320);
    const wide = renderGantt(large(10, 1), { style: plain, columns: 1e8 });
    assert.ok(wide.split('\n').every((l) => l.length <= 1000));
    const { code, stderr } = runCli(
      ['timeline', 'test/fixtures/h200-balanced-16-traced.json', '--width', '1e8'],
      {},
      { timeoutMs: 20_000 },
    );
    assert.equal(code, 2);
    assert.match(
      stderr,
      /option '--width <columns>' argument '1e8' is invalid\. expected a whole number from 20 to 1000, got "1e8"\./,
    );
  });

  it('run --dry-run --ops lists 16,384 chunks, the most a plan holds', () => {
    const { code, stdout, stderr } = runCli(
      ['run', '--dry-run', '--ops', '--chunks', '16384'],
      {},
      { timeoutMs: 120_000 },
    );
    assert.equal(code, 0, stderr);
    assert.match(stdout, /^ +49163  s\d+ +the record of event end$/m);
  });
});
