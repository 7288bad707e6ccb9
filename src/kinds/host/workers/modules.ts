// The one check on a user's stage modules that needs no worker, apart from the pool so that `run --dry-run`, which
// starts none, can make it without loading worker_threads and the pool with every CLI start.
import { UsageError } from '../../../errors.js';
import { MAX_MODULE_BYTES } from '../../../files/limits.js';
import { checkRegularFile } from '../../../files/read.js';

export const MODULE_HINT =
  "Check the module's path (relative to the config file), that it loads with `node <file>`, and that it exports the function the config names.";

/**
 * A user's module is a regular file within MAX_MODULE_BYTES, as a config is: import() of a FIFO or of /dev/zero
 * would block its worker in a read no terminate() can end. Checked before any worker starts, and by `--dry-run`.
 */
export function checkStageModules(
  functions: Readonly<Record<string, { readonly kind: string; readonly path?: string } | null>>,
): void {
  for (const [fn, spec] of Object.entries(functions)) {
    if (spec?.kind !== 'module' || spec.path === undefined) continue;
    try {
      checkRegularFile(spec.path, { what: 'module', maxBytes: MAX_MODULE_BYTES });
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      throw new UsageError(`host stage function '${fn}': ${error.message}`, { hint: MODULE_HINT });
    }
  }
}
