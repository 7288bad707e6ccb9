// Unit formatting shared by every layer (bytes, milliseconds, rates, percentages, field paths): numbers as people
// read them, with no colour or layout, which are report/'s business.

const BINARY_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'] as const;

/** 268435456 → "256 MiB"; keeps up to two decimals and drops trailing zeros. */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < BINARY_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${trimNumber(value, 2)} ${BINARY_UNITS[unit]}`;
}

/** Milliseconds with three significant decimals below 10 ms, fewer above. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
  if (ms >= 100) return `${ms.toFixed(1)} ms`;
  if (ms >= 10) return `${ms.toFixed(2)} ms`;
  if (ms >= 0.01) return `${ms.toFixed(3)} ms`;
  return `${(ms * 1000).toFixed(2)} µs`;
}

/**
 * A time of microseconds, given in ms, always in µs with one decimal: for per-op costs and latencies set side by side.
 */
export function formatUs(ms: number): string {
  return `${(ms * 1000).toFixed(1)} µs`;
}

/** "2.56 µs each": host milliseconds spread over the calls that took them. */
export function formatUsEach(ms: number, calls: number): string {
  return `${((ms * 1000) / Math.max(1, calls)).toFixed(2)} µs each`;
}

/** bytes over milliseconds in GB/s (1e9 bytes per second), as copy engines and PCIe are quoted. */
export function gbPerSecond(bytes: number, ms: number): number {
  return ms > 0 ? bytes / ms / 1e6 : Number.NaN;
}

/**
 * A rate in GB/s (1e9 bytes per second) with a decimal, or in MB/s, KB/s or B/s with three significant digits below
 * 1 GB/s, so that a small copy's rate (128 bytes in 5.6 µs: 22.8 MB/s) never reads 0.0 GB/s; '–' where no rate is
 * known or nothing moved.
 */
export function formatRate(gbps: number): string {
  if (!Number.isFinite(gbps) || gbps <= 0) return '–';
  if (gbps >= 1) return `${gbps.toFixed(1)} GB/s`;
  const [value, unit] = gbps >= 1e-3 ? [gbps * 1e3, 'MB/s'] : gbps >= 1e-6 ? [gbps * 1e6, 'KB/s'] : [gbps * 1e9, 'B/s'];
  return `${Number.parseFloat(value.toPrecision(3))} ${unit}`;
}

/** Floating-point rate in TFLOP/s (1e12 per second), as GEMM libraries quote it. */
export function formatTflops(tflops: number): string {
  return Number.isFinite(tflops) ? `${tflops.toFixed(tflops < 10 ? 2 : 1)} TFLOP/s` : '–';
}

export function formatPercent(fraction: number, digits = 1): string {
  return `${(fraction * 100).toFixed(digits)}%`;
}

/**
 * An efficiency (this layout's floor / its measured time) as every view prints it: a ratio to two decimals, 0.98, where
 * `report` said 0.98, `merge` 97.8% and the HTML page percentages (issue 39). Above 1.00 the layout beat its floor.
 */
export function formatEfficiency(efficiency: number): string {
  return efficiency.toFixed(2);
}

/**
 * The link's rate the bound was built from, at the link mode's fastest rep (the model takes each part at its fastest),
 * as the report and the advice both say it: the table's rate beside the link mode is at its median, and one screen
 * said 99.9 and 99.8 GB/s of one link without a word of why (issue 39).
 */
export function boundLinkRate(bound: { readonly linkGbPerSecond: number | null }): string | null {
  return bound.linkGbPerSecond ? `${formatRate(bound.linkGbPerSecond)} at its fastest rep` : null;
}

/**
 * A ratio on the wrong side of 1 with the decimals that keep it there: a speedup of 0.997 is `0.997×`, never the
 * `1.00×` that two decimals make of it beside the words "slower than serial". Two decimals where they suffice.
 */
export function formatRatioBelowOne(ratio: number): string {
  let digits = 2;
  while (digits < 6 && ratio < 1 && Number(ratio.toFixed(digits)) >= 1) digits += 1;
  return `${ratio.toFixed(digits)}×`;
}

export function trimNumber(value: number, decimals: number): string {
  return Number.parseFloat(value.toFixed(decimals)).toString();
}

/** ["pipeline", "chunks"] → "pipeline.chunks"; ["kernels", 0, "args"] → "kernels[0].args". */
export function formatPath(path: readonly (string | number)[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/**
 * Control characters that a terminal acts on (escape sequences, carriage returns, bidirectional overrides) shown as
 * visible `\u001b` escapes, for text that came from a file: a name from a Result or a config reaches the terminal
 * as text, never as commands. Newlines and tabs stay.
 */
export function escapeControl(text: string): string {
  return text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** C0 but tab and newline, DEL and C1, and the bidirectional embeddings, overrides and isolates. */
export const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
