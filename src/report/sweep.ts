import type { RunResult } from '../result/schema.js';
import type { IssueOrder } from '../vocabulary.js';
import { bestLines, yamlFragment } from './exporters/sweep.js';
import { escapeXml as escape } from './timeline-common.js';

// A sweep's heat map of speedup over a streams × chunks grid, one per issue order, for the HTML report; the points
// come from the Result's sweep section (sweepPoints).

/** One layout of a sweep, measured: its median and its speedup over serial. */
export interface SweepPoint {
  readonly streams: number;
  readonly chunks: number;
  readonly order: IssueOrder;
  readonly medianMs: number;
  readonly speedup: number;
}

/** The points of a result's sweep, each with its measured median and speedup; empty for a plain run. */
export function sweepPoints(result: Pick<RunResult, 'sweep' | 'modes'>): SweepPoint[] {
  if (!result.sweep) return [];
  return result.sweep.points.flatMap((p) => {
    const mode = result.modes.find((m) => m.id === p.mode);
    return mode?.analysis
      ? [
          {
            streams: p.streams,
            chunks: p.chunks,
            order: p.order,
            medianMs: mode.stats.median,
            speedup: mode.analysis.speedup,
          },
        ]
      : [];
  });
}

/** Low speedups white, the best full green: the eye goes to the best layouts. */
const LOW = [255, 255, 255] as const;
const HIGH = [42, 157, 58] as const;

/** The heat map section, or '' when there are no points (the report then leaves the section out). */
export function renderSweepSection(points: readonly SweepPoint[]): string {
  if (!points.length) return '';
  const orders = [...new Set(points.map((p) => p.order))].sort();
  const best = points.reduce((a, b) => (b.speedup > a.speedup ? b : a));
  return [
    '<section id="sweep">',
    '<h2>Sweep: speedup over serial</h2>',
    `<p>Best: ${best.streams} streams × ${best.chunks} chunks, ${escape(best.order)}: ${best.speedup.toFixed(2)}× (${best.medianMs.toFixed(3)} ms).</p>`,
    ...orders.map((order) =>
      heatmapTable(
        points.filter((p) => p.order === order),
        order,
        best,
      ),
    ),
    '</section>',
  ].join('\n');
}

function heatmapTable(points: readonly SweepPoint[], order: string, best: SweepPoint): string {
  const streams = [...new Set(points.map((p) => p.streams))].sort((a, b) => a - b);
  const chunks = [...new Set(points.map((p) => p.chunks))].sort((a, b) => a - b);
  const speedups = points.map((p) => p.speedup);
  const low = Math.min(1, ...speedups);
  const high = Math.max(...speedups);
  const head = `<tr><th scope="col">streams \\ chunks</th>${chunks.map((c) => `<th scope="col">${c}</th>`).join('')}</tr>`;
  const rows = streams.map((s) => {
    const cells = chunks.map((c) => {
      const point = points.find((p) => p.streams === s && p.chunks === c);
      if (!point) return '<td class="missing">–</td>';
      const t = high > low ? (point.speedup - low) / (high - low) : 1;
      const isBest = point === best;
      return (
        `<td class="heat${isBest ? ' best' : ''}" style="background:${mix(t)};color:${t > 0.6 ? '#ffffff' : '#222222'}"` +
        ` title="${point.medianMs.toFixed(3)} ms">${point.speedup.toFixed(2)}×</td>`
      );
    });
    return `<tr><th scope="row">${s}</th>${cells.join('')}</tr>`;
  });
  return [
    `<table class="heatmap" data-order="${escape(order)}">`,
    `<caption>${escape(order)}</caption>`,
    head,
    ...rows,
    '</table>',
  ].join('\n');
}

/** The colour a fraction `t` of the way from LOW to HIGH. */
export function mix(t: number): string {
  const clamped = Math.min(1, Math.max(0, t));
  return `#${LOW.map((low, i) =>
    Math.round(low + (HIGH[i]! - low) * clamped)
      .toString(16)
      .padStart(2, '0'),
  ).join('')}`;
}

/** The best layout, the layouts that tie with it and the YAML that reproduces it, or '' for a plain run. */
export function renderSweepBest(result: RunResult): string {
  const lines = bestLines(result);
  if (!lines.length) return '';
  return [
    '<section id="sweep-best">',
    '<h2>Best layout</h2>',
    ...lines.map((l) => `<p>${escape(l)}</p>`),
    `<pre class="yaml">${escape(yamlFragment(result).join('\n'))}</pre>`,
    '</section>',
  ].join('\n');
}
