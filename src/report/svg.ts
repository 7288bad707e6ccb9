import { opInterval } from '../analysis/timeline.js';
import { stage } from '../kinds/index.js';
import { type RunExporter, pictured } from './exporter.js';
import { rowCells } from './gantt.js';
import type { RunResult } from '../result/schema.js';
import type { TimelineOp, TracedRep } from '../result/timeline.js';
import {
  deviceLabel,
  deviceOf,
  drawnRows,
  escapeXml as escape,
  ms,
  niceTicks,
  opGbPerSecond,
  opName,
  queuedMs,
  rowLabel,
  type Stage,
  STAGE_COLOURS,
  STAGE_LETTERS,
  STAGE_NAMES,
  legendStages,
  tickLabel,
  type TimelineGroup,
  timelineGroups,
  timingLabel,
} from './timeline-common.js';

// The timeline as a standalone SVG: a panel per traced mode, a row per stream, a bar per op in its stage's colour
// with its letter (or its name, where the bar is wide enough), a ms axis and a legend. The layout is exported so
// tests (and the HTML report) can find every row on the page. Output depends on the Result alone: same Result,
// same bytes.

/** Sizes in px. Rows are ROW_HEIGHT tall, ROW_GAP apart; everything else stacks around them. */
export const SVG_LAYOUT = {
  width: 960,
  padding: 16,
  labelWidth: 96,
  titleHeight: 44,
  panelHeaderHeight: 22,
  axisHeight: 26,
  deviceHeaderHeight: 18,
  rowHeight: 22,
  rowGap: 6,
  panelGap: 18,
  legendHeight: 24,
  fontSize: 12,
  /** Bars narrower than this carry no letter. */
  minLetterWidth: 10,
  /** Rough advance of one character of bar text (11 px sans-serif), for deciding whether a name fits. */
  charWidth: 6.4,
  /** A line of a panel's notes (streams left out, rows drawn a pixel at a time). */
  noteHeight: 16,
  /**
   * The narrowest and widest SVG drawn, px: the plot keeps some room, and the cost of a dense row grows with its
   * pixels.
   */
  minWidth: 320,
  maxWidth: 8192,
} as const;

export interface SvgRowBand {
  readonly device: number;
  readonly stream: string;
  readonly label: string;
  readonly ops: readonly TimelineOp[];
  /** The bars' top and bottom, px from the top of the SVG. */
  readonly top: number;
  readonly bottom: number;
  /** A device header above this row (first row of a device in a multi-device panel). */
  readonly deviceHeaderY: number | null;
}

export interface SvgPanel {
  readonly group: TimelineGroup;
  readonly headerY: number;
  readonly axisY: number;
  readonly rows: readonly SvgRowBand[];
  /** The plot's left and right edges: time 0 and the group's span. */
  readonly plotLeft: number;
  readonly plotRight: number;
  readonly bottom: number;
  /** What the panel leaves out or draws coarser than one bar per op, each a line under its rows. */
  readonly notes: readonly string[];
  readonly notesY: number;
}

export interface SvgLayout {
  readonly width: number;
  readonly height: number;
  readonly panels: readonly SvgPanel[];
  readonly legendY: number;
  /** Each legend item's top-left corner: the items flow into as many rows as the width needs. */
  readonly legendAt: readonly { readonly x: number; readonly y: number }[];
}

export interface SvgOptions {
  /** Width in px; default SVG_LAYOUT.width. */
  readonly width?: number;
  /** Only this mode's traced reps; default every traced mode. */
  readonly mode?: string;
}

