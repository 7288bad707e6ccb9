import { openNvrtc } from '../../src/cuda/nvrtc.js';

/**
 * NVRTC tests must run for real in CI (.ci/run installs Debian's libnvrtc11.2), so there a missing NVRTC fails
 * the suite; on a developer's machine without it they are skipped with the reason.
 */
export function nvrtcSkipReason(): string | null {
  try {
    openNvrtc();
    return null;
  } catch (error) {
    if (process.env.CI) throw error;
    return `NVRTC not found: ${(error as Error).message.split('\n')[0]}`;
  }
}
