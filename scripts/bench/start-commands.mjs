// What scripts/bench/start.mjs and start-phases.mjs share: their flags, the commands of issue 40's start targets on
// committed documents, and the environment every timed start runs in.
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The value after `name` in `args`, or `fallback`; and `--runs`, a whole number of at least 1 (default 21). */
export function readFlags(args) {
  const flag = (name, fallback) => {
    const i = args.indexOf(name);
    return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback;
  };
  const runs = Number(flag('--runs', '21'));
  if (!Number.isInteger(runs) || runs < 1)
    throw new Error(`--runs takes a whole number of rounds, at least 1; got ${flag('--runs')}`);
  return { flag, runs };
}

// Committed documents, so that anyone can run the same commands: a traced Result of one layout, and two Results of the
// same config to compare.
const fixture = (name) => relative(process.cwd(), join(root, 'test', 'fixtures', name));
export const REPORT_ARGS = ['report', fixture('h200-balanced-16-traced.json')];
export const COMPARE_ARGS = ['compare', fixture('h100-balanced-1.json'), fixture('h100-balanced-2.json')];

/**
 * A fixed width and no colour: the same work in every run, whatever the terminal. NODE_EXTRA_CA_CERTS makes Node read
 * and parse a certificate bundle at every start, before any of cuda-pipe runs (50 ms on the 2-core host where this was
 * written, whose environment sets it): it is left out unless `keepEnv`.
 */
export function startEnv(keepEnv = false) {
  const env = { ...process.env, COLUMNS: '100', NO_COLOR: '1' };
  if (!keepEnv) delete env.NODE_EXTRA_CA_CERTS;
  return env;
}
