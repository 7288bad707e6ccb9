import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { clockFactor, clockMatch } from '../../src/clocks.js';
import { formatRate } from '../../src/format.js';
import { adviceFor, type AdviceModel, SAME_LAYOUT } from '../../src/measure/advice.js';
import type { Bound, DeviceParts, LayoutShape } from '../../src/measure/bound.js';
import { predictedFloor } from '../../src/measure/floor.js';
import type { GapCause } from '../../src/measure/gap.js';
import { GapCauseSchema } from '../../src/model/analysis.js';
import type { ModeResult } from '../../src/model/mode.js';
import { makeResult } from '../helpers/results.js';

// The model's conclusions over made-up parts: whatever was measured, the predicted best is never below a floor that
// was measured, a change never names the layout it is made on, and no rate reads 0.0 GB/s.

const ms = (max: number) => fc.double({ min: 0, max, noNaN: true, noDefaultInfinity: true });

const parts: fc.Arbitrary<DeviceParts> = fc.record({
  h2dMs: ms(20),
  d2hMs: ms(20),
  kernelWholeMs: ms(20),
  h2dBytes: fc.integer({ min: 0, max: 2 ** 30 }),
  d2hBytes: fc.integer({ min: 0, max: 2 ** 30 }),
  h2dCopiesPerChunk: fc.integer({ min: 0, max: 3 }),
  d2hCopiesPerChunk: fc.integer({ min: 0, max: 3 }),
  kernelsPerChunk: fc.integer({ min: 0, max: 3 }),
  linkMs: fc.option(ms(40), { nil: null }),
  linkPieces: fc.integer({ min: 1, max: 64 }),
  copyEngines: fc.integer({ min: 0, max: 3 }),
  h2dOpMs: ms(0.01),
  d2hOpMs: ms(0.01),
  launchOpMs: ms(0.01),
  hostCopyMs: ms(0.01),
  hostLaunchMs: ms(0.01),
  hostSyncMs: ms(0.005),
  gated: fc.boolean(),
});

const layout: fc.Arbitrary<LayoutShape> = fc.record({
  chunks: fc.integer({ min: 1, max: 256 }),
  streams: fc.integer({ min: 1, max: 16 }),
  issue: fc.constantFrom('stream' as const, 'graph' as const),
  kernelsChunkedMs: fc.option(ms(20), { nil: null }),
});

describe('the predicted best layout', () => {
  it('is never below the kernels alone, nor below a floor a kind measured, whatever the parts', {
    timeout: 30_000,
  }, () => {
    fc.assert(
      fc.property(parts, layout, ms(30), fc.integer({ min: 1, max: 4096 }), (p, shape, kindFloorMs, maxChunks) => {
        // A kind's term (a CPU stage, say) measured at kindFloorMs a rep, whatever the chunks.
        const withKind = (gpu: Bound): Bound => {
          const term = {
            term: 'CPU stage' as const,
            steadyMs: kindFloorMs,
            perOpMs: 0,
            fillDrainMs: 0,
            ms: kindFloorMs,
          };
          return term.ms > gpu.ms ? { ...term, terms: [...gpu.terms, term] } : { ...gpu, terms: [...gpu.terms, term] };
        };
        const best = predictedFloor(p, shape, maxChunks, null, withKind);
        assert.ok(best);
        const kernels =
          shape.kernelsChunkedMs !== null && p.kernelWholeMs > 0
            ? Math.min(p.kernelWholeMs, shape.kernelsChunkedMs)
            : p.kernelWholeMs;
        assert.ok(best.bound.ms >= kindFloorMs - 1e-9, `${best.bound.ms} below the kind's ${kindFloorMs}`);
        assert.ok(best.bound.ms >= kernels - 1e-9, `${best.bound.ms} below the kernels alone, ${kernels}`);
      }),
    );
  });

  it('leaves out the chunk counts a kind cannot predict, and is none where it can predict none', {
    timeout: 30_000,
  }, () => {
    fc.assert(
      fc.property(parts, layout, fc.integer({ min: 1, max: 64 }), (p, shape, only) => {
        const best = predictedFloor(p, shape, 4096, null, (gpu, chunks) => (chunks === only ? gpu : null));
        // Only the powers of two are searched.
        if ((only & (only - 1)) === 0) assert.equal(best?.chunks, only);
        else assert.equal(best, null);
      }),
    );
  });
});

