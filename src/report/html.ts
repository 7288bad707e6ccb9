import { formatEfficiency } from '../format.js';
import { kindSections } from './kind-sections.js';
import { devicesLines } from './devices.js';
import { comparisonText, leadComparisons, modelLines, roleLabel, serialCaveat, verificationWords } from './labels.js';
import { type RunExporter, pictured } from './exporter.js';
import type { ModeResult } from '../model/mode.js';
import type { RunResult } from '../result/schema.js';
import { renderSweepBest, renderSweepSection, type SweepPoint, sweepPoints } from './sweep.js';
import { renderSweepChart } from './sweep-chart.js';
import { renderSvg } from './svg.js';
import { toolboxLines } from './toolbox.js';
import {
  analysisFacts,
  analyzeTracedRep,
  deviceLabel,
  deviceOf,
  escapeXml as escape,
  IDLE_COLUMNS,
  idleRows,
  ms,
  timelineGroups,
} from './timeline-common.js';

// One self-contained HTML file: the run's numbers, the timeline and its analysis. Everything is inline (CSS, SVG)
// and a Content-Security-Policy forbids fetching anything, so the report opens offline and never calls out.

export interface HtmlOptions {
  /** A sweep's points: adds the speedup heat map. */
  readonly sweep?: readonly SweepPoint[];
  /** Width of the timeline SVGs, px. */
  readonly width?: number;
}

const CSS = `
body { font-family: "DejaVu Sans", Arial, Helvetica, sans-serif; color: #222; margin: 24px; max-width: 1040px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h4 { font-size: 13px; margin: 14px 0 4px; }
.meta { color: #555; margin: 0; }
.headline { font-size: 16px; }
table { border-collapse: collapse; margin: 6px 0 12px; }
th, td { padding: 3px 10px; border-bottom: 1px solid #eee; text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
thead th { border-bottom: 1px solid #999; }
figure.timeline { margin: 8px 0; }
figure.timeline svg { display: block; max-width: none; }
dl.facts { display: grid; grid-template-columns: max-content auto; gap: 2px 16px; margin: 6px 0; }
dl.facts dt { color: #555; }
dl.facts dd { margin: 0; }
table.heatmap td.best { font-weight: bold; outline: 2px solid #222; }
table.heatmap caption { text-align: left; font-weight: bold; }
details#raw-modes > summary { cursor: pointer; margin: 28px 0 8px; font-size: 15px; }
.warning { border-left: 4px solid #c77c02; padding: 4px 10px; margin: 6px 0; background: #fff8e6; }
`;

/** No fetches of any kind; inline styles are the only outside-the-markup thing the page uses. */
export const CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'unsafe-inline'";

/** The lines of a self-contained page: its title, inline `css`, the policy that fetches nothing, and `body`. */
export function htmlPage(title: string, css: string, body: readonly string[]): string[] {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${CONTENT_SECURITY_POLICY}">`,
    `<title>${escape(title)}</title>`,
    `<style>${css}</style>`,
    '</head>',
    '<body>',
    ...body,
    '</body>',
    '</html>',
  ];
}

export function renderHtml(result: RunResult, options: HtmlOptions = {}): string {
  const gpus = [...new Set(result.devices.map((d) => d.name))].join(', ');
  const title = `cuda-pipe: ${result.config.name} on ${gpus}`;
  return htmlPage(title, CSS, [
    '<header>',
    `<h1>${escape(title)}</h1>`,
    `<p class="meta">${escape(metaLine(result))}</p>`,
    // The comparison that answers the config's question leads, as in the terminal and the Markdown.
    ...leadComparisons(result).map((c) => `<p class="headline">${escape(comparisonText(c))}</p>`),
    `<p class="headline">${escape(headline(result))}</p>`,
    '</header>',
    ...(result.sweep
      ? sweepBody(result, options)
      : [
          modesSection(result),
          overlapSection(result),
          toolboxSection(result),
          timelineSection(result, options),
          renderSweepSection(options.sweep ?? sweepPoints(result)),
          warningsSection(result),
        ]),
  ])
    .filter((part) => part !== '')
    .join('\n');
}

