import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { blockHolds, blocksPerSm, slowdownBeside } from '../../src/analysis/contention.js';
import type { DeviceShape, LaunchShape } from '../../src/traces/events.js';

// CUDA's occupancy arithmetic behind the compute slowed beside NCCL (src/analysis/contention.ts), on launch shapes
// built here.

const DEADLINE = { timeout: 5_000 };

/** An H200's SM: 64 Ki registers, 228 KiB of shared memory, 2048 threads; 132 of them. */
const H200: DeviceShape = {
  index: 0,
  multiprocessors: 132,
  registersPerSm: 65536,
  sharedBytesPerSm: 228 * 1024,
  threadsPerSm: 2048,
};
const shape = (blocks: number, threadsPerBlock: number, registersPerThread: number, sharedBytesPerBlock = 0) => ({
  blocks,
  threadsPerBlock,
  registersPerThread,
  sharedBytesPerBlock,
});
/** PyTorch's fp32 SIMT GEMM on two H200s: 128 blocks of 256 threads at 202 registers. */
const GEMM: LaunchShape = shape(128, 256, 202);
/** NCCL's all-reduce on 24 channels: a block on each of 24 SMs. */
const NCCL: LaunchShape = shape(24, 640, 96, 8192);

describe('what one block holds on its SM', () => {
  it(
    'registers by whole warps, each rounded up to 256; shared memory plus the 1 KiB the runtime keeps',
    DEADLINE,
    () => {
      // 100 threads are 4 warps; 33 registers × 32 lanes = 1056, rounded up to 1280 a warp.
      assert.deepEqual(blockHolds(shape(1, 100, 33, 1000)), { registers: 5120, shared: 2024, threads: 100, blocks: 1 });
      assert.deepEqual(blockHolds(GEMM), { registers: 8 * 6656, shared: 1024, threads: 256, blocks: 1 });
    },
  );
});

describe('blocks an SM holds', () => {
  it('the fewest that registers, shared memory, threads and the 32-block limit allow', DEADLINE, () => {
    // Registers: 65536 / (8 warps × 1024) = 8; threads 2048 / 256 = 8; shared 233472 / 1024 = 228.
    assert.equal(blocksPerSm(shape(1, 256, 32), H200), 8);
    // Shared memory: 233472 / (50000 + 1024) = 4.
    assert.equal(blocksPerSm(shape(1, 64, 16, 50_000), H200), 4);
    // Threads: 2048 / 1024 = 2 (registers would allow 4).
    assert.equal(blocksPerSm(shape(1, 1024, 16), H200), 2);
    // Tiny blocks: 32 an SM.
    assert.equal(blocksPerSm(shape(1, 32, 8), H200), 32);
    assert.equal(blocksPerSm(GEMM, H200), 1);
  });

  it('beside what another kernel holds there, only what it leaves', DEADLINE, () => {
    const held = { registers: 16384, shared: 0, threads: 512, blocks: 1 };
    // (65536 − 16384) / 8192 = 6 by registers; (2048 − 512) / 256 = 6 by threads.
    assert.equal(blocksPerSm(shape(1, 256, 32), H200, held), 6);
    assert.equal(blocksPerSm(shape(1, 32, 8), H200, { ...held, blocks: 30 }), 2);
    // More held than the SM has: none, not a negative count.
    assert.equal(blocksPerSm(shape(1, 256, 32), H200, { ...held, registers: 70000 }), 0);
  });

  it(
    'a block that asks for no registers is limited by the rest, even beside a kernel holding them all',
    DEADLINE,
    () => {
      assert.equal(blocksPerSm(shape(1, 256, 0), H200), 8);
      assert.equal(blocksPerSm(shape(1, 256, 0), H200, { registers: 65536, shared: 0, threads: 1024, blocks: 1 }), 4);
    },
  );
});

describe('how much longer a kernel runs beside another', () => {
  it("the H200 pair: the GEMM's 128 blocks take two waves on the 108 SMs NCCL leaves it", DEADLINE, () => {
    assert.equal(blocksPerSm(GEMM, H200, blockHolds(NCCL)), 0);
    assert.equal(slowdownBeside(GEMM, NCCL, H200), 2);
  });

  it('a kernel that fits beside, or one wave more that it needs anyway, runs as long', DEADLINE, () => {
    assert.equal(slowdownBeside(shape(128, 256, 32), NCCL, H200), 1);
    // 264 blocks of one an SM: two waves alone; beside NCCL 108 + 24 × 0 … capacity 108, three waves: 3 / 2.
    assert.equal(slowdownBeside(shape(264, 256, 202), NCCL, H200), 1.5);
  });

  it('counts the SMs the other kernel takes at most once each', DEADLINE, () => {
    // 500 NCCL blocks take all 132 SMs: nothing left, which says nothing of the kernel's time.
    assert.equal(slowdownBeside(GEMM, { ...NCCL, blocks: 500 }, H200), 1);
    // 100 blocks take 100 SMs: 32 left hold the GEMM's 128 blocks in 4 waves.
    assert.equal(slowdownBeside(GEMM, { ...NCCL, blocks: 100 }, H200), 4);
  });

  it('beside a kernel that leaves room for some of its blocks, counts those too', DEADLINE, () => {
    // 256 threads at 32 registers: 8 an SM alone, 7 beside a block of 256 threads at 32 registers.
    const small = shape(132 * 8, 256, 32);
    assert.equal(blocksPerSm(small, H200, blockHolds(shape(1, 256, 32))), 7);
    // Capacity 100 × 8 + 32 × 7 = 1024 < 1056: two waves where one did.
    assert.equal(slowdownBeside(small, shape(32, 256, 32), H200), 2);
    // 1000 blocks fit in those 1024 places: one wave, as alone.
    assert.equal(slowdownBeside(shape(1000, 256, 32), shape(32, 256, 32), H200), 1);
  });

  it('a kernel too large for an SM cannot be told: 1', DEADLINE, () => {
    assert.equal(slowdownBeside(shape(10, 256, 32, 300_000), NCCL, H200), 1);
  });
});