const CAUSES: readonly GapCause[] = GapCauseSchema.options;

describe("the model's advice", () => {
  const base = makeResult({ noise: 0.001 });
  const template = base.modes.find((m) => m.role.kind === 'overlapped') as ModeResult;
  const model = template.analysis?.model as NonNullable<NonNullable<ModeResult['analysis']>['model']>;

  it('never names the layout it is made on, nor one predicted no faster, and saves no more than the floor allows', {
    timeout: 30_000,
  }, () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 64 }),
        fc.integer({ min: 1, max: 16 }),
        fc.integer({ min: 1, max: 64 }),
        fc.integer({ min: 1, max: 16 }),
        fc.double({ min: 0.1, max: 10, noNaN: true }),
        fc.double({ min: 0.1, max: 1, noNaN: true }),
        fc.double({ min: 1, max: 2, noNaN: true }),
        fc.constantFrom(...CAUSES),
        fc.boolean(),
        (chunks, streams, bestChunks, bestStreams, boundMs, bestShare, slower, cause, serial) => {
          const mode = {
            ...template,
            role: {
              kind: 'overlapped' as const,
              layout: { chunks, streams, order: 'depth-first' as const, topology: 'chunk-per-stream' as const },
            },
          };
          mode.stats = { ...template.stats, median: boundMs * slower };
          const floor = serial
            ? { chunks: 1, streams: 1, ms: boundMs * bestShare, limitedBy: 'serial' as const }
            : { chunks: bestChunks, streams: bestStreams, ms: boundMs * bestShare, limitedBy: 'link' as const };
          const bound: Bound = { term: 'link', steadyMs: boundMs, perOpMs: 0, fillDrainMs: 0, ms: boundMs, terms: [] };
          const advised: AdviceModel = {
            ...model,
            floor,
            idealMs: Math.min(model.idealMs, floor.ms),
            gap: [{ cause, ms: boundMs * slower - floor.ms + 0.001 }],
          };
          const advice = adviceFor(mode, advised, { bound, linkGbPerSecond: null, words: null, limit: null });
          assert.ok(advice);
          if (advice.code !== 'layout') return;
          assert.ok(advice.to && (advice.to.chunks !== chunks || advice.to.streams !== streams), advice.change ?? '');
          assert.ok(floor.ms < bound.ms * (1 - SAME_LAYOUT), 'a layout predicted no faster is this one');
          assert.ok(advice.savingMs >= 0 && advice.savingMs <= mode.stats.median - floor.ms + 1e-9);
          assert.equal(advice.predictedMs, mode.stats.median - advice.savingMs);
          assert.doesNotMatch(advice.change ?? '', new RegExp(`^use ${chunks} chunks over ${streams} streams`));
        },
      ),
    );
  });
});

describe('a rate', () => {
  it('never reads 0.0 GB/s, and keeps three significant digits below 1 GB/s', { timeout: 10_000 }, () => {
    fc.assert(
      fc.property(fc.double({ min: 1e-12, max: 1e4, noNaN: true }), (gbps) => {
        const text = formatRate(gbps);
        assert.doesNotMatch(text, /^0(\.0+)? /);
        if (gbps < 1) assert.match(text, /^\d+(\.\d+)? (MB|KB|B)\/s$/);
      }),
    );
    assert.equal(formatRate(128 / 5.62e-6 / 1e9), '22.8 MB/s');
    assert.equal(formatRate(0), '–');
  });
});

describe('a kernel part put at the clock of the mode it bounds', () => {
  it('takes no longer there than it could at any pair of clocks NVML read', { timeout: 10_000 }, () => {
    const range = fc
      .tuple(fc.integer({ min: 300, max: 2100 }), fc.integer({ min: 0, max: 600 }))
      .map(([min, spread]) => ({ min, max: min + spread }));
    fc.assert(
      fc.property(range, range, fc.double({ min: 0.001, max: 100, noNaN: true }), (mode, part, ms) => {
        const match = clockMatch(mode, [part]);
        const scaled = ms * clockFactor(match, part);
        if (match.status !== 'rebuilt') return assert.equal(scaled, ms);
        for (const p of [part.min, part.max])
          for (const m of [mode.min, mode.max]) assert.ok(scaled <= (ms * p) / m + 1e-9);
      }),
    );
  });
});
