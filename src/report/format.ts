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

/** bytes over milliseconds in GB/s (1e9 bytes per second), as copy engines and PCIe are quoted. */
export function gbPerSecond(bytes: number, ms: number): number {
  return ms > 0 ? bytes / ms / 1e6 : Number.NaN;
}

export function formatRate(gbps: number): string {
  return Number.isFinite(gbps) ? `${gbps.toFixed(1)} GB/s` : '–';
}

export function formatPercent(fraction: number, digits = 1): string {
  return `${(fraction * 100).toFixed(digits)}%`;
}

/** "2.12× ± 0.01" (95%: two standard errors), or "2.12×" when the uncertainty is unknown. */
export function formatSpeedup(summary: { speedup: number; speedupError: number | null }): string {
  const value = `${summary.speedup.toFixed(2)}×`;
  return summary.speedupError === null ? value : `${value} ± ${(2 * summary.speedupError).toFixed(2)}`;
}

export function trimNumber(value: number, decimals: number): string {
  return Number.parseFloat(value.toFixed(decimals)).toString();
}
