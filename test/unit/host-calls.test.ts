import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CudaRuntime } from '../../src/cuda/runtime.js';
import type { StreamHandle } from '../../src/cuda/types.js';
import { Cleanup } from '../../src/exec/cleanup.js';
import { HostCalls } from '../../src/exec/host-calls.js';

/** A runtime whose "stream" runs each enqueued host function when the test says the GPU got there. */
function fakeRuntime() {
  const registrations: Array<(userData: number) => void> = [];
  const queue: number[] = [];
  let unregistered = 0;
  const rt = {
    hostFunctions: {
      register: (callback: (userData: number) => void) => {
        registrations.push(callback);
        return {
          launchThunk: (_stream: StreamHandle, userData: number) => () => {
            queue.push(userData);
            return 0;
          },
          unregister: () => {
            unregistered += 1;
          },
        };
      },
    },
  } as unknown as CudaRuntime;
  const drain = () => {
    for (const userData of queue.splice(0)) registrations[0]?.(userData);
  };
  return { rt, registrations, drain, unregistered: () => unregistered };
}

const stream = 1n as StreamHandle;

describe('host calls', () => {
  it('register one native function for any number of host ops, and tell the ops apart by tag', () => {
    const { rt, registrations, drain } = fakeRuntime();
    const cleanup = new Cleanup();
    const calls = new HostCalls(rt, cleanup);
    const ran: string[] = [];
    const ops = ['a', 'b', 'c'].map((name) => calls.thunk(stream, () => ran.push(name)));
    assert.equal(registrations.length, 1);
    assert.deepEqual(
      ops.map((o) => o.tag),
      [0, 1, 2],
    );
    calls.beginRep();
    ops[2]?.issue();
    ops[0]?.issue();
    drain();
    calls.endRep();
    assert.deepEqual(ran, ['c', 'a']);
    assert.ok(calls.startedAt[2] !== undefined && calls.startedAt[2] <= (calls.endedAt[2] ?? 0));
    assert.ok(Number.isNaN(calls.startedAt[1]));
  });

  it("keep what a host function threw for the rep to report, instead of throwing into CUDA's thread", () => {
    const { rt, drain } = fakeRuntime();
    const calls = new HostCalls(rt, new Cleanup());
    const op = calls.thunk(stream, () => {
      throw new Error('checksum failed');
    });
    calls.beginRep();
    op.issue();
    assert.doesNotThrow(drain);
    assert.throws(() => calls.endRep(), /checksum failed/);
    assert.doesNotThrow(() => calls.endRep());
  });

  it('release the native function only when no rep left calls pending', () => {
    for (const finished of [true, false]) {
      const { rt, unregistered } = fakeRuntime();
      const cleanup = new Cleanup();
      const calls = new HostCalls(rt, cleanup);
      calls.thunk(stream, () => {});
      calls.beginRep();
      if (finished) calls.endRep();
      cleanup.run();
      assert.equal(
        unregistered(),
        finished ? 1 : 0,
        finished ? 'released after a finished rep' : 'kept after a rep that failed half-run',
      );
    }
  });
});
