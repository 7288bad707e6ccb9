import type { DeviceShape, LaunchShape } from '../traces/events.js';

// What a kernel loses when another kernel holds multiprocessors beside it: the blocks it can keep on each SM, from
// the registers, shared memory and threads left there (CUDA's occupancy rules), and so the waves its grid takes. An
// NCCL kernel holds one block on each of its channels' SMs for as long as it runs; a compute kernel whose blocks no
// longer fit beside it runs in more waves. On two H200s, PyTorch's fp32 SIMT GEMM (128 blocks, 202 registers × 256
// threads, one block an SM) ran 173 µs alone and 340 µs beside NCCL's 24-channel all-reduce: 132 SMs took its grid in
// one wave, the 108 left took it in two (docs/measurements/2026-11-28-h200x2-finding-pairs/).

/** Registers are allocated to a warp in units of this many. */
const REGISTER_UNIT = 256;
/** The runtime reserves this much shared memory on an SM for each resident block. */
const SHARED_RESERVED = 1024;
const MAX_BLOCKS_PER_SM = 32;

interface Held {
  readonly registers: number;
  readonly shared: number;
  readonly threads: number;
  readonly blocks: number;
}

const NOTHING: Held = { registers: 0, shared: 0, threads: 0, blocks: 0 };

/** What one block of a kernel holds on its SM. */
export function blockHolds(shape: LaunchShape): Held {
  const warps = Math.ceil(shape.threadsPerBlock / 32);
  const perWarp = Math.ceil((shape.registersPerThread * 32) / REGISTER_UNIT) * REGISTER_UNIT;
  return {
    registers: warps * perWarp,
    shared: shape.sharedBytesPerBlock + SHARED_RESERVED,
    threads: shape.threadsPerBlock,
    blocks: 1,
  };
}

/** The blocks of `shape` an SM holds beside what is already held there. */
export function blocksPerSm(shape: LaunchShape, device: DeviceShape, held: Held = NOTHING): number {
  const one = blockHolds(shape);
  const fit = (total: number, used: number, each: number) =>
    each > 0 ? Math.floor(Math.max(0, total - used) / each) : Number.POSITIVE_INFINITY;
  return Math.max(
    0,
    Math.min(
      fit(device.registersPerSm, held.registers, one.registers),
      fit(device.sharedBytesPerSm, held.shared, one.shared),
      fit(device.threadsPerSm, held.threads, one.threads),
      MAX_BLOCKS_PER_SM - held.blocks,
    ),
  );
}

/**
 * How many times longer `kernel` runs beside `other` than alone: its waves over the SMs `other` leaves it, over its
 * waves on the whole device. 1 where it fits as well, or where its occupancy cannot be told.
 */
export function slowdownBeside(kernel: LaunchShape, other: LaunchShape, device: DeviceShape): number {
  const alone = blocksPerSm(kernel, device);
  if (alone === 0) return 1;
  const taken = Math.min(device.multiprocessors, other.blocks);
  const beside = blocksPerSm(kernel, device, blockHolds(other));
  const capacity = (device.multiprocessors - taken) * alone + taken * beside;
  if (capacity <= 0) return 1;
  const waves = (per: number) => Math.ceil(kernel.blocks / per);
  return Math.max(1, waves(capacity) / waves(device.multiprocessors * alone));
}
