import { formatMs, formatPercent } from '../../format.js';
import { basename } from 'node:path';
import type { ModeResult } from '../../model/mode.js';
import type { RunResult } from '../../result/schema.js';
import type { OverlapLayout } from '../../vocabulary.js';
import { kindLines } from '../kind-sections.js';
import { sweepBimodalLines } from '../bimodal.js';
import { fastestWithTies } from '../../bimodal.js';
import { type ClockRange, clockMatch, clockText } from '../../clocks.js';
import type { RunExporter } from '../exporter.js';
import { type Column, fitTable, type Layout } from '../fold.js';
import { bestLayoutText, formatSpeedup, roleLabel } from '../labels.js';
import type { Style } from '../style.js';
import { DEFAULT_COLUMNS } from '../width.js';

// A sweep's results: a heat map of speedup over serial (streams × chunks) per issue order, the best layout with its
// uncertainty and the layouts that tie with it, and the YAML that reproduces it.

interface Cell {
  readonly mode: ModeResult;
  readonly chunks: number;
  readonly streams: number;
}

function cells(result: RunResult, order: string): Cell[] {
  return (result.sweep?.points ?? []).flatMap((p) => {
    const mode = result.modes.find((m) => m.id === p.mode);
    return p.order === order && mode ? [{ mode, chunks: p.chunks, streams: p.streams }] : [];
  });
}

const settingsText = (result: RunResult) =>
  Object.entries(result.sweep?.settings ?? {})
    .map(([k, v]) => `${k} = ${v}`)
    .join(', ');

/**
 * The terminal view: the answer (the best layout and what to change), then one heat map per order fitting `columns`,
 * and how to get it.
 */
export function renderSweepTable(result: RunResult, style: Style, columns = DEFAULT_COLUMNS): string {
  const sweep = result.sweep;
  if (!sweep) return '';
  const settings = settingsText(result);
  const lines = [
    style.bold(
      `sweep of ${result.config.name} on ${result.devices.map((d) => d.name).join(', ')}${settings ? ` with ${settings}` : ''}`,
    ),
    ...sweepAnswer(result),
    '',
    `speedup over serial (${formatMs(result.summary.serialMs)}); streams down, chunks across; · dropped early as clearly slower, ≈ ties with the best`,
  ];
  const ties = new Set(sweep.best.ties);
  for (const order of new Set(sweep.points.map((p) => p.order))) {
    const grid = cells(result, order);
    const chunks = [...new Set(grid.map((c) => c.chunks))].sort((a, b) => a - b);
    const streams = [...new Set(grid.map((c) => c.streams))].sort((a, b) => a - b);
    const speedups = chunks.map(
      (c): Column => ({
        head: String(c),
        cells: streams.map((s) => {
          const cell = grid.find((g) => g.streams === s && g.chunks === c);
          if (!cell?.mode.analysis) return '–';
          const text = `${cell.mode.analysis.speedup.toFixed(2)}×${cell.mode.stoppedBy === 'clearly-slower' ? '·' : ties.has(cell.mode.id) ? '≈' : ''}`;
          return cell.mode.id === sweep.best.mode ? style.bold.green(text) : text;
        }),
      }),
    );
    // Narrower, the corner names only the order: the legend above says what runs down and across.
    const rows = (head: string): Layout => [{ head, cells: streams.map(String) }, ...speedups];
    lines.push(fitTable([rows(`${order}: streams \\ chunks`), rows(`${order}: streams`), rows(order)], columns));
  }
  // The kinds' sections: with collectives, the best layout's communication (its traced rep) and the bucket model at its
  // bucket count.
  lines.push(
    ...tieLine(result),
    'to reproduce it:',
    ...yamlFragment(result).map((l) => `  ${l}`),
    ...kindLines(result),
  );
  return lines.join('\n');
}

const layoutText = (l: { chunks: number; streams: number }) => `${l.chunks} chunks × ${l.streams} streams`;

/**
 * The best layout with its speedup and uncertainty, the model's prediction, what to change, why the race took its time.
 */
function sweepAnswer(result: RunResult): string[] {
  const sweep = result.sweep;
  const best = result.modes.find((m) => m.id === sweep?.best.mode);
  if (!sweep || !best?.analysis || best.role.kind !== 'overlapped') return [];
  const { layout } = best.role;
  return [
    `best: ${layoutText(layout)}, ${layout.order}: ${formatMs(best.stats.median)}, ${formatSpeedup(best.analysis)} over serial, efficiency ${best.analysis.efficiency.toFixed(2)}`,
    ...sweepBimodalLines(result, best),
    ...predictedLine(best),
    changeLine(result, best, layout),
    raceLine(result),
  ];
}

