import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CudaRuntime } from '../../cuda/runtime.js';
import type { EventHandle } from '../../cuda/types.js';
import type { DeviceSet } from '../../exec/device-set.js';
import type { HostCalls } from '../../exec/host-calls.js';
import type { Issuer, PreparedRep } from '../../exec/prepared-rep.js';
import { CudaRepRunner } from '../../exec/rep-runner.js';
import type { Waiter } from '../../exec/wait.js';
import type { Plan, Schedule } from '../../plan/types.js';
import { HostRep } from './rep.js';
import type { CpuStageTiming } from './section.js';
import type { WorkerPool } from './workers/pool.js';
import type { TaskResult } from './workers/timing.js';
import type { WorkerTask } from './workers/types.js';

// The rep loop of a schedule with a loader, on the CPU: a fake runtime whose GPU finishes each op as it is issued,
// a fake pool whose fills finish a turn of the event loop after they are submitted, and a log of both.

const NOT_READY = 600;

function setUp(slots: number) {
  const log: string[] = [];
  const recorded = new Set<number>();
  // thunk 0 records the start; chunk c's H2D (which records the event freeing its slot) and kernel; thunk 7 the end.
  const names = ['start', 'h2d 0', 'kernel 0', 'h2d 1', 'kernel 1', 'h2d 2', 'kernel 2', 'end'];
  const thunks = names.map((name) => () => {
    log.push(`issue ${name}`);
    if (name.startsWith('h2d')) recorded.add(100 + Number(name.slice(4)));
    return 0;
  });
  const schedule = {
    id: 's',
    issue: 'stream',
    gated: false,
    device: 0,
    description: 'a loader',
    ranges: [],
  } as unknown as Schedule;
  const fills = [0, 1, 2].map((chunk) => ({ chunk, task: { fn: 'before', chunk, regions: [] } }));
  const rt = {
    streams: { eventQueryCode: (event: number) => (recorded.has(event) ? 0 : NOT_READY), elapsedMs: () => 4 },
    failure: (code: number) => new Error(`CUDA error ${code}`),
  } as unknown as CudaRuntime;
  const plan = {
    name: 'p',
    kernels: [],
    schedules: [schedule],
    host: {
      name: 'decode',
      thread: 'workers',
      workers: 2,
      before: { kind: 'decode', msPerMiB: 0 },
      slots,
      after: null,
    },
  } as unknown as Plan;
  let busy = [0, 0];
  const pool = {
    busyMs: () => busy,
    submit: (task: WorkerTask) => {
      log.push(`fill ${task.chunk} submitted`);
      return new Promise<TaskResult>((resolve) =>
        setImmediate(() => {
          log.push(`fill ${task.chunk} done`);
          busy = busy.map((ms, w) => (w === (task.chunk ?? 0) % 2 ? ms + 1 : ms));
          const now = performance.now();
          resolve({
            value: null,
            timing: { worker: (task.chunk ?? 0) % 2, queuedMs: now - 2, startedMs: now - 1, endedMs: now },
          });
        }),
      );
    },
  } as unknown as WorkerPool;
  const waiter: Waiter = { event: async () => 0, stream: async () => 0 };
  const hostCalls = { beginRep() {}, endRep() {}, endRepQuietly() {} } as unknown as HostCalls;
  const prepared = {
    schedule,
    thunks,
    ops: names.map(() => null),
    opStreams: [],
    bodyThunkIndex: (i: number) => i,
    hostTags: new Map(),
    rep: new HostRep(rt, pool, {
      schedule: 's',
      ops: names.map(() => null),
      handovers: [],
      start: 1 as unknown as EventHandle,
      end: 2 as unknown as EventHandle,
      startIndex: 0,
      loader: {
        fills,
        waitAt: new Map([
          [1, 0],
          [3, 1],
          [5, 2],
        ]),
        recordedAt: new Map([
          [1, 0],
          [3, 1],
          [5, 2],
        ]),
        releasedBy: [100, 101, 102] as unknown as EventHandle[],
        slots,
      },
    }),
    setup: null,
    events: new Map(),
    start: 1,
    end: 2,
    startIndex: 0,
  } as unknown as PreparedRep;
  const issuer: Issuer = { prepare: () => prepared };
  const runner = new CudaRepRunner(
    rt,
    plan,
    { spans: false } as unknown as DeviceSet,
    { stream: issuer, graph: issuer },
    waiter,
    null,
    hostCalls,
  );
  return { runner, log };
}

describe('a rep with a loader, issued on the CPU with a fake GPU and pool', () => {
  it("issues each chunk's ops only once its fill finished, and fills a slot again only after its H2D was issued and completed", async () => {
    const { runner, log } = setUp(1);
    const timing = await runner.runRep('s');
    assert.deepEqual(log, [
      'issue start',
      'fill 0 submitted',
      'fill 0 done',
      'issue h2d 0',
      'issue kernel 0',
      'fill 1 submitted',
      'fill 1 done',
      'issue h2d 1',
      'issue kernel 1',
      'fill 2 submitted',
      'fill 2 done',
      'issue h2d 2',
      'issue kernel 2',
      'issue end',
    ]);
    assert.deepEqual(
      [
        (timing.kindRep?.record as CpuStageTiming | undefined)?.taskMs,
        (timing.kindRep?.record as CpuStageTiming | undefined)?.busyMs,
      ],
      [
        [1, 1, 1],
        [2, 1],
      ],
    );
  });

  it('fills as many chunks ahead as it has slots, from the start event on', async () => {
    const { runner, log } = setUp(2);
    await runner.runRep('s');
    assert.deepEqual(log.slice(0, 5), [
      'issue start',
      'fill 0 submitted',
      'fill 1 submitted',
      'fill 0 done',
      'fill 1 done',
    ]);
    assert.ok(log.indexOf('fill 2 submitted') > log.indexOf('issue h2d 0'), log.join('\n'));
    assert.ok(log.indexOf('fill 2 done') < log.indexOf('issue h2d 2'), log.join('\n'));
  });
});
