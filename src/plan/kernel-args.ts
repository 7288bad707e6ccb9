import { itemBytes } from '../config/items.js';
import type { ConfigBuffer } from '../config/types.js';
import type { KernelArg } from '../kernels/resolve.js';
import type { ScalarType } from '../vocabulary.js';

/** A kernel argument for one launch, before exec/ adds the buffer's device pointer to its byte offset. */
export type ChunkArg =
  | { readonly kind: 'buffer'; readonly buffer: string; readonly byteOffset: number }
  | { readonly kind: 'scalar'; readonly type: ScalarType; readonly value: number | bigint };

type ArgBuffer = Pick<ConfigBuffer, 'name' | 'role' | 'itemSize'>;

/** Elements an item stands for in a kernel's launch: the itemSize of the first chunked buffer its args name, else 1. */
export function elementsPerItem(args: readonly KernelArg[], buffers: readonly ArgBuffer[]): number {
  const chunked = args.flatMap((a) =>
    a.kind === 'buffer' ? buffers.filter((b) => b.name === a.buffer && b.role !== 'resident') : [],
  );
  return chunked[0]?.itemSize ?? 1;
}

/**
 * The elements a launch over `items` covers, which sizes its grid (`cover`: a thread each; `auto`: at most that many
 * threads): the same count `{ chunk: elements }` passes, so a kernel over rows of 4,096 gets a grid for every value,
 * not one thread a row.
 */
export const launchElements = (args: readonly KernelArg[], buffers: readonly ArgBuffer[], items: number): number =>
  items * elementsPerItem(args, buffers);

/**
 * The arguments of one kernel launch over a chunk of items. `{ buffer }` points at the chunk's first element of that
 * buffer, by its own itemSize (a resident buffer: its base); `{ chunk: items }` is the chunk's item count;
 * `{ chunk: elements }` and `{ chunk: offset }` count elements of the first chunked buffer the args name (items
 * where they name none), so a kernel over one buffer sees exactly what it saw before items existed.
 */
export function chunkArgs(
  args: readonly KernelArg[],
  buffers: readonly Pick<ConfigBuffer, 'name' | 'role' | 'itemSize' | 'elementBytes'>[],
  op: { readonly first: number; readonly count: number; readonly deviceFirst: number },
): ChunkArg[] {
  const byName = new Map(buffers.map((b) => [b.name, b]));
  const shapeOf = (name: string) => {
    const buffer = byName.get(name);
    if (!buffer) throw new Error(`kernel argument names unknown buffer ${name}`);
    return buffer;
  };
  const unit = elementsPerItem(args, buffers);
  return args.map((arg): ChunkArg => {
    switch (arg.kind) {
      case 'buffer': {
        const buffer = shapeOf(arg.buffer);
        return {
          kind: 'buffer',
          buffer: arg.buffer,
          byteOffset: buffer.role === 'resident' ? 0 : op.deviceFirst * itemBytes(buffer),
        };
      }
      case 'chunk-elements':
        return { kind: 'scalar', type: arg.type, value: op.count * unit };
      case 'chunk-items':
        return { kind: 'scalar', type: arg.type, value: op.count };
      case 'chunk-offset':
        return { kind: 'scalar', type: arg.type, value: op.first * unit };
      case 'scalar':
        return arg;
    }
  });
}