/** The layouts that tie with the best within noise, and the best's middle half. */
function tieLine(result: RunResult): string[] {
  const sweep = result.sweep;
  const best = result.modes.find((m) => m.id === sweep?.best.mode);
  if (!sweep || !best) return [];
  const ties = sweep.best.ties.flatMap((id) => {
    const m = result.modes.find((x) => x.id === id);
    return m ? [`${roleLabel(m.role)} (${formatMs(m.stats.median)})`] : [];
  });
  const spread = `the best's middle half ${formatMs(best.stats.q1)} to ${formatMs(best.stats.q3)}`;
  return [
    `${ties.length ? `ties within noise: ${ties.join('; ')}` : 'no other layout ties with it within noise'}; ${spread}`,
  ];
}

/** Everything said of the best layout, for the documents: the answer and its ties. */
export const bestLines = (result: RunResult): string[] => {
  const answer = sweepAnswer(result);
  return answer.length ? [...answer, ...tieLine(result)] : [];
};

/** The model's best layout for the workload and how near the measured best came to it. */
function predictedLine(best: ModeResult): string[] {
  const floor = best.analysis?.model?.floor;
  const text = bestLayoutText(best);
  if (!floor || !text) return [];
  const off = best.stats.median / floor.ms - 1;
  if (text.startsWith('not predicted')) return [`model's best: ${text}`];
  return [`model's best: ${text}; measured best ${formatPercent(Math.abs(off))} ${off >= 0 ? 'above' : 'below'} it`];
}

type Layout3 = Pick<OverlapLayout, 'chunks' | 'streams' | 'order'>;

/** The layout the config itself gives, read from its resolved form (kept as written, so checked here). */
function configLayout(resolved: unknown): Layout3 | null {
  const pipeline: unknown =
    typeof resolved === 'object' && resolved !== null && 'pipeline' in resolved ? resolved.pipeline : null;
  if (typeof pipeline !== 'object' || pipeline === null) return null;
  const { chunks, streams, order } = pipeline as Record<string, unknown>;
  return typeof chunks === 'number' &&
    typeof streams === 'number' &&
    (order === 'depth-first' || order === 'breadth-first')
    ? { chunks, streams, order }
    : null;
}

/**
 * What to change: the pipeline settings that give the best, against the config's own layout where the sweep measured
 * it.
 */
function changeLine(result: RunResult, best: ModeResult, layout: Layout3): string {
  const own = configLayout(result.config.resolved);
  const file = basename(result.config.path ?? result.config.name);
  if (own && own.chunks === layout.chunks && own.streams === layout.streams && own.order === layout.order)
    return `change: nothing, ${file} already runs the best layout`;
  const order = own?.order === layout.order ? '' : `, order: ${layout.order}`;
  const set = `change: chunks: ${layout.chunks}, streams: ${layout.streams}${order} in ${file}'s pipeline`;
  if (!own) return set;
  const point = result.sweep?.points.find(
    (p) => p.chunks === own.chunks && p.streams === own.streams && p.order === own.order,
  );
  const measured = result.modes.find((m) => m.id === point?.mode);
  const now = measured
    ? `${formatMs(measured.stats.median)}, ${formatPercent(measured.stats.median / best.stats.median - 1)} slower`
    : 'not swept';
  return `${set} (now ${own.chunks} × ${own.streams}: ${now})`;
}

/** Why the race took its time: the layouts and the reps each ran, against the budget. */
function raceLine(result: RunResult): string {
  const sweep = result.sweep;
  if (!sweep) return '';
  const raced = sweep.points.flatMap((p) => result.modes.find((m) => m.id === p.mode) ?? []);
  const early = raced.filter((m) => m.stoppedBy === 'clearly-slower');
  const rest = raced.filter((m) => m.stoppedBy !== 'clearly-slower');
  const reps = (modes: readonly ModeResult[]) => {
    const counts = modes.map((m) => m.stats.n);
    const [low, high] = [Math.min(...counts), Math.max(...counts)];
    return low === high ? `${low} reps` : `${low}–${high} reps`;
  };
  const repMs = rest.length ? Math.max(...rest.map((m) => m.stats.median)) : 0;
  const parts = [
    ...(early.length ? [`${early.length} dropped after ${reps(early)}`] : []),
    ...(rest.length ? [`${rest.length} ran ${reps(rest)} of ≤ ${formatMs(repMs)}`] : []),
  ];
  return `${sweep.points.length} layouts in ${(sweep.elapsedMs / 1000).toFixed(1)} s (budget ${(sweep.budgetMs / 1000).toFixed(0)} s): ${parts.join(', ')}`;
}

/**
 * Over several settings, the answer before each setting's own: the setting whose best layout was fastest, ranked and
 * tied as a sweep ranks and ties its layouts (bimodal.ts's `fastestWithTies`), and the settings whose best ties with
 * it within noise, which it is no faster than.
 */
