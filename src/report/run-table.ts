import Table from 'cli-table3';
import { STOP_RULE_TEXT } from '../measure/policy.js';
import type { ModeResult, RunResult } from '../result.js';
import { formatBytes, formatMs, formatPercent, formatRate, formatSpeedup, gbPerSecond } from './format.js';
import type { Style } from './style.js';

const MODE_LABEL: Record<string, string> = {
  h2d: 'H2D alone', d2h: 'D2H alone', bidirectional: 'H2D + D2H at once', serial: 'serial', overlapped: 'overlapped',
};

export function modeLabel(mode: ModeResult, result: RunResult): string {
  if (mode.id === 'overlapped' && result.layout.orders.length > 1) return `overlapped (${result.layout.order})`;
  if (mode.id.startsWith('overlapped:')) return `overlapped (${mode.id.slice(11)})`;
  return MODE_LABEL[mode.id] ?? (mode.id.startsWith('kernel:') ? `kernel ${mode.id.slice(7)} alone` : mode.id);
}

export function rateOf(mode: ModeResult): string {
  const bytes = mode.bytes.h2d + mode.bytes.d2h;
  return mode.kind === 'stage' || mode.kind === 'link' ? (bytes ? formatRate(gbPerSecond(bytes, mode.stats.median)) : '') : '';
}

/** The terminal report of one run, drawn from the Result alone. */
export function renderRunTable(result: RunResult, style: Style): string {
  const d = result.environment.device;
  const lines: string[] = [];
  const link = d.pcie ? `, PCIe gen${d.pcie.generation ?? '?'} x${d.pcie.width}` : '';
  lines.push(style.bold(`cuda-pipe ${result.tool.version} · ${result.config.name} · ${d.name}`) +
    ` (sm_${d.computeCapability.major}${d.computeCapability.minor}, ${d.multiprocessors} SMs, ${d.asyncEngineCount} copy engines${link})`);
  const totals = result.buffers.filter((b) => b.role !== 'scratch').map((b) => `${b.name} ${formatBytes(b.bytes)} ${b.role}`).join(', ');
  const memory = [...new Set(result.buffers.filter((b) => b.role !== 'scratch').map((b) => b.hostMemory))].join('/');
  lines.push(`layout: ${result.layout.chunks} chunks × ${result.layout.chunkElements} elements over ${result.layout.streams} streams, ` +
    `${result.layout.orders.join(' and ')}; buffers ${totals}; ${memory} host memory`);
  lines.push('kernels: ' + result.kernels.map((k) =>
    `${k.label} (${k.entry}, ${k.compile.cached ? 'cache hit' : `compiled by NVRTC ${k.compile.nvrtc}`} for ${k.compile.arch} in ${formatMs(k.compile.ms)})`).join('; '));
  lines.push(timingLine(result));
  const table = new Table({
    head: ['mode', 'median', 'min', 'max', 'noise', 'n', 'copy rate'],
    style: { head: [], border: [] },
    colAligns: ['left', 'right', 'right', 'right', 'right', 'right', 'right'],
  });
  for (const mode of displayOrder(result.modes)) {
    const emphasise = mode.kind === 'overlapped' ? style.bold : (s: string) => s;
    table.push([emphasise(modeLabel(mode, result)), emphasise(formatMs(mode.stats.median)), formatMs(mode.stats.min), formatMs(mode.stats.max),
      formatPercent(mode.stats.relativeNoise, 2), `${mode.stats.n}${mode.stats.outliers.length ? ` (${mode.stats.outliers.length} out)` : ''}`, rateOf(mode)]);
  }
  lines.push(table.toString());
  const { summary, bound } = result;
  const confidence = summary.speedupError === null ? 'one sample a mode: no uncertainty' : '95%';
  lines.push(`${style.bold('speedup over serial')}: ${style.bold(formatSpeedup(summary))} ` +
    `(${confidence}; ${formatMs(summary.serialMs)} → ${formatMs(summary.overlappedMs)})`);
  const detail = bound.limitedBy === 'link'
    ? `the link with both copy directions at once${bound.linkGbPerSecond ? ` (${formatRate(bound.linkGbPerSecond)})` : ''}: ` +
      `${formatMs(bound.steadyMs)}, plus ${formatMs(bound.fillDrainMs)} of fill and drain with one direction alone`
    : `${bound.limitedBy}: ${formatMs(bound.steadyMs)}, plus ${formatMs(bound.fillDrainMs)} of fill and drain over ${result.layout.chunks} chunks`;
  lines.push(`bound: ${formatMs(bound.ms)}, limited by ${detail}; efficiency bound/measured ${summary.efficiency.toFixed(2)}`);
  lines.push(verificationLine(result, style));
  lines.push(`clocks: ${result.clocks.checked && result.clocks.minMHz !== null ? `SM ${result.clocks.minMHz} to ${result.clocks.maxMHz} MHz while kernels ran (NVML)` : result.clocks.note}`);
  for (const note of result.notes) lines.push(`note: ${note}`);
  if (result.warnings.length) {
    lines.push('', style.yellow('Warnings:'));
    for (const w of result.warnings) lines.push(`  ${style.yellow('•')} ${w.message}`, `    ${w.remedy}`);
  }
  return lines.join('\n');
}

export function displayOrder(modes: readonly ModeResult[]): ModeResult[] {
  const rank = (m: ModeResult) => ({ stage: 0, link: 1, serial: 2, overlapped: 3 })[m.kind];
  return [...modes].sort((a, b) => rank(a) - rank(b));
}

/** What the times include, and why the repetition stopped. */
export function timingLine(result: RunResult): string {
  const p = result.policy;
  const what = p.gate ? 'GPU time only (--gate held the streams until each rep was issued)' : 'GPU time including host issue cost (no --gate)';
  const rules = [...new Set(result.modes.map((m) => m.stoppedBy))].map((r) => STOP_RULE_TEXT[r]);
  const policy = p.fixedReps !== null
    ? `${p.fixedReps} reps per mode after ${p.warmup} warm-ups`
    : `after ${p.warmup} warm-ups, reps until noise ≤ ${formatPercent(p.maxNoise, 2)} (≥ ${p.minReps} reps, ≤ ${p.maxTimeMs / 1000} s a mode)`;
  return `timing: CUDA events, ${what}; ${policy}; stopped because ${rules.join(' / ')}; noise is 1.4826·MAD/median`;
}

function verificationLine(result: RunResult, style: Style): string {
  const v = result.verification;
  if (v.status === 'passed') return `verification: ${style.green('passed')} (overlapped outputs equal serial byte for byte; every element written)`;
  if (v.status === 'skipped') return `verification: ${style.yellow('skipped')} (--no-verify)`;
  return `verification: ${style.red('FAILED')}\n` + v.mismatches.map((m) =>
    `  output "${m.buffer}": first difference at element ${m.index}: serial ${m.expected}, overlapped ${m.actual}` +
    `${m.unwritten ? ' (never written by the overlapped mode)' : ''}; ${m.differing} elements differ`).join('\n');
}
