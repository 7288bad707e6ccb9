import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ModeResult } from '../../src/model/mode.js';
import type { RunResult } from '../../src/result/schema.js';
import { adviceFor } from '../../src/measure/advice.js';
import { comparisonText, leadComparisons, modelLines, serialCaveat } from '../../src/report/labels.js';
import { renderRunMarkdown } from '../../src/report/exporters/markdown.js';
import { renderRunTable } from '../../src/report/exporters/table.js';
import { makeStyle } from '../../src/report/style.js';
import { modeId, type OverlapLayout } from '../../src/vocabulary.js';
import { makeResult, samplesAround } from '../helpers/results.js';

const plain = makeStyle({ isTTY: false } as NodeJS.WriteStream);
const base = makeResult({ noise: 0.001 });
const template = base.modes.find((m) => m.role.kind === 'overlapped') as ModeResult;
const LAYOUT: OverlapLayout = { chunks: 32, streams: 4, order: 'depth-first', topology: 'chunk-per-stream' };

/** The overlapped mode re-cast with another layout and median. */
function variant(layout: OverlapLayout, medianMs: number, extra: Partial<ModeResult> = {}): ModeResult {
  const role = { kind: 'overlapped' as const, layout };
  const samplesMs = samplesAround(medianMs, 0);
  return { ...template, id: modeId(role), role, samplesMs, stats: { ...template.stats, median: medianMs }, ...extra };
}

const withModes = (modes: ModeResult[]): RunResult => ({
  ...base,
  modes: [...base.modes.filter((m) => m.role.kind !== 'overlapped'), ...modes],
});

describe('headlines that compare like with like', () => {
  it('leads a graph config with graph replay against stream issue of the same layout', () => {
    const result = withModes([variant(LAYOUT, 4.118), variant({ ...LAYOUT, issue: 'graph' }, 0.349)]);
    assert.deepEqual(leadComparisons(result).map(comparisonText), [
      'graph replay against stream issue, 32×4 depth-first: 11.80× (4.118 ms → 0.349 ms)',
    ]);
    const table = renderRunTable(result, plain);
    const lead = table.indexOf('graph replay against stream issue');
    assert.ok(
      lead > 0 && lead < table.indexOf('speedup over serial'),
      'the graph comparison comes before any speedup over serial',
    );
    assert.match(
      renderRunMarkdown(result),
      /\n\*\*graph replay against stream issue, 32×4 depth-first: 11\.80× \(4\.118 ms → 0\.349 ms\)\*\*\n/,
    );
  });

  it('leads a host-stage config with the stage against without it, and gives the layout without the stage no speedup over a serial run that has it', () => {
    const withStage = variant({ ...LAYOUT, host: 'checksum' }, 2.1);
    const without = variant(LAYOUT, 1.521);
    const result = withModes([withStage, without]);
    assert.deepEqual(leadComparisons(result).map(comparisonText), [
      'with the host stage checksum against without it, 32×4 depth-first: 0.72× (1.521 ms → 2.100 ms)',
    ]);
    assert.equal(serialCaveat(withStage, result), null);
    assert.deepEqual(serialCaveat(without, result), {
      omit: true,
      text: 'no speedup over serial: serial runs the host stage checksum and this layout does not, so the figure would not compare like with like',
      brief: 'none: serial runs the host stage checksum and this layout does not',
    });
    const table = renderRunTable(result, plain, { columns: 10_000, verbose: true });
    assert.match(table, /│ overlapped 32×4 depth-first +│ 1\.521 ms │[^\n]* +│\n/, 'its speedup cell is empty');
    assert.match(
      table,
      /^overlapped 32×4 depth-first:\n {2}no speedup over serial: serial runs the host stage checksum/m,
    );
  });

  it('says what a speedup over serial compares when there is nothing to overlap', () => {
    const result = withModes([variant(LAYOUT, 4.118, { bytes: { h2d: 0, d2h: 0 } })]);
    const mode = result.modes.find((m) => m.role.kind === 'overlapped') as ModeResult;
    assert.deepEqual(serialCaveat(mode, result), {
      omit: false,
      text: 'nothing to overlap (no copies): serial launches each kernel once on the whole buffers, this layout once per chunk (32)',
      brief: 'nothing to overlap',
    });
    assert.match(
      renderRunTable(result, plain),
      /^speedup over serial: [\d.]+× ± [\d.]+ \(95%; [\d.]+ ms → 4\.118 ms; nothing to overlap\)$/m,
    );
  });

  it('keeps the plain speedup over serial for a config that asks only whether overlap pays', () => {
    assert.deepEqual(leadComparisons(base), []);
    assert.equal(serialCaveat(template, base), null);
  });
});

describe('advice from what the layout has', () => {
  const withModel = (
    change: (model: NonNullable<NonNullable<ModeResult['analysis']>['model']>) => object,
    gap: Array<{ cause: string; ms: number }>,
  ) => {
    const analysis = template.analysis as NonNullable<ModeResult['analysis']>;
    const model = analysis.model as NonNullable<typeof analysis.model>;
    const changed = { ...model, ...change(model), gap } as typeof model;
    const bound = { ...analysis.bound, term: analysis.bound.limitedBy, perOpMs: 0 };
    // The advice as `run` and `report` draw it (measure/advice.ts), which the renderers print.
    const advice = adviceFor(template, changed, { bound, linkGbPerSecond: null, words: null, limit: null });
    return { ...template, analysis: { ...analysis, model: { ...changed, advice } } } as ModeResult;
  };
  const unexplained = [{ cause: 'serialisation and effects the model does not capture', ms: 1 }];

  it('blames no legacy default stream, pageable memory or synchronous call in a config that has none, and says what the model leaves out', () => {
    const line = modelLines(withModel(() => ({ serialisers: [] }), unexplained))[1] ?? '';
    assert.match(
      line,
      /this config has no legacy default stream, pageable memory or synchronous call, so it is kernels and copies contending/,
    );
    assert.doesNotMatch(line, /look for ops on the legacy default stream/);
  });

  it('names the serialiser a layout has', () => {
    const line = modelLines(withModel(() => ({ serialisers: ['pageable memory'] }), unexplained))[1] ?? '';
    assert.match(line, /this layout has pageable memory, which runs ops one after another/);
  });

  it('names streams that are all the per-thread default stream as one stream', () => {
    const line =
      modelLines(
        withModel(() => ({ serialisers: ['per-thread default stream'] }), [{ cause: 'too few streams', ms: 1 }]),
      )[1] ?? '';
    assert.match(
      line,
      /every stream is the per-thread default stream, so the 4 streams are one .* use `streamKind: non-blocking`/,
    );
  });

  it('says when no layout the model predicts beats serial, rather than a floor above it', () => {
    const line =
      modelLines(
        withModel(
          (m) => ({ floor: { ...m.floor, chunks: 1, streams: 1, ms: 0.818, limitedBy: 'serial' } }),
          unexplained,
        ),
      )[0] ?? '';
    assert.match(line, /the workload's floor serial, 0\.818 ms measured: no layout the model predicts beats it/);
  });
});
