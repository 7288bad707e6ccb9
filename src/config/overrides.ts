import type { Overrides } from './types.js';

// The flags that override a config's fields (`--chunks`, `--workers`, …), written into the parsed YAML at their
// paths before it is checked, each remembered so that a message about its value blames the flag, not the file.

const OVERRIDE_FLAGS: ReadonlyArray<[keyof Overrides, readonly string[], string]> = [
  ['streams', ['pipeline', 'streams'], '--streams'],
  ['chunks', ['pipeline', 'chunks'], '--chunks'],
  ['workers', ['host', 'workers'], '--workers'],
  ['order', ['pipeline', 'order'], '--order'],
  ['mode', ['pipeline', 'mode'], '--mode'],
  ['hostMemory', ['hostMemory'], '--host-memory'],
  ['device', ['device'], '--device'],
  ['devices', ['devices'], '--devices'],
  ['reps', ['repetitions', 'reps'], '--reps'],
  ['warmup', ['repetitions', 'warmup'], '--warmup'],
  ['warmupTime', ['repetitions', 'warmupTime'], '--warmup-time'],
  ['minReps', ['repetitions', 'minReps'], '--min-reps'],
  ['maxNoise', ['repetitions', 'maxNoise'], '--max-noise'],
  ['maxTime', ['repetitions', 'maxTime'], '--max-time'],
];

interface AppliedFlag {
  readonly path: readonly string[];
  /** "--chunks 999999999": how messages name the value's origin. */
  readonly text: string;
}

export function applyOverrides(raw: unknown, overrides: Overrides): { raw: unknown; flags: AppliedFlag[] } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { raw, flags: [] };
  const config: Record<string, unknown> = { ...(raw as Record<string, unknown>) };
  const flags: AppliedFlag[] = [];
  for (const [key, path, flag] of OVERRIDE_FLAGS) {
    const value = overrides[key];
    if (value === undefined) continue;
    let parent = config;
    for (const segment of path.slice(0, -1)) {
      const child = parent[segment];
      parent[segment] =
        typeof child === 'object' && child !== null && !Array.isArray(child)
          ? { ...(child as Record<string, unknown>) }
          : {};
      parent = parent[segment] as Record<string, unknown>;
    }
    parent[path[path.length - 1] as string] = value;
    flags.push({ path, text: `${flag} ${String(value)}` });
  }
  return { raw: config, flags };
}