export function svgLayout(result: RunResult, options: SvgOptions = {}): SvgLayout {
  const L = SVG_LAYOUT;
  const width = Math.min(L.maxWidth, Math.max(L.minWidth, Math.round(options.width ?? L.width)));
  const plotLeft = L.padding + L.labelWidth;
  const plotRight = width - L.padding;
  let y = L.padding + L.titleHeight;
  const panels = timelineGroups(result, options.mode).map((group) => {
    const headerY = y + 15;
    y += L.panelHeaderHeight;
    const axisY = y + L.axisHeight - 4;
    y += L.axisHeight;
    const drawn = drawnRows(group);
    const rows = drawn.rows.map((row, i) => {
      const newDevice = group.multiDevice && drawn.rows[i - 1]?.device !== row.device;
      const deviceHeaderY = newDevice ? y + 13 : null;
      if (newDevice) y += L.deviceHeaderHeight;
      const band: SvgRowBand = {
        device: row.device,
        stream: row.stream,
        label: rowLabel(row, group.multiDevice),
        ops: row.ops,
        top: y,
        bottom: y + L.rowHeight,
        deviceHeaderY,
      };
      y += L.rowHeight + L.rowGap;
      return band;
    });
    const bottom = y;
    const dense = rows.filter((r) => isDense(r.ops, plotRight - plotLeft)).length;
    const notes = [
      ...(drawn.note ? [drawn.note] : []),
      ...(dense
        ? [
            `${dense === rows.length ? 'Every row' : `${dense} of ${rows.length} rows`} has more ops than pixels: drawn a pixel at a time, each in the stage that covered most of it.`,
          ]
        : []),
    ];
    const notesY = y + 4;
    y += notes.length * L.noteHeight;
    const panel: SvgPanel = { group, headerY, axisY, rows, plotLeft, plotRight, bottom, notes, notesY };
    y += L.panelGap;
    return panel;
  });
  const legendY = y;
  const legendAt = flowLegend(legendWidths(result.timeline?.reps ?? []), legendY, width);
  const legendBottom = Math.max(legendY, ...legendAt.map((at) => at.y)) + L.legendHeight;
  return { width, height: legendBottom + L.padding, panels, legendY, legendAt };
}

// A stage's item (swatch and name) and the queued one (swatch and its longer words), px.
const LEGEND_ITEM_WIDTH = 150;
const QUEUED_ITEM_WIDTH = 220;

/** The width of each legend item, in the order `legend` draws them. */
function legendWidths(reps: readonly TracedRep[]): number[] {
  const stages = legendStages(reps).map(() => LEGEND_ITEM_WIDTH);
  return reps.some((r) => r.timing?.source === 'cupti') ? [...stages, QUEUED_ITEM_WIDTH] : stages;
}

/**
 * One row of items while they fit, then the next: on one row, the seven items of a CUPTI-timed rep with every stage
 * ran past the 1000 px of an SVG and were cut off at its edge.
 */
function flowLegend(widths: readonly number[], top: number, width: number): { x: number; y: number }[] {
  const L = SVG_LAYOUT;
  let x = L.padding;
  let y = top;
  return widths.map((w) => {
    if (x > L.padding && x + w > width - L.padding) {
      x = L.padding;
      y += L.legendHeight;
    }
    const at = { x, y };
    x += w;
    return at;
  });
}

/** The x of a time in a panel, px. */
export function xOf(panel: SvgPanel, timeMs: number): number {
  const span = panel.group.spanMs > 0 ? panel.group.spanMs : 1;
  return panel.plotLeft + (timeMs / span) * (panel.plotRight - panel.plotLeft);
}

export function renderSvg(result: RunResult, options: SvgOptions = {}): string {
  const layout = svgLayout(result, options);
  const L = SVG_LAYOUT;
  const title = `cuda-pipe timeline: ${result.config.name}`;
  const devices = result.devices.map((d) => deviceLabel(d, d.index)).join(', ');
  const subtitle = `${devices} · ${result.run.hostname} · ${result.createdAt}`;
  const body = [
    `<rect width="${layout.width}" height="${layout.height}" fill="#ffffff"/>`,
    text(L.padding, L.padding + 16, title, { size: 16, weight: 'bold' }),
    text(L.padding, L.padding + 34, subtitle, { fill: '#555555' }),
    ...(layout.panels.length
      ? layout.panels.flatMap((p) => panel(result, p))
      : [text(L.padding, layout.legendY - 8, 'No traced reps in this result.')]),
    ...legend(layout, result.timeline?.reps ?? []),
  ];
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${layout.width}" height="${n(layout.height)}" viewBox="0 0 ${layout.width} ${n(layout.height)}"` +
      ` font-family="DejaVu Sans, Arial, Helvetica, sans-serif" font-size="${L.fontSize}" role="img" aria-label="${escape(title)}">`,
    `<title>${escape(`${title} (${subtitle})`)}</title>`,
    ...body.map((line) => `  ${line}`),
    '</svg>',
    '',
  ].join('\n');
}

