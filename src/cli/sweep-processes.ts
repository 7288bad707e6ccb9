import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { SweepAxes } from '../api/sweep.js';
import type { Setting } from '../config/settings.js';
import type { LoadedConfig } from '../config/types.js';
import { DeviceFailure, EnvironmentError, Interrupted, UsageError } from '../errors.js';
import { KIND_FLAGS } from '../kinds/index.js';
import { packageRoot } from '../paths.js';
import { loadResults } from '../result/load.js';
import { cliIo } from './io.js';
import type { RunResult } from '../result/schema.js';
import type { SweepFlags } from './sweep-flags.js';

// CUDA reads CUDA_DEVICE_MAX_CONNECTIONS once a process, when it starts, so one process cannot race
// pipeline.connections: a sweep whose settings ask for several values runs the settings of each value in a cuda-pipe
// process of its own, one after another, each writing its Results to a file this process reads. Megatron-LM's
// CUDA_DEVICE_MAX_CONNECTIONS=1 and CUDA's 8 queues change how a communication stream's launches overtake compute, so
// this is one of the knobs a data-parallel sweep races (issue 40).

const PATH = 'pipeline.connections';

/** The settings a process of its own measures: those of one value of pipeline.connections. */
export interface ConnectionsPart {
  readonly connections: number;
  /** Indexes into the sweep's settings, in their order. */
  readonly settings: readonly number[];
}

/**
 * The sweep's settings by their pipeline.connections, in the order each value first comes; null for one value. Only
 * the axis `pipeline.connections` makes settings differ in it, so each then has a value.
 */
export function connectionsParts(configs: readonly LoadedConfig[]): ConnectionsPart[] | null {
  const parts = new Map<number | null, number[]>();
  configs.forEach((config, index) => {
    const value = config.config.pipeline.connections;
    parts.set(value, [...(parts.get(value) ?? []), index]);
  });
  if (parts.size <= 1) return null;
  return [...parts].map(([connections, settings]) => {
    if (connections === null) throw new Error(`settings ${settings.join(', ')} of the sweep have no ${PATH}`);
    return { connections, settings };
  });
}

/** The sweep's axes with pipeline.connections narrowed to one value: what the process of that value sweeps. */
export function narrowedSets(sets: SweepAxes['sets'], connections: number): SweepAxes['sets'] {
  return sets.map((set) => (set.path === PATH ? { path: PATH, values: [connections] } : set));
}

/**
 * The command line that sweeps `sets` with these flags, the Results to `json` and nothing else written: what a part's
 * process runs. Every flag that changes what is measured is given again; the outputs are this process's to write.
 */
export function sweepArgs(config: string, flags: SweepFlags, sets: SweepAxes['sets'], json: string): string[] {
  const list = (values: ReadonlyArray<string | number>) => values.join(',');
  const given = flags as unknown as Readonly<Record<string, unknown>>;
  return [
    'sweep',
    config,
    ...(flags.streams ? ['--streams', list(flags.streams)] : []),
    ...(flags.chunks ? ['--chunks', list(flags.chunks)] : []),
    ...(flags.order ? ['--order', list(flags.order)] : []),
    ...sets.flatMap((set) => ['--set', `${set.path}=${list(set.values)}`]),
    ...(flags.maxTime === undefined ? [] : ['--max-time', String(flags.maxTime)]),
    ...(flags.exhaustive ? ['--exhaustive'] : []),
    ...(flags.device === undefined ? [] : ['--device', String(flags.device)]),
    ...(flags.devices === undefined ? [] : ['--devices', flags.devices === 'all' ? 'all' : list(flags.devices)]),
    ...(flags.gate ? ['--gate'] : []),
    ...(flags.verify ? [] : ['--no-verify']),
    '--wait',
    flags.wait,
    ...KIND_FLAGS.flatMap((flag) => {
      const value = given[flag.key];
      return typeof value === 'string' ? [flag.option.split(' ')[0] as string, value] : [];
    }),
    '--json',
    json,
  ];
}

/** What a part's process ran, for messages and notes. */
const partText = (part: ConnectionsPart) => `${PATH} ${part.connections}`;

/**
 * A part's process that failed: the class of its exit code, so that this process ends as it did (its own message is
 * on stderr above this one). Exit 1, outputs that differ, is no failure of the process: its Results are written.
 */
