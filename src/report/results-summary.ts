import { formatMs } from '../format.js';
import type { RunResult } from '../result/schema.js';
import type { RunExporter } from './exporter.js';
import { formatSpeedup } from './labels.js';
import { DEFAULT_COLUMNS, fitLines } from './width.js';

// A file of several Results (the perf gate's results.json, run --host-memory, a merge of ranks) printed 4 full
// reports, 204 lines, with nothing first to say what they hold (issue 39). Its answer comes first now: one line per
// Result, then the reports as before.

/** How a Result is told from the others in the file: its config, its rank, and where those repeat its host memory. */
function names(results: readonly RunResult[]): string[] {
  const base = results.map((r) => `${r.config.name}${r.run.rank === null ? '' : ` rank ${r.run.rank}`}`);
  return results.map((r, i) => {
    const name = base[i] ?? r.config.name;
    if (base.indexOf(name) === base.lastIndexOf(name)) return name;
    const kinds = [...new Set(r.buffers.filter((b) => b.role !== 'scratch').map((b) => b.hostMemory))].join('/');
    return `${name} (${kinds || `#${i + 1}`})`;
  });
}

/** "balanced: 2.09× ± 0.01 over serial (12.58 ms → 6.025 ms), limited by link": each Result's headline, a line each. */
export function resultsSummary(results: readonly RunResult[], columns = DEFAULT_COLUMNS): string {
  const named = names(results);
  const devicesOf = (r: RunResult) => [...new Set(r.devices.map((d) => d.name))].join(', ');
  const shared = new Set(results.map(devicesOf)).size === 1 ? devicesOf(results[0] as RunResult) : null;
  const lines = results.map((r, i) => {
    const head = r.modes.find((m) => m.id === r.summary.mode);
    const limit = head?.analysis ? `, limited by ${head.analysis.bound.limitedBy}` : '';
    const speedup = `${formatSpeedup(r.summary)} over serial (${formatMs(r.summary.serialMs)} → ${formatMs(r.summary.overlappedMs)})`;
    return `  ${named[i]}: ${speedup}${limit}${shared === null ? `, on ${devicesOf(r)}` : ''}`;
  });
  return fitLines(
    [
      `${results.length} Results${shared === null ? '' : ` on ${shared}`}; each one's full report follows:`,
      ...lines,
    ].join('\n'),
    columns,
  );
}

/** `exporter`, with the one-line-a-Result summary first where it is given more than one Result. */
export function summaryFirst(exporter: RunExporter): RunExporter {
  return {
    description: `${exporter.description}, a summary line per Result first`,
    render: (results, style, columns) => {
      const reports = exporter.render(results, style, columns);
      return results.length > 1 ? `${resultsSummary(results, columns)}\n\n${reports}` : reports;
    },
  };
}
