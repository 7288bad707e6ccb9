import { basename, dirname, extname, resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { chunkUnits, MAX_PLAN_CHUNKS } from '../chunking.js';
import { MAX_CONFIG_BYTES } from '../files/limits.js';
import { readDevices } from './devices.js';
import { readRegularFile } from '../files/read.js';
import { formatPath } from '../format.js';
import type { IssueOrder, ScalarType } from '../vocabulary.js';
import { parseConfigYaml } from './parse-yaml.js';
import { readConfigSections, SPANNING_STAGES, STEP_CONFIGS, type ComputeStep } from '../kinds/index.js';
import { controlText, nodeOffset, schemaError } from './field-errors.js';
import { ConfigSchema, type ParsedConfig } from './schema.js';
import type { ParsedArg, ParsedKernel } from './kernel-entry.js';
import { chunkedBuffers, isResident } from './items.js';
import { checkRing, readDefaultStreamOps, readLatency } from './toolbox.js';
import { applyOverrides } from './overrides.js';
import { resolveBuffer, stepBuffers } from './buffers.js';
import type { Config, ConfigArg, ConfigBuffer, ConfigKernel, LoadedConfig, Locator, Overrides } from './types.js';
export function loadConfigFile(path: string, overrides: Overrides = {}): LoadedConfig {
  const text = readRegularFile(path, {
    what: 'config',
    maxBytes: MAX_CONFIG_BYTES,
    hint: 'Pass a YAML file, or no file at all to run the built-in configs/balanced.yaml.',
  });
  return parseConfigText(text, resolve(path), overrides);
}

export function parseConfigText(text: string, path: string, overrides: Overrides = {}): LoadedConfig {
  const { doc, lineCounter, value } = parseConfigYaml(text, path);
  const { raw, flags } = applyOverrides(value, overrides);
  const locate: Locator = (fieldPath) => {
    // A value that came from a flag is blamed on the flag, not on the line of the file it replaced.
    const flag = flags.find((f) => f.path.every((segment, i) => fieldPath[i] === segment));
    if (flag) return flag.text;
    const offset = nodeOffset(doc, fieldPath);
    if (offset === null) return `${path}`;
    const { line, col } = lineCounter.linePos(offset);
    return `${path}:${line}:${col}`;
  };
  return validateConfig(raw, path, locate);
}

/** The parsed YAML (or a variant of it) through the schema and every check, into a Config. */
export function validateConfig(raw: unknown, path: string, locate: Locator): LoadedConfig {
  const control = controlText(raw, []);
  if (control) {
    throw new UsageError(
      `${locate(control.path)}: ${formatPath(control.path) || 'a key'} holds the control character U+${control.code.toString(16).padStart(4, '0').toUpperCase()}, which a terminal would act on when it is printed.`,
      { hint: 'Names and descriptions are plain text: remove escape sequences and other control characters.' },
    );
  }
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) throw schemaError(parsed.error, locate);
  const name = parsed.data.name ?? basename(basename(path), extname(path));
  const deviceGiven = typeof raw === 'object' && raw !== null && (raw as Record<string, unknown>).device !== undefined;
  return { config: resolveConfig(parsed.data, name, path, locate, deviceGiven), locate, raw };
}

