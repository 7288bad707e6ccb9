import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CudaRuntime } from '../../cuda/runtime.js';
import type { HostPtr } from '../../cuda/types.js';
import type { Cleanup } from '../../exec/cleanup.js';
import type { DeviceSet } from '../../exec/device-set.js';
import type { HostCalls } from '../../exec/host-calls.js';
import { DirectIssuer } from '../../exec/issue.js';
import type { PreparedRep } from '../../exec/prepared-rep.js';
import type { Op, Plan, Schedule } from '../../plan/types.js';
import { traceSchedule } from '../../plan/trace.js';
import { HostBinding } from './binding.js';
import type { HostRep } from './rep.js';
import { HostRuntime } from './runtime.js';
import type { WorkerPool } from './workers/pool.js';

// The loader's ring as the direct issuer binds it, on a fake runtime that records what it was asked to allocate and
// copy: three chunks of 40 bytes of input x through two slots.

/** The loader the host stage's part in a prepared schedule planned. */
const loaderOf = (prepared: PreparedRep) => (prepared.rep as HostRep | null)?.spec.loader;

const HOST_X = 0x1000_0000n;
const DEVICE_X = 0x9000_0000n;

function setUp() {
  const allocations: Array<{ bytes: number; kind: string; base: bigint }> = [];
  const copies: Array<{ dst: bigint; src: bigint; bytes: number; direction: string }> = [];
  let handles = 1n;
  const rt = {
    streams: {
      create: () => handles++,
      destroy: () => {},
      createEvent: () => handles++,
      destroyEvent: () => {},
      recordThunk: () => () => 0,
      waitThunk: () => () => 0,
    },
    memory: {
      hostAlloc: (bytes: number, kind: string) => {
        const base = 0x5000_0000n + BigInt(allocations.length) * 0x100_0000n;
        allocations.push({ bytes, kind, base });
        return base;
      },
      freeHost: () => {},
      copyThunk: (dst: bigint, src: bigint, bytes: number, direction: string) => {
        copies.push({ dst, src, bytes, direction });
        return () => 0;
      },
    },
  } as unknown as CudaRuntime;
  const buffer = { name: 'x', role: 'in', itemSize: 1, elementBytes: 4, bytes: 120 };
  const devices = {
    spans: false,
    buffers: () => ({ binding: () => ({ host: HOST_X, device: DEVICE_X, buffer }), outputs: () => [] }),
  } as unknown as DeviceSet;
  const plan = {
    kernels: [],
    buffers: [buffer],
    host: {
      name: 'decode',
      thread: 'workers',
      workers: 1,
      slots: 2,
      before: { kind: 'decode', msPerMiB: 0 },
      after: null,
    },
  } as unknown as Plan;
  const cleanup = { push: () => {} } as unknown as Cleanup;
  const hostBuffers = { outputs: () => [], host: () => HOST_X as HostPtr, windows: () => [] };
  const host = new HostRuntime(new HostBinding(rt, plan, hostBuffers, cleanup, {} as WorkerPool));
  const issuer = new DirectIssuer(
    rt,
    plan,
    devices,
    new Map(),
    null,
    null,
    {} as HostCalls,
    cleanup,
    new Map([['host', host]]),
  );
  const body: Op[] = [0, 1, 2].flatMap((chunk): Op[] => [
    {
      kind: 'copy',
      stream: 's',
      direction: 'h2d',
      buffer: 'x',
      hostOffset: 40 * chunk,
      deviceOffset: 40 * chunk,
      bytes: 40,
      chunk,
    },
    { kind: 'host', stream: 's', name: 'decode', chunk },
  ]);
  const schedule = {
    id: 'loader',
    device: 0,
    description: 'a loader',
    streams: [{ id: 's', kind: 'non-blocking', device: 0 }],
    events: [
      { id: 'start', timing: true },
      { id: 'end', timing: true },
    ],
    prologue: [{ kind: 'record', stream: 's', event: 'start' }],
    body,
    epilogue: [{ kind: 'record', stream: 's', event: 'end' }],
    start: 'start',
    end: 'end',
    ranges: [
      { first: 0, count: 10 },
      { first: 10, count: 10 },
      { first: 20, count: 10 },
    ],
    issue: 'stream',
    gated: false,
  } as unknown as Schedule;
  return { issuer, schedule, allocations, copies };
}

