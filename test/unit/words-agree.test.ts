import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { mergeResults } from '../../src/compare/merge.js';
import { formatEfficiency, formatRatioBelowOne, formatRate, gbPerSecond } from '../../src/format.js';
import { adviceFor } from '../../src/measure/advice.js';
import { runWarnings } from '../../src/measure/warnings.js';
import { renderRunMarkdown } from '../../src/report/exporters/markdown.js';
import { renderRunTable } from '../../src/report/exporters/table.js';
import { renderHtml } from '../../src/report/html.js';
import { timingLine } from '../../src/report/labels.js';
import { renderMerge } from '../../src/report/merge.js';
import { makeStyle } from '../../src/report/style.js';
import { loadResults } from '../../src/result/load.js';
import type { RunResult } from '../../src/result/schema.js';
import { nvrtcSkipReason } from '../helpers/nvrtc.js';
import { runCli } from '../helpers/cli.js';
import { makeResult } from '../helpers/results.js';

// Issue 39: words that disagreed, each pinned here: the README's pointer to a line the screen did not show, one
// efficiency in three formats, one link at two rates, "slower than serial (1.00×)", "depth-first; .", a stop rule
// that did not say which mode it stopped, and kernels --check's verdict last.

const plain = makeStyle({ isTTY: false } as NodeJS.WriteStream);
const table = (result: RunResult, verbose = false) => renderRunTable(result, plain, { columns: 100, verbose });
const one = (path: string) => {
  const [result] = loadResults(path);
  assert.ok(result);
  return result;
};

describe("the README's set-up", () => {
  it('points at `cache hit` in the `kernels:` line that run --verbose prints, which the default screen leaves out', () => {
    const readme = readFileSync('README.md', 'utf8').replace(/\s+/g, ' ');
    assert.ok(readme.includes('(`run --verbose` says `cache hit` in its `kernels:` line)'));
    assert.ok(!readme.includes('in the `kernels:` line above'));
    const cached = one('test/fixtures/h100-balanced-1.json');
    assert.ok(cached.kernels.every((k) => k.compile.cached));
    assert.match(table(cached, true), /^kernels: fma \(fma_loop, cache hit for sm_90 in [\d.]+ [mµ]s\)$/m);
    assert.doesNotMatch(table(cached), /^kernels:/m);
  });
});

describe('one efficiency, one format', () => {
  const ranks = ['ddp-rank0', 'ddp-rank1'].flatMap((name) =>
    loadResults(`docs/measurements/2026-11-26-h100x2-followup/${name}.json`),
  );

  it('is the same two-decimal ratio in report, Markdown, the HTML page and merge (0.98, 97.8% and 101.3% before)', () => {
    for (const result of [one('test/fixtures/h200-balanced-16-model.json'), ...ranks]) {
      const head = result.modes.find((m) => m.id === result.summary.mode);
      assert.ok(head?.analysis);
      assert.equal(result.summary.efficiency, head.analysis.efficiency, 'the summary repeats the headline mode');
      const shown = formatEfficiency(head.analysis.efficiency);
      assert.match(table(result), new RegExp(`^efficiency: ${shown} = this layout's floor`, 'm'));
      assert.ok(renderRunMarkdown(result).includes(`efficiency ${shown};`), 'Markdown');
      assert.ok(renderHtml(result).includes(`efficiency ${shown} (the model&#39;s bound over the median)`), 'HTML');
      assert.doesNotMatch(renderHtml(result), /efficiency \d+\.\d%/);
    }
    const merged = renderMerge(mergeResults(ranks), plain, 100);
    const efficiencies = ranks.map((r) => formatEfficiency(r.summary.efficiency));
    for (const shown of efficiencies) assert.match(merged, new RegExp(`│ +${shown.replace('.', '\\.')} │`));
    assert.doesNotMatch(merged, /\d+\.\d% │\n/);
  });
});

