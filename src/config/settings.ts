import { UsageError } from '../errors.js';
import { validateConfig } from './load.js';
import type { LoadedConfig } from './types.js';
import { configJsonSchema } from './schema.js';

/** A value a sweep sets at a path of the config: "kernels[0].args[3].int32" = 530. */
export interface Setting {
  readonly path: string;
  readonly value: string | number;
}

/** "kernels[0].args[3].int32" → ["kernels", 0, "args", 3, "int32"]. */
export function parseSettingPath(text: string, origin?: string): Array<string | number> {
  const prefix = origin === undefined ? '' : `${origin}: `;
  const segments: Array<string | number> = [];
  for (const part of text.split('.')) {
    const match = /^([A-Za-z_][\w-]*)?((?:\[\d+\])*)$/.exec(part);
    if (!match || (!match[1] && !match[2])) {
      throw new UsageError(
        `${prefix}"${text}" is not a config path: "${part}" should be a field name, optionally followed by [index].`,
        {
          hint: 'Write paths like pipeline.chunks, hostMemory, buffers.input.size or kernels[0].args[3].int32.',
        },
      );
    }
    if (match[1]) segments.push(match[1]);
    for (const index of (match[2] ?? '').matchAll(/\[(\d+)\]/g)) segments.push(Number(index[1]));
  }
  checkSchemaPath(text, segments, prefix);
  return segments;
}

interface JsonSchemaNode {
  readonly type?: string | readonly string[];
  readonly properties?: Readonly<Record<string, JsonSchemaNode>>;
  readonly additionalProperties?: JsonSchemaNode | boolean;
  readonly propertyNames?: { readonly pattern?: string };
  readonly items?: JsonSchemaNode;
  readonly anyOf?: readonly JsonSchemaNode[];
  readonly oneOf?: readonly JsonSchemaNode[];
  readonly allOf?: readonly JsonSchemaNode[];
}

let schemaRoot: JsonSchemaNode | undefined;

/** A node's alternatives (anyOf, oneOf, allOf), flattened: a path may go on through any of them. */
function alternatives(node: JsonSchemaNode): JsonSchemaNode[] {
  const nested = [...(node.anyOf ?? []), ...(node.oneOf ?? []), ...(node.allOf ?? [])];
  return [node, ...nested.flatMap(alternatives)];
}

/**
 * A setting may only name a field the config's schema has: a name of the schema's own fields, or of a map whose
 * keys the user chooses (buffers, sweep.set) that is not one of a JavaScript object's built-in members, so that
 * `__proto__`, `constructor` or `toString` never reach Object.prototype or a method.
 */
function checkSchemaPath(text: string, segments: ReadonlyArray<string | number>, prefix: string): void {
  schemaRoot ??= configJsonSchema() as JsonSchemaNode;
  let nodes: JsonSchemaNode[] = [schemaRoot];
  segments.forEach((segment, i) => {
    const options = nodes.flatMap(alternatives);
    const next = options.flatMap((node): JsonSchemaNode[] => {
      if (typeof segment === 'number') return node.items ? [node.items] : [];
      if (node.properties && Object.hasOwn(node.properties, segment))
        return [node.properties[segment] as JsonSchemaNode];
      const open = node.additionalProperties;
      if (typeof open !== 'object' || segment in Object.prototype) return [];
      const pattern = node.propertyNames?.pattern;
      return pattern === undefined || new RegExp(pattern).test(segment) ? [open] : [];
    });
    if (next.length) {
      nodes = next;
      return;
    }
    const where = i === 0 ? 'the config' : formatSegments(segments.slice(0, i));
    const fields = [...new Set(options.flatMap((node) => Object.keys(node.properties ?? {})))];
    const isList = options.some((node) => node.items);
    throw new UsageError(
      `${prefix}"${text}" is not a config path: ${typeof segment === 'number' ? `${where} is not a list` : `${where} has no field "${segment}"`}.`,
      {
        hint: fields.length
          ? `Fields of ${where}: ${fields.join(', ')}.`
          : isList
            ? `${where} is a list: write ${where}[0].`
            : "Run `cuda-pipe schema` for the config's fields.",
      },
    );
  });
}

const formatSegments = (segments: ReadonlyArray<string | number>): string =>
  segments.map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`)).join('');

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
  const applied = settings.map((s) => {
    const text = `sweep setting ${s.path}=${String(s.value)}`;
    return { path: parseSettingPath(s.path, text), text };
  });
  applied.forEach(({ path }, i) => setAt(raw, path, (settings[i] as Setting).value, (settings[i] as Setting).path));
  // A message about the set field, a field inside it, or a section it created names the setting.
  const related = (a: readonly (string | number)[], b: readonly (string | number)[]) =>
    a.slice(0, b.length).every((segment, i) => b[i] === segment);
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
    let next = Object.hasOwn(node, segment) ? node[segment] : undefined;
    // A section the config leaves to its defaults (pipeline:, repetitions:) is made; the schema then checks the field.
    if (next === undefined && !Array.isArray(node) && typeof path[i + 1] === 'string') next = node[segment] = {};
    if (typeof next !== 'object' || next === null) {
      throw new UsageError(
        `sweep setting ${text}: the config has no ${path.slice(0, i + 1).join('.')} to set a value inside.`,
        {
          hint: 'Set a field that exists in the config, such as pipeline.chunks or kernels[0].args[3].int32.',
        },
      );
    }
    node = next as Record<string | number, unknown>;
  });
}