describe("the loader's ring as the issuer binds it", () => {
  it('allocates slots × the chunk, pinned, and each fill writes, and its H2D reads, the slot of its chunk, never the input buffer', () => {
    const { issuer, schedule, allocations, copies } = setUp();
    const prepared = issuer.prepare(schedule);
    assert.deepEqual(
      allocations.map((a) => [a.bytes, a.kind]),
      [[80, 'pinned']],
    );
    const ring = allocations[0]?.base ?? 0n;
    const slotOf = [ring, ring + 40n, ring];
    assert.deepEqual(
      loaderOf(prepared)?.fills.map((f) => f.task.regions.map((r) => [r.buffer, r.offset, r.bytes, r.address])),
      [0, 1, 2].map((chunk) => [['x', 40 * chunk, 40, slotOf[chunk]]]),
    );
    assert.deepEqual(
      copies.map((c) => [c.direction, c.src, c.dst]),
      [0, 1, 2].map((chunk) => ['h2d', slotOf[chunk], DEVICE_X + BigInt(40 * chunk)]),
    );
    assert.equal(loaderOf(prepared)?.slots, 2);
    // Each chunk's fill is waited for at its first op; after its H2D the event freeing its slot is recorded.
    assert.deepEqual(
      [...(loaderOf(prepared)?.waitAt ?? [])],
      [
        [1, 0],
        [3, 1],
        [5, 2],
      ],
    );
    assert.deepEqual(
      [...(loaderOf(prepared)?.recordedAt ?? [])],
      [
        [1, 0],
        [3, 1],
        [5, 2],
      ],
    );
  });

  it('pins one ring per input buffer for every schedule it prepares, and a new block only for a larger ring', () => {
    const { issuer, schedule, allocations } = setUp();
    issuer.prepare(schedule);
    issuer.prepare(traceSchedule(schedule).schedule);
    assert.deepEqual(
      allocations.map((a) => a.bytes),
      [80],
    );
    // One chunk of 120 bytes (the whole input, as serial runs it) needs more than the 80 held: a new block of its own.
    const whole: Op[] = [
      {
        kind: 'copy',
        stream: 's',
        direction: 'h2d',
        buffer: 'x',
        hostOffset: 0,
        deviceOffset: 0,
        bytes: 120,
        chunk: 0,
      },
      { kind: 'host', stream: 's', name: 'decode', chunk: 0 },
    ];
    issuer.prepare({ ...schedule, id: 'serial', body: whole, ranges: [{ index: 0, first: 0, count: 30 }] });
    issuer.prepare(schedule);
    assert.deepEqual(
      allocations.map((a) => a.bytes),
      [80, 120],
    );
  });

  it("waits for a traced chunk's fill before the begin event of its H2D, so the timeline never draws the H2D ahead of its fill", () => {
    const { issuer, schedule } = setUp();
    const traced = traceSchedule(schedule).schedule;
    const prepared = issuer.prepare(traced);
    const ops = prepared.ops;
    for (const [at, fill] of loaderOf(prepared)?.waitAt ?? []) {
      const op = ops[at];
      assert.ok(
        op?.kind === 'record' && op.event.startsWith('trace:'),
        `fill ${fill} waited for at ${JSON.stringify(op)}`,
      );
      const next = ops[at + 1];
      assert.ok(next?.kind === 'copy' && next.direction === 'h2d' && next.chunk === fill, JSON.stringify(next));
    }
    assert.equal(loaderOf(prepared)?.waitAt.size, 3);
  });
});