export function fastestSetting(results: readonly RunResult[]): string[] {
  if (results.length < 2) return [];
  const bests = results.flatMap((result) => {
    const mode = result.modes.find((m) => m.id === result.sweep?.best.mode);
    return mode?.role.kind === 'overlapped'
      ? [{ result, mode, layout: mode.role.layout, samplesMs: mode.samplesMs, stats: mode.stats }]
      : [];
  });
  if (!bests.length) return [];
  const { best, ties } = fastestWithTies(bests);
  const named = (b: (typeof bests)[number]) => settingsText(b.result) || 'the config as written';
  const tied = ties.length
    ? `; ties within noise: ${ties.map((t) => `${named(t)} (${formatMs(t.mode.stats.median)})`).join('; ')}`
    : '';
  return [
    `fastest of ${results.length} settings: ${named(best)}, at ${layoutText(best.layout)}, ${best.layout.order}: ${formatMs(best.mode.stats.median)}${tied}`,
    ...bestClocks(bests.map((b) => ({ name: named(b), range: b.mode.smClockMHz }))),
  ];
}

/**
 * Where the SM clock NVML read during the settings' best layouts' reps spread by more than CLOCK_SPREAD (each setting
 * runs apart, a value of pipeline.connections even in a process of its own): a line that says so, since part of a
 * difference between them may then be the clock's, not the setting's. Empty where they match, or where a best's clock
 * was not read (a sweep from before its race read clocks, or no NVML).
 */
function bestClocks(bests: ReadonlyArray<{ name: string; range: ClockRange | null }>): string[] {
  const read = bests.flatMap(({ name, range }) => (range ? [{ name, range }] : []));
  const [first, ...rest] = read;
  if (!first || read.length < bests.length) return [];
  const { status } = clockMatch(
    first.range,
    rest.map((r) => r.range),
  );
  if (status === 'matching') return [];
  const how =
    status === 'rebuilt' ? "differed between the settings' best layouts" : "moved while the settings' best layouts ran";
  return [
    `the SM clock ${how} (${read.map((r) => `${clockText(r.range)} with ${r.name}`).join('; ')}): part of their difference may be the clock's`,
  ];
}

/** The config lines that give the best layout (and this result's settings). */
export function yamlFragment(result: RunResult): string[] {
  const best = result.modes.find((m) => m.id === result.sweep?.best.mode);
  if (best?.role.kind !== 'overlapped') return [];
  const { layout } = best.role;
  const settings = Object.entries(result.sweep?.settings ?? {}).map(([k, v]) => `# and ${k}: ${v}`);
  return [
    'pipeline:',
    `  chunks: ${layout.chunks}`,
    `  streams: ${layout.streams}`,
    `  order: ${layout.order}`,
    ...settings,
  ];
}

/** The Markdown view: the same heat maps as tables. */
export function renderSweepMarkdown(result: RunResult): string {
  const sweep = result.sweep;
  if (!sweep) return '';
  const lines = [`### cuda-pipe sweep · ${result.config.name} on ${result.devices.map((d) => d.name).join(', ')}`, ''];
  for (const order of new Set(sweep.points.map((p) => p.order))) {
    const grid = cells(result, order);
    const chunks = [...new Set(grid.map((c) => c.chunks))].sort((a, b) => a - b);
    const streams = [...new Set(grid.map((c) => c.streams))].sort((a, b) => a - b);
    lines.push(
      `| ${order}: streams \\ chunks | ${chunks.join(' | ')} |`,
      `| --- |${chunks.map(() => ' ---: |').join('')}`,
    );
    for (const s of streams) {
      const row = chunks.map((c) => {
        const cell = grid.find((g) => g.streams === s && g.chunks === c);
        const text = cell?.mode.analysis ? `${cell.mode.analysis.speedup.toFixed(2)}×` : '–';
        return cell?.mode.id === sweep.best.mode ? `**${text}**` : text;
      });
      lines.push(`| ${s} | ${row.join(' | ')} |`);
    }
    lines.push('');
  }
  lines.push(...bestLines(result).map((l) => `- ${l}`), '', '```yaml', ...yamlFragment(result), '```');
  return lines.join('\n');
}

export const sweepTableExporter: RunExporter = {
  description: 'the sweep heat map and its best layout',
  render: (results, style, columns) =>
    [...fastestSetting(results), ...results.map((r) => renderSweepTable(r, style, columns))].join('\n\n'),
};

export const sweepMarkdownExporter: RunExporter = {
  description: 'the sweep heat map as Markdown',
  render: (results) => results.map(renderSweepMarkdown).join('\n\n'),
};