/**
 * A sweep reads at a glance: the heat map, the chart and the best layout with its YAML first, then the best
 * layout's timeline; every raw mode of the race and the model's verdict on each, folded at the end.
 */
function sweepBody(result: RunResult, options: HtmlOptions): string[] {
  return [
    renderSweepSection(options.sweep ?? sweepPoints(result)),
    `<section id="sweep-chart">${renderSweepChart(result)}</section>`,
    renderSweepBest(result),
    timelineSection(result, options),
    warningsSection(result),
    `<details id="raw-modes">\n<summary>Every mode of the sweep (${result.modes.length}) and the model's verdict on each layout</summary>\n` +
      `${[modesSection(result), overlapSection(result)].filter((part) => part !== '').join('\n')}\n</details>`,
  ];
}

function metaLine(result: RunResult): string {
  const sw = result.environment.software;
  return [
    `${result.tool.name} ${result.tool.version}`,
    result.run.hostname,
    result.createdAt,
    `driver ${sw.driver}, runtime ${sw.runtime}`,
    `config ${result.config.path ?? result.config.name} (${result.config.hash})`,
  ].join(' · ');
}

function headline(result: RunResult): string {
  const s = result.summary;
  const mode = result.modes.find((m) => m.id === s.mode);
  return (
    `${mode ? roleLabel(mode.role) : s.mode}: ${ms(s.overlappedMs)} against ${ms(s.serialMs)} serial, ` +
    `speedup ${speedup(s.speedup, s.speedupError)}, efficiency ${formatEfficiency(s.efficiency)} (the model's bound over the median). ` +
    `Verification ${verificationWords(result.verification)}.`
  );
}

function modesSection(result: RunResult): string {
  const several = result.devices.length > 1;
  const head = ['mode', ...(several ? ['device'] : []), 'median', 'min', 'max', 'noise', 'n'];
  const rows = result.modes.map((m) => [
    roleLabel(m.role),
    ...(several ? [`GPU ${m.device}`] : []),
    ms(m.stats.median),
    ms(m.stats.min),
    ms(m.stats.max),
    percent(m.stats.relativeNoise, 2),
    String(m.stats.n),
  ]);
  return section('modes', 'Modes', table(head, rows, 'modes'));
}

function overlapSection(result: RunResult): string {
  const overlapped = result.modes.filter(
    (m): m is ModeResult & { analysis: NonNullable<ModeResult['analysis']> } =>
      m.role.kind === 'overlapped' && m.analysis !== null,
  );
  if (!overlapped.length) return '';
  const several = result.devices.length > 1;
  const head = ['mode', ...(several ? ['device'] : []), 'median', 'speedup', 'bound', 'limited by', 'efficiency'];
  const rows = overlapped.map((m) => [
    roleLabel(m.role),
    ...(several ? [`GPU ${m.device}`] : []),
    ms(m.stats.median),
    serialCaveat(m, result)?.omit ? '—' : speedup(m.analysis.speedup, m.analysis.speedupError),
    ms(m.analysis.bound.ms),
    m.analysis.bound.limitedBy,
    formatEfficiency(m.analysis.efficiency),
  ]);
  // The model's verdict for each layout: its floor, the workload's, and where the lost time went.
  const verdicts = overlapped.flatMap((m) => {
    const lines = modelLines(m);
    return lines.length
      ? [
          `<div class="model" data-mode="${escape(m.id)}"><p><strong>${escape(roleLabel(m.role))}</strong></p>${lines.map((l) => `<p>${escape(l)}</p>`).join('')}</div>`,
        ]
      : [];
  });
  return section('overlap', 'Overlapped modes', table(head, rows, 'overlap') + verdicts.join(''));
}

/** The toolbox's variants, each against its twin without it, in the words of the terminal report. */
function toolboxSection(result: RunResult): string {
  const lines = toolboxLines(result);
  return lines.length ? section('toolbox', 'Stream toolbox', lines.map((l) => `<p>${escape(l)}</p>`).join('\n')) : '';
}

