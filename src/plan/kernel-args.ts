import { itemBytes } from '../config/items.js';
import type { ConfigBuffer } from '../config/types.js';
import type { KernelArg } from '../kernels/resolve.js';
import type { ScalarType } from '../vocabulary.js';
import type { KernelOp } from './types.js';

/** A kernel argument for one launch, before exec/ adds the buffer's device pointer to its byte offset. */
export type ChunkArg =
  | { readonly kind: 'buffer'; readonly buffer: string; readonly byteOffset: number }
  | { readonly kind: 'scalar'; readonly type: ScalarType; readonly value: number | bigint };

/**
 * The arguments of one kernel launch over a chunk of items. `{ buffer }` points at the chunk's first element of that
 * buffer, by its own itemSize (a resident buffer: its base); `{ chunk: items }` is the chunk's item count;
 * `{ chunk: elements }` and `{ chunk: offset }` count elements of the first chunked buffer the args name (items
 * where they name none), so a kernel over one buffer sees exactly what it saw before items existed.
 */
export function chunkArgs(
  args: readonly KernelArg[],
  buffers: readonly Pick<ConfigBuffer, 'name' | 'role' | 'itemSize' | 'elementBytes'>[],
  op: Pick<KernelOp, 'first' | 'count' | 'deviceFirst'>,
): ChunkArg[] {
  const byName = new Map(buffers.map((b) => [b.name, b]));
  const shapeOf = (name: string) => {
    const buffer = byName.get(name);
    if (!buffer) throw new Error(`kernel argument names unknown buffer ${name}`);
    return buffer;
  };
  const named = args.flatMap((a) => (a.kind === 'buffer' ? [shapeOf(a.buffer)] : []));
  const unit = named.find((b) => b.role !== 'resident')?.itemSize ?? 1;
  return args.map((arg): ChunkArg => {
    switch (arg.kind) {
      case 'buffer': {
        const buffer = shapeOf(arg.buffer);
        return { kind: 'buffer', buffer: arg.buffer, byteOffset: buffer.role === 'resident' ? 0 : op.deviceFirst * itemBytes(buffer) };
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
