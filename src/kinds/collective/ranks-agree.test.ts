import assert from 'node:assert/strict';
import { openCommunicatorsOf } from '../../../test/helpers/collective.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Nccl, NcclComm } from './nccl.js';
import { NcclError } from './nccl.js';
import type { CudaRuntime } from '../../cuda/runtime.js';
import { DeviceFailure, Interrupted } from '../../errors.js';
import { Cleanup } from '../../exec/cleanup.js';
import { CommWatch } from './communicators.js';
import { pollUntil } from '../../exec/wait.js';
import { resolveKernels } from '../../kernels/resolve.js';
import { DEFAULT_POLICY } from '../../measure/policy.js';
import { measureSchedule } from '../../measure/repeat.js';
import type { Schedule } from '../../plan/types.js';
import { loadConfigFile } from '../../config/load.js';
import { builtinConfigsDir } from '../../paths.js';
import { ranksAgreeing } from '../../../test/helpers/agreement.js';
import { FakeRunner } from '../../../test/helpers/fake-runner.js';
import { tinySweepPlan } from '../../../test/helpers/tiny-sweep.js';
import { raceLayouts } from '../../measure/sweep.js';
import { buildPlan } from '../../plan/build.js';

// Issue 24: the ranks of a launch take every decision that changes their sequence of collective calls together, and
// nothing that waits on NCCL can outlast its deadline or a signal.

const { plan, layouts } = tinySweepPlan();
const serial = plan.schedules.find((s) => s.role.kind === 'serial') as Schedule;

describe('ranks that measure with different noise', () => {
  const quiet = () => 2;
  // Noise well above the 0.5% target for the first 30 reps, then none: this rank's rule stops much later.
  const noisy = (_s: Schedule, n: number) => (n < 33 ? 2 + (n % 2) * 0.4 : 2);
  const policy = { ...DEFAULT_POLICY, warmup: 3, minReps: 10 };

  it('alone, stop after different rep counts (why they must agree)', async () => {
    const a = await measureSchedule(new FakeRunner(plan.schedules, plan.buffers, { gpuMs: quiet }), serial, policy);
    const b = await measureSchedule(new FakeRunner(plan.schedules, plan.buffers, { gpuMs: noisy }), serial, policy);
    assert.equal(a.gpuMs.length, 10);
    assert.ok(b.gpuMs.length > 10, `${b.gpuMs.length} reps`);
  });

  it('take the same warm-ups and the same rep count when they agree: the noisier rank sets it, and they asked the same questions', async () => {
    const { agreements, log } = ranksAgreeing(2);
    const runners = [quiet, noisy].map((gpuMs, rank) =>
      Object.assign(new FakeRunner(plan.schedules, plan.buffers, { gpuMs }), { agreement: agreements[rank] }),
    );
    const [a, b] = await Promise.all(runners.map((runner) => measureSchedule(runner, serial, policy)));
    const alone = await measureSchedule(new FakeRunner(plan.schedules, plan.buffers, { gpuMs: noisy }), serial, policy);
    assert.equal(a?.gpuMs.length, alone.gpuMs.length);
    assert.equal(b?.gpuMs.length, alone.gpuMs.length);
    assert.deepEqual(
      runners.map((r) => r.repsOf(serial.id)),
      [alone.gpuMs.length + 3, alone.gpuMs.length + 3],
    );
    assert.deepEqual(log[0], log[1]);
    assert.equal(
      log[0]?.filter((about) => about.startsWith('another warm-up')).length,
      4,
      'three warm-ups asked for, then none',
    );
  });
});

describe('ranks racing layouts with different noise', () => {
  // Rank 1's first layout is noisy for its first 25 reps: alone, its race would give that layout more rounds.
  const quiet = (s: Schedule) => (s === layouts[0] ? 1 : 2);
  const noisy = (s: Schedule, n: number) => (s === layouts[0] ? (n < 25 ? 1 + ((n * 7919) % 13) / 40 : 1) : 2);
  const policy = { ...DEFAULT_POLICY, warmup: 1, minReps: 5 };
  const race = { probeReps: 3, batchReps: 2, budgetMs: 60_000 };

  it('alone, take different reps of the same layout', async () => {
    const [a, b] = await Promise.all(
      [quiet, noisy].map((gpuMs) =>
        raceLayouts(new FakeRunner(plan.schedules, plan.buffers, { gpuMs }), layouts, policy, race),
      ),
    );
    assert.notDeepEqual(
      a?.map((m) => m.gpuMs.length),
      b?.map((m) => m.gpuMs.length),
    );
  });

  it('take the same reps of every layout when they agree round by round', async () => {
    const { agreements, log } = ranksAgreeing(2);
    const runners = [quiet, noisy].map((gpuMs, rank) =>
      Object.assign(new FakeRunner(plan.schedules, plan.buffers, { gpuMs }), { agreement: agreements[rank] }),
    );
    const [a, b] = await Promise.all(runners.map((runner) => raceLayouts(runner, layouts, policy, race)));
    assert.deepEqual(
      a?.map((m) => m.gpuMs.length),
      b?.map((m) => m.gpuMs.length),
    );
    assert.deepEqual(
      runners.map((r) => layouts.map((l) => r.repsOf(l.id))),
      [0, 1].map(() => (b ?? []).map((m) => m.gpuMs.length + 1)),
    );
    assert.deepEqual(log[0], log[1]);
  });
});

