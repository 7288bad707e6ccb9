import { UsageError } from '../errors.js';
import { ELEMENT_BYTES } from '../vocabulary.js';
import { initProblem } from './init.js';
import type { ParsedConfig } from './schema.js';
import type { ConfigBuffer, Locator } from './types.js';

// A `buffers:` entry resolved into a buffer (its elements, bytes, item size, init and host memory), and the buffers
// as the stage kinds read them.

/**
 * One buffer: its element count from count or size, or with pipeline.items from items × itemSize (a given count or
 * size must agree). A resident buffer is never chunked, so it has no itemSize and needs its own count or size.
 */
export function resolveBuffer(
  name: string,
  b: ParsedConfig['buffers'][string],
  items: number | null,
  hostMemory: ConfigBuffer['hostMemory'],
  locate: Locator,
): ConfigBuffer {
  const where = locate(['buffers', name]);
  const elementBytes = ELEMENT_BYTES[b.type];
  if (b.count !== undefined && b.size !== undefined) {
    throw new UsageError(`${where}: buffer "${name}" needs exactly one of count (elements) or size (bytes), not both.`);
  }
  if (b.size !== undefined && b.size % elementBytes !== 0) {
    throw new UsageError(
      `${locate(['buffers', name, 'size'])}: buffer "${name}": size ${b.size} bytes is not a multiple of the ${b.type} element size (${elementBytes} bytes).`,
    );
  }
  const given = b.count ?? (b.size === undefined ? undefined : b.size / elementBytes);
  const resident = b.role === 'resident';
  if (b.itemSize !== undefined && resident) {
    throw new UsageError(
      `${locate(['buffers', name, 'itemSize'])}: buffer "${name}" is resident: it is never chunked, so it has no itemSize.`,
      {
        hint: 'Give a resident buffer its count or size, and remove itemSize.',
      },
    );
  }
  if (b.itemSize !== undefined && items === null) {
    throw new UsageError(
      `${locate(['buffers', name, 'itemSize'])}: buffer "${name}" has an itemSize, but the pipeline has no items to multiply it by.`,
      {
        hint: 'Give pipeline.items (the items per rep), or remove itemSize.',
      },
    );
  }
  const itemSize = resident || items === null ? 1 : (b.itemSize ?? 1);
  const shaped = resident || items === null ? undefined : items * itemSize;
  if (given === undefined && shaped === undefined) {
    throw new UsageError(`${where}: buffer "${name}" needs exactly one of count (elements) or size (bytes).`);
  }
  if (given !== undefined && shaped !== undefined && given !== shaped) {
    const field = b.count !== undefined ? 'count' : 'size';
    throw new UsageError(
      `${locate(['buffers', name, field])}: buffer "${name}": ${field} ${field === 'count' ? given : given * elementBytes} disagrees with pipeline.items × itemSize = ${items} × ${itemSize} = ${shaped} elements.`,
      {
        hint: `Remove ${field} (it follows from items and itemSize), or make it ${field === 'count' ? shaped : shaped * elementBytes}.`,
      },
    );
  }
  const elements = (shaped ?? given) as number;
  if (elements <= 0)
    throw new UsageError(`${where}: buffer "${name}" has no elements; give it a count or size above zero.`);
  const badInit = b.init ? initProblem(b.type, b.init, elements) : null;
  if (badInit)
    throw new UsageError(
      `${locate(['buffers', name, 'init', badInit.field])}: buffer "${name}" holds ${b.type}: init ${badInit.field} ${badInit.problem}.`,
    );
  return {
    name,
    type: b.type,
    elementBytes,
    elements,
    bytes: elements * elementBytes,
    itemSize,
    role: b.role,
    init: b.init ?? { kind: 'random', seed: 1 },
    // Only where true: a config hash counts fields added since the first baselines only when they are not defaults.
    ...(b.role === 'scratch' && b.init !== undefined ? { seeded: true } : {}),
    hostMemory: b.hostMemory ?? hostMemory,
  };
}

/** The buffers as a kind reads them: for a library stage's entry, and a kind's own section. */
export const stepBuffers = (buffers: readonly ConfigBuffer[]) =>
  buffers.map((b) => ({
    name: b.name,
    type: b.type,
    role: b.role,
    elementBytes: b.elementBytes,
    itemSize: b.itemSize,
    elements: b.elements,
  }));