function timelineSection(result: RunResult, options: HtmlOptions): string {
  const groups = timelineGroups(result);
  if (!groups.length)
    return section('timeline', 'Timeline', '<p>No traced reps in this result: run with --timeline to record one.</p>');
  // Each SVG carries its own title (config, devices, mode) and legend.
  const parts = groups.map((group) =>
    [
      `<figure class="timeline" data-mode="${escape(group.mode)}">`,
      renderSvg(result, {
        mode: group.mode,
        ...(options.width === undefined ? {} : { width: options.width }),
      }).trimEnd(),
      '</figure>',
      ...group.reps.map((rep) => {
        const a = analyzeTracedRep(result, rep);
        const facts = analysisFacts(a, rep)
          .map((f) => `<dt>${escape(f.label)}</dt><dd>${escape(f.value)}</dd>`)
          .join('');
        const heading = group.multiDevice
          ? `<h4>Analysis, ${escape(deviceLabel(deviceOf(result, rep.device), rep.device))}</h4>`
          : '';
        return (
          `<div class="analysis" data-mode="${escape(rep.mode)}" data-device="${rep.device}">${heading}<dl class="facts">${facts}</dl>` +
          `<p>Idle time by cause: host (not yet issued), engine (its copy engine busy on another stream), dependency (the rest).</p>` +
          `${table([...IDLE_COLUMNS], idleRows(a), 'idle')}</div>`
        );
      }),
    ].join('\n'),
  );
  return section('timeline', 'Timeline', parts.join('\n'));
}

function warningsSection(result: RunResult): string {
  const warnings = result.warnings.map(
    (w) =>
      `<div class="warning" data-code="${escape(w.code)}"><strong>${escape(w.message)}</strong> ${escape(w.remedy)}</div>`,
  );
  const notes = result.notes.map((n) => `<li>${escape(n)}</li>`);
  const devices = devicesLines(result);
  const kinds = kindSections(result).map((s) => section(s.id, s.title, `<pre>${escape(s.lines.join('\n'))}</pre>`));
  const mismatches = result.verification.mismatches.map(
    (m) =>
      `<li>${escape(`${m.mode}: ${m.buffer}[${m.index}] expected ${m.expected}, got ${m.actual} (${m.differing} differ)`)}</li>`,
  );
  return [
    devices.length ? section('devices', 'Several GPUs', `<pre>${escape(devices.join('\n'))}</pre>`) : '',
    ...kinds,
    warnings.length ? section('warnings', 'Warnings', warnings.join('\n')) : '',
    mismatches.length ? section('verification', 'Verification failures', `<ul>${mismatches.join('')}</ul>`) : '',
    notes.length ? section('notes', 'Notes', `<ul>${notes.join('\n')}</ul>`) : '',
  ]
    .filter((s) => s !== '')
    .join('\n');
}

function section(id: string, heading: string, body: string): string {
  return `<section id="${id}">\n<h2>${escape(heading)}</h2>\n${body}\n</section>`;
}

function table(head: readonly string[], rows: readonly (readonly string[])[], cls: string): string {
  const th = head.map((h) => `<th scope="col">${escape(h)}</th>`).join('');
  const body = rows.map((r) => `<tr>${r.map((c) => `<td>${escape(c)}</td>`).join('')}</tr>`).join('\n');
  return `<table class="${cls}">\n<thead><tr>${th}</tr></thead>\n<tbody>\n${body}\n</tbody>\n</table>`;
}

/** "1.87× ± 0.02": the ± is two standard errors (95%), as the run table prints it. */
function speedup(value: number, error: number | null): string {
  return error === null ? `${value.toFixed(2)}×` : `${value.toFixed(2)}× ± ${(2 * error).toFixed(2)}`;
}

function percent(fraction: number, digits = 1): string {
  return `${(fraction * 100).toFixed(digits)}%`;
}

export const htmlExporter: RunExporter = {
  description: 'one self-contained HTML report: tables, bound, timeline',
  render: (results) => renderHtml(pictured(results)),
};
