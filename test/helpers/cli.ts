import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../src/paths.js';

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

// In the bundle this file is compiled .js next to the compiled CLI. Under tsx (npm test) it is .ts: the CLI then runs
// from dist/ when `npm test`'s type-check has just compiled it there (no older than any source file), which starts
// in half the time of compiling src/ through tsx at every spawn, and from src/ through tsx otherwise.
const compiled = import.meta.url.endsWith('.js');

let fresh: boolean | undefined;

/** True when dist/ holds the CLI compiled from the sources as they are now. */
function compiledIsFresh(root: string): boolean {
  if (fresh !== undefined) return fresh;
  const main = join(root, 'dist', 'src', 'cli', 'main.js');
  if (!existsSync(main)) return (fresh = false);
  const built = statSync(main).mtimeMs;
  const newest = (dir: string): number =>
    readdirSync(dir, { withFileTypes: true }).reduce((latest, entry) => {
      const path = join(dir, entry.name);
      return Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
    }, 0);
  return (fresh = newest(join(root, 'src')) <= built);
}

/** The node arguments that start the CLI, for tests that spawn it themselves. */
export function cliEntry(): string[] {
  const root = packageRoot();
  const dist = join(root, 'dist', 'src', 'cli', 'main.js');
  if (compiled && !existsSync(dist)) throw new Error(`compiled CLI missing at ${dist}`);
  return compiled || compiledIsFresh(root) ? [dist] : ['--import', 'tsx', join(root, 'src', 'cli', 'main.ts')];
}

/** How long a CLI run may take before the test fails, unless the test gives its own `timeoutMs`. */
export const CLI_DEADLINE_MS = 120_000;

/**
 * `timeoutMs` kills a CLI that hangs (SIGKILL: one that ignores SIGTERM would hold spawnSync for ever), so a test
 * of "must not hang" fails instead of stalling the suite; the run's stderr then says what it waited for.
 */
export function runCli(args: readonly string[], env: NodeJS.ProcessEnv = {}, options: { timeoutMs?: number } = {}): CliRun {
  const root = packageRoot();
  const timeoutMs = options.timeoutMs ?? CLI_DEADLINE_MS;
  const result = spawnSync(process.execPath, [...cliEntry(), ...args], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', ...env },
    cwd: root,
    maxBuffer: 64 * 1024 * 1024,
    timeout: timeoutMs,
    killSignal: 'SIGKILL',
  });
  const killed = result.signal === 'SIGKILL' && (result.error as NodeJS.ErrnoException | undefined)?.code === 'ETIMEDOUT';
  const stderr = killed
    ? `${result.stderr ?? ''}\n[test] \`cuda-pipe ${args.join(' ')}\` had not ended after ${timeoutMs / 1000} s and was killed; its last output is above.`
    : result.stderr;
  return { code: result.status, stdout: result.stdout, stderr };
}