function resolveConfig(
  parsed: ParsedConfig,
  name: string,
  path: string | null,
  locate: Locator,
  deviceGiven = false,
): Config {
  const items = parsed.pipeline.items ?? null;
  const buffers = Object.entries(parsed.buffers).map(
    ([bufferName, b]): ConfigBuffer => resolveBuffer(bufferName, b, items, parsed.hostMemory, locate),
  );
  const chunked = chunkedBuffers(buffers);
  const first = chunked[0];
  if (!first) {
    throw new UsageError(
      `${locate(['buffers'])}: every buffer is resident; a pipeline needs at least one chunked buffer (in, out, inout or scratch).`,
    );
  }
  if (items === null) {
    for (const b of chunked) {
      if (b.elements !== first.elements) {
        throw new UsageError(
          `${locate(['buffers', b.name])}: buffer "${b.name}" has ${b.elements} elements but "${first.name}" has ${first.elements}; ` +
            'every buffer of a pipeline is chunked by the same element ranges, so they need the same element count.',
          {
            hint: 'Give pipeline.items and each buffer an itemSize for buffers of different shapes, or make the buffer resident.',
          },
        );
      }
    }
  }
  const units = items ?? first.elements;
  const names = new Set(buffers.map((b) => b.name));
  const kernels: ConfigKernel[] = [];
  const steps = parsed.kernels.map((entry, kernelIndex): ComputeStep => {
    const library = STEP_CONFIGS.find((c) => typeof entry === 'object' && entry !== null && c.key in entry);
    if (library) return resolveStep(library, entry, buffers, ['kernels', kernelIndex], locate);
    const k = entry as ParsedKernel;
    const kernel: ConfigKernel = {
      label: k.name ?? k.entry,
      source: k.source,
      entry: k.entry,
      options: k.options,
      block: k.block,
      grid: k.grid,
      args: k.args.map((arg, argIndex) => toConfigArg(arg, names, locate(['kernels', kernelIndex, 'args', argIndex]))),
    };
    kernels.push(kernel);
    return { stage: 'kernel', label: kernel.label, spec: null };
  });
  const labels = new Set<string>();
  steps.forEach((k, i) => {
    if (labels.has(k.label))
      throw new UsageError(`${locate(['kernels', i])}: two kernels are called "${k.label}"; give one a distinct name.`);
    labels.add(k.label);
  });
  const unit = items === null ? 'elements' : 'items';
  const aligned = chunkUnits(units, parsed.pipeline.align);
  if (parsed.pipeline.chunks > aligned) {
    const what =
      parsed.pipeline.align > 1 ? `${aligned} aligned units of ${parsed.pipeline.align} ${unit}` : `${units} ${unit}`;
    throw new UsageError(
      `${locate(['pipeline', 'chunks'])}: ${parsed.pipeline.chunks} chunks is more than the ${items === null ? "buffers'" : "pipeline's"} ${what}.`,
      {
        hint: `Use at most ${aligned} chunks, or ${items === null ? 'larger buffers' : 'more items'}.`,
      },
    );
  }
  if (parsed.pipeline.chunks > MAX_PLAN_CHUNKS) {
    throw new UsageError(
      `${locate(['pipeline', 'chunks'])}: ${parsed.pipeline.chunks} chunks is more than the ${MAX_PLAN_CHUNKS} a plan may hold.`,
      {
        hint: `Use at most ${MAX_PLAN_CHUNKS} chunks: past a few thousand, issuing a chunk's ops costs more than overlapping them saves.`,
      },
    );
  }
  // A step of a kind that lays the devices out (a collective's data-parallel ranks, each holding whole buffers): no
  // share to cut.
  const dataParallel = steps.some((step) => SPANNING_STAGES.has(step.stage));
  if (parsed.devices !== undefined && !dataParallel && (items !== null || buffers.some(isResident))) {
    throw new UsageError(
      `${locate(['devices'])}: several devices run buffers of one shape only for now; pipeline.items and resident buffers run on one device.`,
      {
        hint: 'Remove devices (run on one device), or pipeline.items and resident buffers.',
      },
    );
  }
  const { pipeline: p } = parsed;
  const notes: string[] = [];
  if (p.streamFlags !== undefined && p.streamKind !== undefined) {
    throw new UsageError(
      `${locate(['pipeline', 'streamFlags'])}: give streamKind or the deprecated streamFlags, not both.`,
    );
  }
  if (p.streamFlags !== undefined) {
    notes.push(
      `${locate(['pipeline', 'streamFlags'])}: streamFlags is deprecated; streamFlags: ${p.streamFlags} is read as streamKind: ${p.streamFlags === 'default' ? 'blocking' : 'non-blocking'}.`,
    );
  }
  if (p.mode === 'graph' && p.streamKind === 'legacy-default') {
    throw new UsageError(
      `${locate(['pipeline', 'mode'])}: the legacy default stream cannot be captured into a graph; use another streamKind with mode: graph.`,
    );
  }
  const defaultStreamOps = readDefaultStreamOps(p, locate);
  checkRing(parsed, buffers, units, locate);
  const { devices, handoff } = readDevices(parsed, deviceGiven, buffers, kernels, locate, dataParallel);
  const library = steps.find((step) => step.stage !== 'kernel');
  if (handoff && library) {
    // The handoff splits the kernels between two devices; a library step has no half to go to yet.
    throw new UsageError(
      `${locate(['pipeline', 'handoff'])}: a pipeline across two devices runs kernels only, and "${library.label}" is a ${library.stage} step.`,
      {
        hint: 'Run the config on one device, or split it without pipeline.handoff (devices: [0, 1] splits the items).',
      },
    );
  }
  return {
    name,
    description: parsed.description ?? null,
    path,
    buffers,
    kernels,
    ...(steps.some((step) => step.stage !== 'kernel') ? { steps } : {}),
    devices,
    device: Array.isArray(devices) ? (devices[0] ?? parsed.device) : parsed.device,
    pipeline: {
      chunks: p.chunks,
      streams: p.streams,
      streamKind: p.streamKind ?? (p.streamFlags === 'default' ? 'blocking' : 'non-blocking'),
      topology: p.topology,
      mode: p.mode,
      slots: p.slots ?? null,
      defaultStreamOps,
      align: p.align,
      orders: uniqueOrders(p.order),
      priority: p.priority === undefined ? null : { level: p.priority, where: locate(['pipeline', 'priority']) },
      connections: p.connections ?? null,
      handoff,
    },
    latency: readLatency(parsed, kernels, units, locate),
    repetitions: parsed.repetitions,
    elements: units,
    items,
    tolerance: parsed.verify?.tolerance ?? null,
    ...readConfigSections(parsed, { path, buffers: stepBuffers(buffers), locate, note: (text) => notes.push(text) }),
    deviceMemory: parsed.deviceMemory ?? null,
    notes,
    sweep: parsed.sweep ?? null,
  };
}

