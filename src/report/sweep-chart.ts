import type { RunResult } from '../result/schema.js';
import type { RunExporter } from './exporter.js';
import { type SweepPoint, sweepPoints } from './sweep.js';
import { escapeXml } from './timeline-common.js';

// Speedup over serial against chunk count (log scale), one line per stream count and order: where the curve bends
// is where per-op costs start to outweigh a finer pipeline.

const WIDTH = 720;
const HEIGHT = 420;
const MARGIN = { left: 60, right: 170, top: 40, bottom: 50 } as const;
const LINE_COLOURS = ['#1f6fd1', '#2a9d3a', '#8e3fb5', '#d1651f', '#c0392b', '#16a085', '#7f8c8d', '#2c3e50'];

export function renderSweepChart(result: RunResult): string {
  const points = sweepPoints(result);
  if (!points.length) return '';
  const chunks = [...new Set(points.map((p) => p.chunks))].sort((a, b) => a - b);
  const maxSpeedup = Math.max(1, ...points.map((p) => p.speedup)) * 1.1;
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const logMin = Math.log2(chunks[0] ?? 1);
  const logSpan = Math.max(1, Math.log2(chunks[chunks.length - 1] ?? 1) - logMin);
  const x = (c: number) => MARGIN.left + ((Math.log2(c) - logMin) / logSpan) * plotW;
  const y = (s: number) => MARGIN.top + plotH - (s / maxSpeedup) * plotH;
  const series = new Map<string, SweepPoint[]>();
  for (const p of points) {
    const key = `${p.streams} stream${p.streams === 1 ? '' : 's'}, ${p.order}`;
    series.set(key, [...(series.get(key) ?? []), p]);
  }
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="#ffffff"/>`,
    `<text x="${MARGIN.left}" y="22" font-size="14">${escapeXml(`${result.config.name}: speedup over serial by chunk count`)}</text>`,
    `<line x1="${MARGIN.left}" y1="${y(0)}" x2="${MARGIN.left + plotW}" y2="${y(0)}" stroke="#333"/>`,
    `<line x1="${MARGIN.left}" y1="${MARGIN.top}" x2="${MARGIN.left}" y2="${y(0)}" stroke="#333"/>`,
    `<line x1="${MARGIN.left}" y1="${y(1)}" x2="${MARGIN.left + plotW}" y2="${y(1)}" stroke="#999" stroke-dasharray="4 4"/>`,
    `<text x="${MARGIN.left + plotW + 4}" y="${y(1) + 4}" fill="#666">serial</text>`,
    ...chunks.map((c) => `<text x="${x(c)}" y="${y(0) + 18}" text-anchor="middle">${c}</text>`),
    `<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 10}" text-anchor="middle">chunks</text>`,
    ...[0.5, 1, 1.5, 2, 2.5, 3, 4, 5, 6, 8]
      .filter((s) => s < maxSpeedup)
      .map((s) => `<text x="${MARGIN.left - 6}" y="${y(s) + 4}" text-anchor="end">${s}×</text>`),
  ];
  [...series.entries()].forEach(([label, pts], i) => {
    const colour = LINE_COLOURS[i % LINE_COLOURS.length] ?? '#000000';
    const dash = pts[0]?.order === 'breadth-first' ? ' stroke-dasharray="6 3"' : '';
    const sorted = [...pts].sort((a, b) => a.chunks - b.chunks);
    parts.push(
      `<polyline fill="none" stroke="${colour}" stroke-width="2"${dash} points="${sorted.map((p) => `${x(p.chunks).toFixed(1)},${y(p.speedup).toFixed(1)}`).join(' ')}"/>`,
    );
    for (const p of sorted)
      parts.push(
        `<circle cx="${x(p.chunks).toFixed(1)}" cy="${y(p.speedup).toFixed(1)}" r="3" fill="${colour}"><title>${escapeXml(`${label}, ${p.chunks} chunks: ${p.speedup.toFixed(2)}× (${p.medianMs.toFixed(3)} ms)`)}</title></circle>`,
      );
    const legendY = MARGIN.top + 16 * i;
    parts.push(
      `<line x1="${WIDTH - MARGIN.right + 16}" y1="${legendY}" x2="${WIDTH - MARGIN.right + 36}" y2="${legendY}" stroke="${colour}" stroke-width="2"${dash}/>`,
      `<text x="${WIDTH - MARGIN.right + 40}" y="${legendY + 4}">${escapeXml(label)}</text>`,
    );
  });
  parts.push('</svg>');
  return parts.join('\n');
}

export const sweepChartExporter: RunExporter = {
  description: "the sweep's speedup against chunk count, one line per stream count, as SVG",
  render: (results) => results.map(renderSweepChart).find((svg) => svg !== '') ?? '',
};