function panel(result: RunResult, p: SvgPanel): string[] {
  const L = SVG_LAYOUT;
  const { group } = p;
  const ticks = niceTicks(group.spanMs, Math.max(2, Math.floor((p.plotRight - p.plotLeft) / 80)));
  const header = `${group.label} · traced rep ${group.reps.map((r) => ms(r.totalMs)).join(', ')} · ${group.reps.every((r) => r.timing?.source === 'cupti') ? 'engine times: CUPTI' : 'times: events'}`;
  const out = [
    `<g class="panel" data-mode="${escape(group.mode)}">`,
    text(L.padding, p.headerY, header, { weight: 'bold' }, group.reps.map(timingLabel).join('; ')),
    `<line x1="${n(p.plotLeft)}" y1="${n(p.axisY)}" x2="${n(p.plotRight)}" y2="${n(p.axisY)}" stroke="#444444"/>`,
  ];
  for (const t of ticks) {
    const x = xOf(p, t);
    out.push(`<line x1="${n(x)}" y1="${n(p.axisY)}" x2="${n(x)}" y2="${n(p.bottom - L.rowGap)}" stroke="#dddddd"/>`);
    out.push(`<line x1="${n(x)}" y1="${n(p.axisY - 4)}" x2="${n(x)}" y2="${n(p.axisY)}" stroke="#444444"/>`);
    out.push(
      text(x, p.axisY - 7, `${tickLabel(t, ticks)}${t === 0 ? ' ms' : ''}`, {
        anchor: t === 0 ? 'start' : 'middle',
        size: 11,
      }),
    );
  }
  for (const row of p.rows) {
    if (row.deviceHeaderY !== null)
      out.push(
        text(L.padding, row.deviceHeaderY, deviceLabel(deviceOf(result, row.device), row.device), {
          fill: '#555555',
          size: 11,
        }),
      );
    out.push(text(L.padding, row.top + L.rowHeight / 2 + 4, row.label));
    out.push(
      `<rect x="${n(p.plotLeft)}" y="${n(row.top)}" width="${n(p.plotRight - p.plotLeft)}" height="${L.rowHeight}" fill="#f2f3f5"/>`,
    );
    if (isDense(row.ops, p.plotRight - p.plotLeft)) out.push(...cellBars(p, row));
    else for (const op of row.ops) out.push(...bar(p, row, op));
  }
  p.notes.forEach((note, i) =>
    out.push(text(L.padding, p.notesY + (i + 1) * L.noteHeight - 4, note, { fill: '#555555', size: 11 })),
  );
  out.push('</g>');
  return out;
}

/** A row with more ops than pixels: one bar per op would cost more than it shows. */
function isDense(ops: readonly TimelineOp[], plotWidth: number): boolean {
  return ops.length > plotWidth;
}

/** A dense row as the Gantt draws it, a pixel a cell: one bar per run of cells in one stage. */
function cellBars(p: SvgPanel, row: SvgRowBand): string[] {
  const L = SVG_LAYOUT;
  const pixels = Math.max(1, Math.round(p.plotRight - p.plotLeft));
  const pixel = (p.plotRight - p.plotLeft) / pixels;
  const out: string[] = [];
  const cells = rowCells(row.ops, p.group.spanMs, pixels);
  for (let start = 0; start < cells.length; ) {
    const stage = cells[start];
    let end = start + 1;
    while (end < cells.length && cells[end] === stage) end += 1;
    if (stage) {
      out.push(
        `<rect class="cells ${stage}" data-device="${row.device}" data-stream="${escape(row.stream)}" x="${n(p.plotLeft + start * pixel)}" y="${n(row.top)}"` +
          ` width="${n((end - start) * pixel)}" height="${L.rowHeight}" fill="${STAGE_COLOURS[stage]}" shape-rendering="crispEdges"/>`,
      );
    }
    start = end;
  }
  return out;
}

