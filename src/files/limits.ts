// Sizes far above anything real, low enough that a hostile or mistaken file cannot make us read gigabytes.
// Configs are a few hundred bytes and the largest shipped kernel a few KiB; result files hold raw samples.

export const MAX_CONFIG_BYTES = 1024 * 1024;
export const MAX_KERNEL_SOURCE_BYTES = 4 * 1024 * 1024;
export const MAX_RESULT_BYTES = 256 * 1024 * 1024;
/** A host stage's ES module (`host.before`/`after: { module }`): a bundled decoder is a few MiB at most. */
export const MAX_MODULE_BYTES = 16 * 1024 * 1024;

/** A limit above, in words: "1 MiB"; limits are whole MiB, anything else is shown in bytes. */
export function formatByteLimit(bytes: number): string {
  const mib = 1024 * 1024;
  return bytes % mib === 0 ? `${bytes / mib} MiB` : `${bytes} bytes`;
}
/** The largest CUBIN the kernel cache reads back (the shipped kernels' are a few KiB), and its metadata. */
export const MAX_CUBIN_BYTES = 64 * 1024 * 1024;
export const MAX_CACHE_META_BYTES = 1024 * 1024;