describe('one link, its two rates told apart', () => {
  it("labels the bound's link rate as its fastest rep's, beside the table's median rate (99.4 and 99.1 GB/s of one link)", () => {
    const result = one('docs/measurements/2026-11-26-h100-first-hour/second/balanced.json');
    const link = result.modes.find((m) => m.role.kind === 'link');
    assert.ok(link);
    const bytes = link.bytes.h2d + link.bytes.d2h;
    const [fastest, median] = [
      formatRate(gbPerSecond(bytes, link.stats.min)),
      formatRate(gbPerSecond(bytes, link.stats.median)),
    ];
    assert.deepEqual([fastest, median], ['99.4 GB/s', '99.1 GB/s']);
    const text = table(result, true);
    assert.ok(text.includes(`limited by: the link with both copy directions at once (${fastest} at its fastest rep)`));
    assert.match(text, new RegExp(`│ H2D \\+ D2H at once +│[^\\n]*│ +${median} │`));
    assert.ok(
      text
        .replace(/\s+/g, ' ')
        .includes(`limited by the link with both copy directions at once (${fastest} at its fastest rep)`),
      '--verbose',
    );
    assert.ok(!new RegExp(`\\(${median.replace('.', '\\.')}\\)`).test(text), 'the median rate is never the bound');
  });

  it("says the shared link's rate in the advice as the bound does, at its fastest rep (measure/advice.ts)", () => {
    const result = one('docs/measurements/2026-11-26-h100-first-hour/second/balanced.json');
    const mode = result.modes.find((m) => m.id === result.summary.mode);
    assert.ok(mode?.analysis?.model);
    const { bound, model } = mode.analysis;
    const shared = { ...model, gap: [{ cause: 'shared link' as const, ms: 0.5 }] };
    const context = {
      bound: { ...bound, term: bound.limitedBy, perOpMs: 0 },
      linkGbPerSecond: bound.linkGbPerSecond,
      words: null,
      limit: null,
    };
    const advice = adviceFor(mode, shared, context);
    assert.equal(
      advice?.why,
      "both copy directions share the PCIe link, 99.4 GB/s at its fastest rep: that is this workload's limit, whatever the layout",
    );
  });
});

describe('a layout slower than serial', () => {
  it('prints the speedup with the decimals that keep it under 1: never "slower than serial (1.00×)"', () => {
    const base = makeResult({ noise: 0.001 });
    const slower = (speedup: number) =>
      runWarnings({
        ...base,
        modes: base.modes.map((m) =>
          m.role.kind === 'overlapped' && m.analysis ? { ...m, analysis: { ...m.analysis, speedup } } : m,
        ),
      }).find((w) => w.code === 'slower-than-serial')?.message;
    assert.match(slower(0.997) ?? '', /is slower than serial \(0\.997×\)/);
    assert.match(slower(0.8) ?? '', /is slower than serial \(0\.80×\)/);
    fc.assert(
      fc.property(
        fc.double({ min: 0.5, max: 0.999999, noNaN: true }),
        (ratio) => Number(formatRatioBelowOne(ratio).replace('×', '')) < 1,
      ),
    );
  });
});

describe("gemm's Markdown", () => {
  it('says its buffers are on the device only, where it wrote "depth-first; ."', () => {
    const md = renderRunMarkdown(one('docs/measurements/2026-11-26-h100x2-kinds/final/gemm.json'));
    assert.doesNotMatch(md, /; \./);
    assert.match(
      md,
      /^16 chunks × 4096 items over 4 streams, depth-first; a, b, c on the device only \(scratch\), none copied\.$/m,
    );
  });
});

describe('why the reps stopped', () => {
  it('names the modes each rule stopped where the rules differ, instead of "the noise fell under the target / the noise stopped changing"', () => {
    const [, , third] = loadResults('baselines/nvidia-h100-80gb-hbm3/results.json');
    assert.ok(third);
    const line = timingLine(third);
    assert.doesNotMatch(line, / \/ /);
    assert.match(
      line,
      /stopped because the noise stopped changing \(above the target\) for serial, and the noise fell under the target for 6 modes;/,
    );
    assert.match(
      timingLine(one('test/fixtures/h100-balanced-1.json')),
      /stopped because the noise fell under the target; noise is/,
    );
  });
});

describe('kernels --check', { skip: nvrtcSkipReason() ?? false }, () => {
  it('leads with its verdict: how many compiled, for which architecture, with which NVRTC (it came last)', () => {
    const { code, stdout } = runCli(['kernels', '--check']);
    assert.equal(code, 0);
    const [first = ''] = stdout.split('\n');
    assert.match(first, /^(\d+) of \1 sources compiled for sm_\d+ .* with NVRTC [\d.]+, bypassing the cache$/);
    assert.ok(stdout.indexOf('  ok      ') < stdout.indexOf('fma_loop('), 'each compile, then the listing');
  });
});
