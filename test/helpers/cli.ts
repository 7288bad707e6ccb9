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

/** `timeoutMs` kills a CLI that hangs, so a test of "must not hang" fails instead of stalling the suite. */
export function runCli(args: readonly string[], env: NodeJS.ProcessEnv = {}, options: { timeoutMs?: number } = {}): CliRun {
  const root = packageRoot();
  const result = spawnSync(process.execPath, [...cliEntry(), ...args], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', ...env },
    cwd: root,
    maxBuffer: 64 * 1024 * 1024,
    timeout: options.timeoutMs ?? 0,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}
