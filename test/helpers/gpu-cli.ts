import { type CliRun, runCli as runCliAt } from './cli.js';

/**
 * The CLI as the GPU tests run it: they match facts in what it prints, not its layout, so its lines are laid out
 * 1,000 columns wide (COLUMNS) and no phrase is split by the 100-column wrap a pipe gets. Each run has a process of
 * its own, as a user's would: a CUDA context, a lost one above all (which ends its process at once), must not be
 * shared with the tests or with the next run.
 */
export function runCli(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
  options: { timeoutMs?: number } = {},
): CliRun {
  return runCliAt(args, { COLUMNS: '1000', ...env }, { ...options, process: true });
}
