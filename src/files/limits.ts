// Sizes far above anything real, low enough that a hostile or mistaken file cannot make us read gigabytes.
// Configs are a few hundred bytes and the largest shipped kernel a few KiB; result files hold raw samples.

export const MAX_CONFIG_BYTES = 1024 * 1024;
export const MAX_KERNEL_SOURCE_BYTES = 4 * 1024 * 1024;
export const MAX_RESULT_BYTES = 256 * 1024 * 1024;

export function formatByteLimit(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} bytes`;
}