describe("waiting on NCCL's communicators", () => {
  function fakeNccl(states: () => number) {
    const aborted: bigint[] = [];
    const nccl = {
      asyncError: () => states(),
      abort: (comm: NcclComm) => {
        aborted.push(comm);
        return 0;
      },
      failure: (status: number, api: string, context: string) =>
        new NcclError(api, status, 'remote process exited or there was a network error', context),
      release: () => undefined,
    };
    return { nccl, aborted };
  }
  const comms = [
    { comm: 1n as NcclComm, context: 'rank 0 of 2, device 0' },
    { comm: 2n as NcclComm, context: 'rank 1 of 2, device 1' },
  ];

  it('ends a wait for a rank that never joins at the deadline, aborting every communicator (exit 4, naming what it waited for)', async () => {
    const { nccl, aborted } = fakeNccl(() => 7);
    const watch = new CommWatch(nccl, comms);
    const started = performance.now();
    const error = await watch
      .settle('Rank 1 of 2 joining the communicator waited for the other ranks', { timeoutMs: 50 })
      .catch((e: unknown) => e);
    assert.ok(error instanceof DeviceFailure && error.contextLost, String(error));
    assert.match(error.message, /^Rank 1 of 2 joining the communicator waited for the other ranks: waited 0\.1 s/);
    assert.deepEqual(aborted, [1n, 2n]);
    assert.ok(performance.now() - started < 1000);
    watch.abortAll();
    assert.deepEqual(aborted, [1n, 2n], 'aborted once');
  });

  it('ends the wait at once on a signal (exit 130) and on a peer\u2019s asynchronous error (exit 4, naming the rank)', async () => {
    const signalled = fakeNccl(() => 7);
    const controller = new AbortController();
    controller.abort('SIGTERM');
    const interrupted = await new CommWatch(signalled.nccl, comms)
      .settle('joining', { timeoutMs: 60_000, signal: controller.signal })
      .catch((e: unknown) => e);
    assert.ok(
      interrupted instanceof Interrupted && interrupted.contextLost && interrupted.exitCode === 130,
      String(interrupted),
    );
    assert.deepEqual(signalled.aborted, [1n, 2n]);
    const remote = fakeNccl(() => 6);
    const failed = await new CommWatch(remote.nccl, comms)
      .settle('joining', { timeoutMs: 60_000 })
      .catch((e: unknown) => e);
    assert.ok(failed instanceof NcclError && failed.exitCode === 4);
    assert.match(failed.message, /ncclCommGetAsyncError failed \(rank 0 of 2, device 0\): ncclRemoteError/);
    assert.deepEqual(remote.aborted, [1n, 2n]);
  });

  it('skips the cleanup\u2019s release of an aborted communicator (NCCL freed it)', () => {
    const released: bigint[] = [];
    const { nccl } = fakeNccl(() => 0);
    const watch = new CommWatch({ ...nccl, release: (comm: NcclComm) => released.push(comm) }, comms);
    watch.release(1n as NcclComm, 'x');
    watch.abortAll();
    watch.release(2n as NcclComm, 'y');
    assert.deepEqual(released, [1n]);
  });

  it('has a launched rank whose peers never come give up at its deadline instead of blocking (exit 4)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nccl-never-'));
    const { config: ddp, locate: where } = loadConfigFile(join(builtinConfigsDir(), 'ddp.yaml'));
    const ddpPlan = buildPlan(ddp, resolveKernels(ddp, where));
    const { nccl: states, aborted } = fakeNccl(() => 7);
    const nccl = {
      ...states,
      libraryPath: 'libnccl.so.2',
      nonblocking: true,
      version: () => 22803,
      uniqueId: () => new Uint8Array(128),
      initRank: () => 5n,
    } as unknown as Nccl;
    const rt = { setDevice: () => undefined } as unknown as CudaRuntime;
    const started = performance.now();
    const error = await openCommunicatorsOf(
      nccl,
      rt,
      ddpPlan,
      { identity: { rank: 0, size: 2, jobId: 'never' }, dir, timeoutMs: 80 },
      new Cleanup(),
    ).catch((e: unknown) => e);
    assert.ok(error instanceof DeviceFailure, String(error));
    assert.match(
      error.message,
      /Rank 0 of 2 \(device 0\) joining the NCCL communicator \(ncclCommInitRankConfig\) waited for the other ranks: waited 0\.1 s/,
    );
    assert.deepEqual(aborted, [5n]);
    assert.ok(performance.now() - started < 2000);
  });

  it('ends a poll when its check throws, without waiting for the event', async () => {
    let asked = 0;
    const wait = pollUntil(
      () => 600, // cudaErrorNotReady for ever
      Number.POSITIVE_INFINITY,
      () => {
        asked += 1;
        if (asked > 2) throw new Error('peer failed');
      },
    );
    await assert.rejects(wait, /peer failed/);
  });
});