export function partFailure(part: ConnectionsPart, code: number | null, signal: string | null): Error {
  const message = `The settings with ${partText(part)} ran in a cuda-pipe process of their own, which ${code === null ? `was ended by ${signal}` : `exited ${code}`}: its message is above.`;
  if (code === 130) return new Interrupted(message);
  if (code === 2) return new UsageError(message);
  if (code === 3) return new EnvironmentError(message);
  if (code === 4) return new DeviceFailure(message);
  return new Error(message);
}

/**
 * The part's Results as the whole sweep's: every axis with all its values, and a note of the process it ran in. They
 * come back in the order of `part.settings`.
 */
export function asPartOf(results: readonly RunResult[], part: ConnectionsPart, axes: SweepAxes): RunResult[] {
  const note = `pipeline.connections takes ${new Set(axes.sets.find((s) => s.path === PATH)?.values).size} values in this sweep, and CUDA reads CUDA_DEVICE_MAX_CONNECTIONS once a process: this setting ran in a cuda-pipe process of its own, with ${partText(part)}.`;
  const axesOf = new Map(axes.sets.map((set) => [set.path, set.values]));
  return results.map((result) => {
    const { sweep } = result;
    if (!sweep) return result;
    return {
      ...result,
      sweep: {
        ...sweep,
        axes: sweep.axes.map((axis) => ({ ...axis, values: [...(axesOf.get(axis.name) ?? axis.values)] })),
      },
      notes: [...result.notes, note],
    };
  });
}

/** The loader a part's process starts, as bin/cuda-pipe does, under the Node.js running this one. */
function cliLoader(): string {
  const loader = join(packageRoot(), 'dist', 'cli', 'cuda-pipe.js');
  if (!existsSync(loader)) {
    throw new EnvironmentError(
      `A sweep over several values of ${PATH} runs each in a cuda-pipe process of its own, started from ${loader}, which does not exist.`,
      { hint: 'Build cuda-pipe (npm run build), or sweep one value of pipeline.connections a command.' },
    );
  }
  return loader;
}

/**
 * Runs one part's sweep in a process of its own and reads its Results. The child has a process group of its own, so
 * that a signal reaches it once, from here: Ctrl-C and SIGTERM abort `signal`, which is passed on, and the child
 * stops at its next rep boundary as a sweep does.
 */
async function runPart(
  config: string,
  flags: SweepFlags,
  axes: SweepAxes,
  part: ConnectionsPart,
  signal: AbortSignal,
): Promise<RunResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-sweep-'));
  try {
    const json = join(dir, 'results.json');
    const args = sweepArgs(config, flags, narrowedSets(axes.sets, part.connections), json);
    const child = spawn(process.execPath, [cliLoader(), ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
      env: process.env,
    });
    // Its progress and its messages, through this command's stderr (a pipe: progress lines, not a bar).
    child.stderr?.on('data', (chunk: Buffer) => cliIo().stderr.write(chunk.toString()));
    const pass = () => child.kill(signal.reason === 'SIGINT' ? 'SIGINT' : 'SIGTERM');
    signal.addEventListener('abort', pass, { once: true });
    const { code, ended } = await new Promise<{ code: number | null; ended: string | null }>((done, fail) => {
      child.once('error', fail);
      child.once('close', (exit, by) => done({ code: exit, ended: by }));
    }).finally(() => signal.removeEventListener('abort', pass));
    // Exit 1 is outputs that differed: the Results are written, and the sweep goes on as one process would.
    if (code !== 0 && code !== 1) throw partFailure(part, code, ended);
    return asPartOf(loadResults(json), part, axes);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Every setting of the sweep, each value of pipeline.connections in a process of its own, one after another: the
 * Results in the settings' order, as one process would have given them.
 */
export async function sweepInProcesses(
  config: string,
  flags: SweepFlags,
  axes: SweepAxes,
  parts: readonly ConnectionsPart[],
  combos: readonly (readonly Setting[])[],
  signal: AbortSignal,
): Promise<RunResult[]> {
  const byIndex = new Map<number, RunResult>();
  for (const part of parts) {
    if (signal.aborted) throw new Interrupted('The sweep was interrupted between its processes.');
    const results = await runPart(resolve(config), flags, axes, part, signal);
    if (results.length !== part.settings.length) {
      throw new Error(
        `the process of ${partText(part)} wrote ${results.length} Results for its ${part.settings.length} settings`,
      );
    }
    part.settings.forEach((index, i) => byIndex.set(index, results[i] as RunResult));
  }
  return combos.map((_, index) => {
    const result = byIndex.get(index);
    if (!result) throw new Error(`setting ${index + 1} of the sweep has no Result`);
    return result;
  });
}
