import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfigText } from '../../src/config/load.js';
import { CUDA_ERROR, CudaError } from '../../src/cuda/error.js';
import { contextLost, DeviceFailure } from '../../src/errors.js';
import { Cleanup } from '../../src/exec/cleanup.js';
import { opTimeout, repTimeout, unfinishedStreams } from '../../src/exec/timeouts.js';
import { pollUntil, raceDeadline, TIMED_OUT } from '../../src/exec/wait.js';
import { resolveKernels } from '../../src/kernels/resolve.js';
import { buildPlan } from '../../src/plan/build.js';
import { traceSchedule } from '../../src/plan/trace.js';
import { type Schedule, scheduleOps } from '../../src/plan/types.js';

const CONFIG = `buffers:
  x: { type: float32, count: 64, role: in }
  y: { type: float32, count: 64, role: out }
kernels:
  - { name: spin, source: scale.cu, entry: scale, args: [{ buffer: x }, { buffer: y }, { chunk: elements }, { float32: 2 }] }
pipeline: { chunks: 4, streams: 2 }
`;
const { config, locate } = parseConfigText(CONFIG, '/cfg/spin.yaml');
const plan = buildPlan(config, resolveKernels(config, locate));
const overlapped = plan.schedules.find((s) => s.role.kind === 'overlapped') as Schedule;
const serial = plan.schedules.find((s) => s.role.kind === 'serial') as Schedule;

describe('after a lost context nothing touches CUDA', () => {
  it("CUDA's sticky errors lose the context, other 7xx codes do not", () => {
    const error = (code: number) => new CudaError('cudaStreamQuery', code, 'name', 'message');
    assert.equal(error(CUDA_ERROR.illegalAddress).contextLost, true);
    assert.equal(error(719).contextLost, true, 'cudaErrorLaunchFailure');
    assert.equal(error(701).contextLost, false, 'cudaErrorLaunchOutOfResources leaves the context usable');
    assert.equal(error(2).contextLost, false, 'out of memory');
    assert.equal(
      contextLost(new DeviceFailure('named op', { cause: error(700) })),
      true,
      "a failure naming the op keeps its cause's verdict",
    );
    assert.equal(contextLost(new Error('plain')), false);
  });

  it('Cleanup skips every release after an error that lost the context, and runs them all after any other', async () => {
    const released: string[] = [];
    const acquire = (cleanup: Cleanup) => {
      cleanup.push(() => released.push('device memory'));
      cleanup.push(() => released.push('pinned memory'));
    };
    await assert.rejects(
      Cleanup.use((cleanup) => {
        acquire(cleanup);
        throw new CudaError(
          'cudaEventQuery',
          700,
          'cudaErrorIllegalAddress',
          'an illegal memory access was encountered',
        );
      }),
      /cudaErrorIllegalAddress/,
    );
    assert.deepEqual(released, []);
    await assert.rejects(
      Cleanup.use((cleanup) => {
        acquire(cleanup);
        throw new DeviceFailure('out of memory');
      }),
      /out of memory/,
    );
    assert.deepEqual(released, ['pinned memory', 'device memory']);
  });
});

describe('a rep past its deadline', () => {
  it('a checked rep names its op, stream and chunk', () => {
    const kernel = overlapped.body.find((op) => op.kind === 'kernel' && op.chunk === 1);
    assert.ok(kernel);
    const error = opTimeout(overlapped, kernel, plan.kernels, 5000);
    assert.equal(error.exitCode, 4);
    assert.equal(error.contextLost, true);
    assert.equal(
      error.message,
      'A rep of the overlapped mode (4 chunks over 2 streams, depth-first) ran past its deadline of 5.0 s: ' +
        'kernel spin (scale), chunk 1 of 4 (elements 16 to 31) on stream s1 had not finished.',
    );
    assert.match(error.hint ?? '', /--timeout/);
  });

  it('a timed rep names the streams whose join did not complete and the work on them, not the first stream waiting for them', () => {
    const ops = scheduleOps(overlapped);
    const error = repTimeout(overlapped, ops, plan.kernels, 1000, (event) => event !== 'join:s1' && event !== 'end');
    assert.equal(
      error.message,
      'A rep of the overlapped mode (4 chunks over 2 streams, depth-first) ran past its deadline of 1.0 s; unfinished: ' +
        'stream s1 (H2D of "x", chunks 1 and 3 of 4; kernel spin (scale), chunks 1 and 3 of 4; D2H of "y", chunks 1 and 3 of 4).',
    );
    assert.deepEqual(
      unfinishedStreams(ops, 's0', (event) => event !== 'end').map((s) => s.stream),
      ['s0'],
      'the first stream alone when no other is stuck',
    );
  });

  it('a traced rep names the very op that did not end', () => {
    const traced = traceSchedule(overlapped).schedule;
    const ops = scheduleOps(traced);
    // Every event up to chunk 3's kernel on s1 completed; its end event and everything after it did not.
    const stuckAt = ops.findIndex((op) => op.kind === 'kernel' && op.chunk === 3);
    const done = new Set(ops.slice(0, stuckAt).flatMap((op) => (op.kind === 'record' ? [op.event] : [])));
    const [stuck] = unfinishedStreams(ops, 's0', (event) => done.has(event));
    assert.deepEqual(
      stuck?.ops.map((op) => `${op.kind} ${op.chunk}`),
      ['kernel 3'],
    );
  });

  it('a whole-buffer mode names its ops as whole buffers', () => {
    const error = repTimeout(serial, scheduleOps(serial), plan.kernels, 60_000, (event) => event === 'start');
    assert.equal(
      error.message,
      'A rep of the serial mode ran past its deadline of 60 s; unfinished: ' +
        'stream s0 (H2D of "x", whole buffers; kernel spin (scale), whole buffers; D2H of "y", whole buffers).',
    );
  });

  it('waits stop at the deadline, polling or racing a wait that never ends', async () => {
    const started = performance.now();
    assert.equal(await pollUntil(() => CUDA_ERROR.notReady, started + 30), TIMED_OUT);
    assert.equal(await raceDeadline(new Promise<number>(() => {}), performance.now() + 30), TIMED_OUT);
    assert.ok(performance.now() - started < 1000);
    assert.equal(await pollUntil(() => 0, started), 0, 'a finished wait reports its code even past the deadline');
    assert.equal(await raceDeadline(Promise.resolve(700), performance.now() + 1000), 700);
  });
});