/** A library stage's `kernels:` entry through its stage kind's resolution; what is wrong names the entry's field. */
function resolveStep(
  library: (typeof STEP_CONFIGS)[number],
  entry: unknown,
  buffers: readonly ConfigBuffer[],
  at: (string | number)[],
  locate: Locator,
): ComputeStep {
  const resolved = library.resolve(entry, stepBuffers(buffers));
  if ('error' in resolved)
    throw new UsageError(`${locate([...at, ...resolved.path])}: ${formatPath(at)}: ${resolved.error}.`);
  return { stage: library.stage, label: library.label(entry), spec: resolved.spec };
}

function uniqueOrders(order: IssueOrder | IssueOrder[]): IssueOrder[] {
  return [...new Set(Array.isArray(order) ? order : [order])];
}

function toConfigArg(arg: ParsedArg, buffers: Set<string>, where: string): ConfigArg {
  if ('buffer' in arg) {
    if (!buffers.has(arg.buffer)) {
      throw new UsageError(`${where}: unknown buffer "${arg.buffer}".`, {
        hint: `Buffers in this config: ${[...buffers].join(', ')}.`,
      });
    }
    return { kind: 'buffer', buffer: arg.buffer };
  }
  if ('chunk' in arg)
    return arg.chunk === 'elements'
      ? { kind: 'chunk-elements' }
      : arg.chunk === 'items'
        ? { kind: 'chunk-items' }
        : { kind: 'chunk-offset' };
  const [type, value] = Object.entries(arg)[0] as [ScalarType, number | string];
  return { kind: 'scalar', type, value: typeof value === 'string' ? BigInt(value) : value };
}

export const configDir = (config: Config): string | null => (config.path ? dirname(config.path) : null);