function bar(p: SvgPanel, row: SvgRowBand, op: TimelineOp): string[] {
  const L = SVG_LAYOUT;
  const { start, end } = opInterval(op);
  const x = xOf(p, start);
  const width = Math.max(1, xOf(p, end) - x);
  const name = opName(op);
  const gbps = opGbPerSecond(op);
  const queued = queuedMs(op);
  const tip = [
    name,
    `stream ${op.stream}`,
    `${start.toFixed(3)}–${end.toFixed(3)} ms (${ms(end - start)}${queued === null ? '' : ' on its engine'})`,
    ...(queued === null ? [] : [`queued ${ms(queued)} before it`]),
    ...(op.bytes > 0 ? [bytesLabel(op.bytes)] : []),
    ...(gbps !== null && stage(op.kind).look.rate ? [`${gbps.toFixed(2)} GB/s`] : []),
  ].join(' · ');
  // The queued part apart, pale: the stream had reached the op, its engine had not started it.
  const queuedX = xOf(p, op.startMs);
  const out =
    queued === null || x - queuedX < 0.5
      ? []
      : [
          `<rect class="queued ${op.kind}" data-device="${op.device}" data-stream="${escape(op.stream)}" x="${n(queuedX)}" y="${n(row.top + L.rowHeight / 4)}" width="${n(x - queuedX)}"` +
            ` height="${L.rowHeight / 2}" fill="${STAGE_COLOURS[op.kind]}" fill-opacity="0.25" shape-rendering="crispEdges"><title>${escape(`${name}: queued ${ms(queued)}`)}</title></rect>`,
        ];
  out.push(
    `<rect class="op ${op.kind}" data-device="${op.device}" data-stream="${escape(op.stream)}" x="${n(x)}" y="${n(row.top)}" width="${n(width)}"` +
      ` height="${L.rowHeight}" fill="${STAGE_COLOURS[op.kind]}" stroke="#ffffff" stroke-width="0.5" shape-rendering="crispEdges"><title>${escape(tip)}</title></rect>`,
  );
  const label =
    name.length * L.charWidth + 6 <= width ? name : width >= L.minLetterWidth ? STAGE_LETTERS[op.kind] : null;
  if (label !== null)
    out.push(
      text(x + width / 2, row.top + L.rowHeight / 2 + 4, label, { anchor: 'middle', fill: '#ffffff', size: 11 }),
    );
  return out;
}

function legend(layout: SvgLayout, reps: readonly TracedRep[]): string[] {
  const L = SVG_LAYOUT;
  const stages = legendStages(reps);
  const items = stages.map((stage: Stage, i) => {
    const { x, y } = layout.legendAt[i] ?? { x: L.padding, y: layout.legendY };
    return [
      `<rect class="legend ${stage}" x="${x}" y="${y}" width="14" height="14" fill="${STAGE_COLOURS[stage]}"/>`,
      text(x + 3.5, y + 11, STAGE_LETTERS[stage], { fill: '#ffffff', size: 10 }),
      text(x + 20, y + 11, STAGE_NAMES[stage]),
    ].join('');
  });
  if (!reps.some((r) => r.timing?.source === 'cupti')) return items;
  const { x, y } = layout.legendAt[stages.length] ?? { x: L.padding, y: layout.legendY };
  return [
    ...items,
    `<rect class="legend queued" x="${x}" y="${y + 3.5}" width="14" height="7" fill="#555555" fill-opacity="0.25"/>${text(x + 20, y + 11, 'queued (engine not yet started)')}`,
  ];
}

interface TextStyle {
  readonly anchor?: 'start' | 'middle' | 'end';
  readonly size?: number;
  readonly weight?: 'bold';
  readonly fill?: string;
}

function text(x: number, y: number, content: string, style: TextStyle = {}, tip?: string): string {
  const attrs = [
    `x="${n(x)}"`,
    `y="${n(y)}"`,
    ...(style.anchor && style.anchor !== 'start' ? [`text-anchor="${style.anchor}"`] : []),
    ...(style.size ? [`font-size="${style.size}"`] : []),
    ...(style.weight ? [`font-weight="${style.weight}"`] : []),
    `fill="${style.fill ?? '#222222'}"`,
  ];
  return `<text ${attrs.join(' ')}>${tip === undefined ? '' : `<title>${escape(tip)}</title>`}${escape(content)}</text>`;
}

/** 8388608 → "8 MiB": binary units, as buffers are sized. */
export function bytesLabel(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${Number.parseFloat(value.toFixed(2))} ${units[unit]}`;
}

/** Two decimals at most, no trailing zeros: stable coordinates that do not bloat the file. */
function n(value: number): string {
  return Number.parseFloat(value.toFixed(2)).toString();
}

export const svgExporter: RunExporter = {
  description: 'the timeline of the traced reps as a standalone SVG',
  render: (results) => renderSvg(pictured(results)),
};
