import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderHtml } from '../../src/report/html.js';
import { mix, renderSweepSection, type SweepPoint } from '../../src/report/sweep.js';
import { roleLabel } from '../../src/report/labels.js';
import { analyzeTracedRep } from '../../src/report/timeline-common.js';
import { syntheticRunResult } from '../helpers/synthetic-timeline.js';
import { timelineFixtures } from '../helpers/timeline-fixtures.js';

const count = (text: string, pattern: RegExp) => text.match(pattern)?.length ?? 0;

for (const { name, result } of timelineFixtures()) {
  describe(`HTML report of ${name}`, () => {
    const html = renderHtml(result);

    it('is one self-contained page that can fetch nothing', () => {
      assert.ok(html.startsWith('<!doctype html>\n<html lang="en">'));
      assert.match(
        html,
        /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">/,
      );
      assert.doesNotMatch(html, /\b(src|href)\s*=|url\(|@import|<script|<link/i);
      // The only URL is the SVG namespace, which is a name, not a request.
      assert.deepEqual([...new Set(html.match(/https?:\/\/[^\s"')<]+/g))], ['http://www.w3.org/2000/svg']);
    });

    it('tabulates every mode with its median, min, max, noise and n', () => {
      const modes = /<table class="modes">[\s\S]*?<\/table>/.exec(html)![0];
      assert.equal(count(modes, /<tr><td>/g), result.modes.length);
      const serial = result.modes.find((m) => m.role.kind === 'serial')!;
      const s = serial.stats;
      assert.ok(
        modes.includes(
          `${s.median.toFixed(3)} ms</td><td>${s.min.toFixed(3)} ms</td><td>${s.max.toFixed(3)} ms</td><td>${(s.relativeNoise * 100).toFixed(2)}%</td><td>${s.n}</td>`,
        ),
      );
    });

    it('gives each overlapped mode its speedup, bound and efficiency', () => {
      const overlap = /<table class="overlap">[\s\S]*?<\/table>/.exec(html)![0];
      const overlapped = result.modes.filter((m) => m.analysis !== null);
      assert.equal(count(overlap, /<tr><td>/g), overlapped.length);
      for (const m of overlapped) {
        const a = m.analysis!;
        assert.ok(overlap.includes(`<td>${roleLabel(m.role)}</td>`));
        assert.ok(
          overlap.includes(
            `${a.speedup.toFixed(2)}× ± ${(2 * a.speedupError!).toFixed(2)}</td><td>${a.bound.ms.toFixed(3)} ms</td><td>${a.bound.limitedBy}</td><td>${a.efficiency.toFixed(2)}`,
          ),
        );
      }
    });

    it('embeds a timeline SVG per traced mode and the analysis of every traced rep', () => {
      const reps = result.timeline!.reps;
      assert.equal(
        count(html, /<figure class="timeline" data-mode="[^"]+">\n<svg /g),
        new Set(reps.map((r) => r.mode)).size,
      );
      assert.equal(count(html, /<div class="analysis" /g), reps.length);
      for (const rep of reps) {
        const a = analyzeTracedRep(result, rep);
        assert.ok(html.includes(`<dt>SMs busy</dt><dd>${(a.busy.sm * 100).toFixed(1)}%</dd>`));
      }
    });

    it('lists the warnings and notes', () => {
      for (const w of result.warnings) assert.ok(html.includes(`<strong>${w.message}</strong> ${w.remedy}`));
      for (const n of result.notes) assert.ok(html.includes(`<li>${n}</li>`));
    });

    it('has a sweep section exactly when the result comes from a sweep', () => {
      if (result.sweep) {
        assert.match(html, /id="sweep"/);
        assert.equal((html.match(/<td class="heat/g) ?? []).length, result.sweep.points.length);
        assert.match(html, /id="sweep-chart"/);
      } else {
        assert.doesNotMatch(html, /id="sweep"/);
      }
    });
  });
}

describe('sweep heat map', () => {
  const points: SweepPoint[] = [
    { streams: 2, chunks: 8, order: 'depth-first', medianMs: 8, speedup: 1.5 },
    { streams: 2, chunks: 16, order: 'depth-first', medianMs: 7, speedup: 1.75 },
    { streams: 4, chunks: 8, order: 'depth-first', medianMs: 6.5, speedup: 1.9 },
    { streams: 4, chunks: 16, order: 'depth-first', medianMs: 6, speedup: 2.05 },
    { streams: 4, chunks: 16, order: 'breadth-first', medianMs: 6.2, speedup: 1.98 },
    { streams: 2, chunks: 8, order: 'breadth-first', medianMs: 8.4, speedup: 1.43 },
  ];

  it('renders a streams × chunks table per issue order, the best cell marked', () => {
    const section = renderSweepSection(points);
    assert.equal(count(section, /<table class="heatmap"/g), 2);
    const depthFirst = /<table class="heatmap" data-order="depth-first">[\s\S]*?<\/table>/.exec(section)![0];
    assert.equal(count(depthFirst, /<th scope="row">/g), 2);
    assert.equal(count(depthFirst, /<td class="heat/g), 4);
    assert.match(
      depthFirst,
      /<td class="heat best" style="background:#2a9d3a;color:#ffffff" title="6.000 ms">2.05×<\/td>/,
    );
    assert.match(section, /Best: 4 streams × 16 chunks, depth-first: 2.05× \(6.000 ms\)/);
  });

  it('marks a layout the sweep did not measure as missing', () => {
    const breadthFirst = /<table class="heatmap" data-order="breadth-first">[\s\S]*?<\/table>/.exec(
      renderSweepSection(points),
    )![0];
    // Measured: 2 × 8 and 4 × 16; the grid's other two cells were not.
    assert.equal(count(breadthFirst, /<td class="heat/g), 2);
    assert.equal(count(breadthFirst, /<td class="missing">–<\/td>/g), 2);
  });

  it('shades from white at no speedup to full green at the best', () => {
    assert.equal(mix(0), '#ffffff');
    assert.equal(mix(1), '#2a9d3a');
    assert.equal(mix(0.5), '#95ce9d');
  });

  it('appears in the HTML report when given points, and not for none', () => {
    const result = syntheticRunResult();
    assert.match(renderHtml(result, { sweep: points }), /<section id="sweep">\n<h2>Sweep: speedup over serial<\/h2>/);
    assert.equal(renderSweepSection([]), '');
  });
});
