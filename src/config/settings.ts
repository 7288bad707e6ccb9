import { UsageError } from '../errors.js';
import { type LoadedConfig, validateConfig } from './load.js';

/** A value a sweep sets at a path of the config: "kernels[0].args[3].int32" = 530. */
export interface Setting {
  readonly path: string;
  readonly value: string | number;
}

/** "kernels[0].args[3].int32" → ["kernels", 0, "args", 3, "int32"]. */
export function parseSettingPath(text: string): Array<string | number> {
  const segments: Array<string | number> = [];
  for (const part of text.split('.')) {
    const match = /^([A-Za-z_][\w-]*)?((?:\[\d+\])*)$/.exec(part);
    if (!match || (!match[1] && !match[2])) {
      throw new UsageError(`"${text}" is not a config path: "${part}" should be a field name, optionally followed by [index].`, {
        hint: 'Write paths like pipeline.chunks, hostMemory, buffers.input.size or kernels[0].args[3].int32.',
      });
    }
    if (match[1]) segments.push(match[1]);
    for (const index of (match[2] ?? '').matchAll(/\[(\d+)\]/g)) segments.push(Number(index[1]));
  }
  return segments;
}

/** A number when the text is one, so `--set kernels[0].args[3].int32=530` sets the number 530. */
export function settingValue(text: string): string | number {
  return text.trim() !== '' && Number.isFinite(Number(text)) ? Number(text) : text;
}

/**
 * The config with each setting applied to the YAML as written, checked again from the start: a setting that makes
 * the config invalid is a usage error naming the setting.
 */
export function withSettings(loaded: LoadedConfig, settings: readonly Setting[]): LoadedConfig {
  if (!settings.length) return loaded;
  const raw = structuredClone(loaded.raw) as unknown;
  const applied = settings.map((s) => ({ path: parseSettingPath(s.path), text: `sweep setting ${s.path}=${String(s.value)}` }));
  applied.forEach(({ path }, i) => setAt(raw, path, (settings[i] as Setting).value, (settings[i] as Setting).path));
  // A message about the set field, a field inside it, or a section it created names the setting.
  const related = (a: readonly (string | number)[], b: readonly (string | number)[]) => a.slice(0, b.length).every((segment, i) => b[i] === segment);
  const locate = (fieldPath: readonly (string | number)[]) =>
    applied.find((a) => related(a.path, fieldPath) || related(fieldPath, a.path))?.text ?? loaded.locate(fieldPath);
  return validateConfig(raw, loaded.config.path ?? 'config', locate);
}

function setAt(root: unknown, path: ReadonlyArray<string | number>, value: string | number, text: string): void {
  let node = root as Record<string | number, unknown>;
  path.forEach((segment, i) => {
    const last = i === path.length - 1;
    if (last) {
      node[segment] = value;
      return;
    }
    let next = node[segment];
    // A section the config leaves to its defaults (pipeline:, repetitions:) is made; the schema then checks the field.
    if (next === undefined && !Array.isArray(node) && typeof path[i + 1] === 'string') next = node[segment] = {};
    if (typeof next !== 'object' || next === null) {
      throw new UsageError(`sweep setting ${text}: the config has no ${path.slice(0, i + 1).join('.')} to set a value inside.`, {
        hint: 'Set a field that exists in the config, such as pipeline.chunks or kernels[0].args[3].int32.',
      });
    }
    node = next as Record<string | number, unknown>;
  });
}
