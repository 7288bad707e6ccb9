import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../src/paths.js';

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

// Under tsx (npm test) this file is .ts and the CLI runs from src/; in the bundle it is compiled .js next to the
// compiled CLI, which runs without a loader.
const compiled = import.meta.url.endsWith('.js');

/** The node arguments that start the CLI, for tests that spawn it themselves. */
export function cliEntry(): string[] {
  const root = packageRoot();
  const entry = compiled ? [join(root, 'dist', 'src', 'cli', 'main.js')] : ['--import', 'tsx', join(root, 'src', 'cli', 'main.ts')];
  if (compiled && !existsSync(entry[0] as string)) throw new Error(`compiled CLI missing at ${entry[0]}`);
  return entry;
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
