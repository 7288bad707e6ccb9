import assert from 'node:assert/strict';
import { collectiveCalls, openCommunicatorsOf } from '../../../test/helpers/collective.js';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { reductionCheck } from '../../api/session.js';
import { loadConfigFile } from '../../config/load.js';
import type { ConfigBuffer } from '../../config/types.js';
import type { Nccl } from './nccl.js';
import type { CudaRuntime } from '../../cuda/runtime.js';
import { compareOutput, compareWithin, POISON } from '../../data/compare.js';
import { UsageError } from '../../errors.js';
import { Cleanup } from '../../exec/cleanup.js';
import { resolveKernels } from '../../kernels/resolve.js';
import { verifySchedules } from '../../measure/repeat.js';
import { buildPlan } from '../../plan/build.js';
import { dataParallel, hasCollective, replicated } from './data-parallel.js';
import { checkReduction as checkWith, reducedOutputs, scaled } from './reduction.js';
import { outputCheck } from '../index.js';
import { spanningSchedule } from '../../plan/devices.js';
import { traceSchedule } from '../../plan/trace.js';
import { type Op, type Plan, type Schedule, scheduleDevices } from '../../plan/types.js';
import { builtinConfigsDir } from '../../paths.js';
import type { CollectiveOp } from './spec.js';
import { renderRunTable } from '../../report/exporters/table.js';
import { makeStyle } from '../../report/style.js';
import { FakeRunner } from '../../../test/helpers/fake-runner.js';
import { syntheticRunResult } from '../../../test/helpers/synthetic-timeline.js';
import { runCli } from '../../../test/helpers/cli.js';
import { NOT_LAUNCHED } from '../api/index.js';

// The facts, each on one line: --verbose's report, too wide to wrap (the width is tested in render-width-run).
const everything = { columns: 10_000, verbose: true };

const ddpPath = join(builtinConfigsDir(), 'ddp.yaml');

function ddp(devices: readonly number[] | null, overrides: { chunks?: number; mode?: 'stream' | 'graph' } = {}): Plan {
  const { config, locate } = loadConfigFile(ddpPath, { ...overrides, ...(devices ? { devices: [...devices] } : {}) });
  return buildPlan(config, resolveKernels(config, locate), { devices });
}

const byKind = (plan: Plan, kind: string): Schedule => plan.schedules.find((s) => s.role.kind === kind) as Schedule;

/** A device's part of a replicated body, with the device's prefix and the group marks taken off. */
function partOf(body: readonly Op[], device: number): Op[] {
  const prefix = `d${device}:`;
  return body
    .filter((op) => op.stream.startsWith(prefix))
    .map((op) => {
      const { group: _group, ...rest } = op as Op & { group?: unknown };
      const renamed = { ...rest, stream: op.stream.slice(prefix.length) } as Op;
      return renamed.kind === 'record' || renamed.kind === 'wait'
        ? { ...renamed, event: renamed.event.slice(prefix.length) }
        : renamed;
    });
}

describe('a config with a collective over several devices (data-parallel from one process)', () => {
  const one = ddp(null);
  const two = ddp([0, 1]);

  it('runs every mode with a collective on both devices at once, and every other mode on the first alone', () => {
    const spanning = two.schedules.filter((s) => scheduleDevices(s).length > 1).map((s) => s.id);
    assert.deepEqual(
      spanning,
      one.schedules.filter(hasCollective).map((s) => s.id),
    );
    assert.deepEqual(spanning, [
      'serial',
      'overlapped:8x3:depth-first:stage-per-stream',
      'collective:allreduce:8-buckets',
    ]);
    for (const s of two.schedules) assert.deepEqual(scheduleDevices(s), spanning.includes(s.id) ? [0, 1] : [0], s.id);
    assert.deepEqual(two.devices, [0, 1]);
    assert.deepEqual(
      two.placements,
      [{ device: 1, elements: 32, base: 0, ownOutputs: true }],
      'the second device holds all 32 items of every buffer, and its outputs in host memory of its own',
    );
  });

  it("counts one rank's calls and bytes for the bandwidths, not every device's: 8 calls of 64 MiB per rank, alone and overlapped", () => {
    const eight = ddp([0, 1], { chunks: 8 });
    assert.deepEqual(collectiveCalls(byKind(eight, 'overlapped')), {
      collective: { collective: 'allreduce', calls: 8, bytes: 512 * 2 ** 20 },
    });
    const alone = eight.schedules.find((s) => s.id === 'collective:allreduce:8-buckets') as Schedule;
    assert.equal(
      alone.body.filter((op) => op.kind === 'collective').length,
      16,
      'both ranks call it in the spanning schedule',
    );
    assert.deepEqual(collectiveCalls(alone), {
      collective: { collective: 'allreduce', calls: 8, bytes: 512 * 2 ** 20 },
    });
  });

  it('gives each device the one-device schedule\u2019s body, in its order, on streams of its own', () => {
    for (const id of ['serial', 'overlapped:8x3:depth-first:stage-per-stream']) {
      const mine = one.schedules.find((s) => s.id === id) as Schedule;
      const theirs = two.schedules.find((s) => s.id === id) as Schedule;
      for (const device of [0, 1])
        assert.deepEqual(partOf(theirs.body, device), mine.body, `${id} on device ${device}`);
      assert.deepEqual(
        theirs.streams.map((s) => [s.id, s.device]),
        [0, 1].flatMap((device) => mine.streams.map((s) => [`d${device}:${s.id}`, device])),
      );
    }
  });

  it("issues each bucket's all-reduce on every device inside one NCCL group, first device opening it, last closing it, buckets in issue order", () => {
    const body = byKind(two, 'overlapped').body;
    const calls = body.flatMap((op, index) => (op.kind === 'collective' ? [{ index, op }] : []));
    assert.deepEqual(
      calls.map(({ op }) => [op.chunk, op.stream, op.group?.opens, op.group?.closes]),
      [0, 1, 2, 3, 4, 5, 6, 7].flatMap((chunk) => [
        [chunk, 'd0:comm', true, false],
        [chunk, 'd1:comm', false, true],
      ]),
    );
    for (let k = 0; k < calls.length; k += 2)
      assert.equal((calls[k + 1]?.index ?? 0) - (calls[k]?.index ?? 0), 1, 'a group has nothing between its calls');
    const three = ddp([0, 1, 2]);
    const groups = byKind(three, 'serial').body.flatMap((op) =>
      op.kind === 'collective' ? [[op.stream, op.group?.opens, op.group?.closes]] : [],
    );
    assert.deepEqual(groups, [
      ['d0:comm', true, false],
      ['d1:comm', false, false],
      ['d2:comm', false, true],
    ]);
  });

  it("times the whole mode from the first device's start to its end after every device joined, and each device between its own start and end", () => {
    const s = byKind(two, 'serial');
    assert.deepEqual(s.probes, [
      { begin: 'start', end: 'end:d0', device: 0 },
      { begin: 'start:d1', end: 'end:d1', device: 1 },
    ]);
    const ops = [...s.prologue, ...s.epilogue];
    assert.deepEqual(ops.at(-1), { kind: 'record', stream: 'd0:s0', event: 'end' });
    assert.deepEqual(ops.at(-2), { kind: 'wait', stream: 'd0:s0', event: 'end:d1' });
    assert.deepEqual(
      s.bytes,
      { ...byKind(one, 'serial').bytes, d2h: 256 },
      'collective bytes per rank; each device copies its checksums back',
    );
  });

  it('times each grouped call from events recorded before the group opens and after it closes', () => {
    const { schedule, spans } = traceSchedule(byKind(two, 'overlapped'));
    const first = schedule.body.findIndex((op) => op.kind === 'collective');
    const window = schedule.body
      .slice(first - 2, first + 4)
      .map((op) => (op.kind === 'record' ? `record ${op.event}` : `${op.kind} ${op.stream}`));
    const opening = spans.filter((s) => s.op.kind === 'collective').slice(0, 2);
    assert.deepEqual(window, [
      `record ${opening[0]?.begin}`,
      `record ${opening[1]?.begin}`,
      'collective d0:comm',
      'collective d1:comm',
      `record ${opening[0]?.end}`,
      `record ${opening[1]?.end}`,
    ]);
    assert.deepEqual(
      opening.map((s) => s.bodyIndex),
      [first, first + 1],
    );
    assert.equal(
      spans.length,
      byKind(two, 'overlapped').body.filter((op) => op.kind !== 'record' && op.kind !== 'wait').length,
    );
  });

  it('refuses graph mode (exit 2): grouped calls across devices from one thread are not captured', () => {
    assert.throws(
      () => ddp([0, 1], { mode: 'graph' }),
      (error: unknown) =>
        error instanceof UsageError &&
        /--mode graph: .*one NCCL group across devices, which cuda-pipe does not capture into a CUDA graph/.test(
          error.message,
        ),
    );
    assert.throws(() => dataParallel(one, [0, 1], { graph: true, spanning: spanningSchedule }), UsageError);
    const run = runCli(['run', ddpPath, '--devices', '0,1', '--mode', 'graph', '--dry-run']);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /does not capture into a CUDA graph/);
  });

  it('plans ddp.yaml (items, a resident buffer, stage per stream) over two devices in a dry run, where a split refuses all three', () => {
    const run = runCli(['run', ddpPath, '--devices', '0,1', '--dry-run']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^Plan for ddp on device 0, 1: 32 items per rep/);
    assert.match(
      run.stdout,
      /\nmode serial: [^\n]*on GPUs 0, 1 at once \(data-parallel: one NCCL rank each\); [^\n]*2 NCCL collectives\) on 4 streams on GPUs 0 and 1/,
    );
    assert.match(run.stdout, /note: Data-parallel over GPUs 0, 1: /);
  });

  it('refuses a mode that times probes of its own (a latency mode) rather than replicate it', () => {
    const serial = byKind(one, 'serial');
    assert.throws(
      () => replicated({ ...serial, probes: [{ begin: 'start', end: 'end' }] }, [0, 1], spanningSchedule),
      UsageError,
    );
  });

  it('plans the split, not data parallelism, for a config without a collective', () => {
    const { config, locate } = loadConfigFile(join(builtinConfigsDir(), 'small.yaml'), { devices: [0, 1] });
    const plan = buildPlan(config, resolveKernels(config, locate), { devices: [0, 1] });
    assert.ok(plan.schedules.some((s) => s.role.kind === 'split'));
    assert.equal(plan.reference, undefined);
  });
});

describe('the communicators of a data-parallel run', () => {
  function fakes(failRelease: bigint | null = null) {
    const calls: string[] = [];
    const nccl = {
      libraryPath: '/lib/x86_64-linux-gnu/libnccl.so.2',
      version: () => 22803,
      initAll: (devices: readonly number[]) => {
        calls.push(`initAll ${devices.join(',')}`);
        return devices.map((d) => BigInt(100 + d));
      },
      release: (comm: bigint, context: string) => {
        calls.push(`release ${comm} (${context})`);
        if (comm === failRelease) throw new Error('ncclCommDestroy failed');
      },
    } as unknown as Nccl;
    const rt = { setDevice: (d: number) => calls.push(`setDevice ${d}`) } as unknown as CudaRuntime;
    return { nccl, rt, calls };
  }
  const alone = NOT_LAUNCHED;

  it('opens one communicator per device with ncclCommInitAll over the plan\u2019s devices, each device its rank', async () => {
    const { nccl, rt, calls } = fakes();
    const cleanup = new Cleanup();
    const opened = await openCommunicatorsOf(nccl, rt, ddp([0, 1]), alone, cleanup);
    assert.deepEqual(
      [...opened.byDevice],
      [
        [0, { comm: 100n, rank: 0, ranks: 2 }],
        [1, { comm: 101n, rank: 1, ranks: 2 }],
      ],
    );
    assert.deepEqual(opened.record, {
      library: 'nccl',
      version: '2.28.3',
      ranks: 2,
      localDevices: [0, 1],
      nvls: 'off',
    });
    assert.match(opened.notes.join('\n'), /one process drives devices 0, 1 \(ncclCommInitAll, 2 ranks\)/);
    cleanup.run();
    assert.deepEqual(calls, [
      'initAll 0,1',
      'setDevice 0',
      'release 101 (device 1, rank 1 of 2)',
      'release 100 (device 0, rank 0 of 2)',
    ]);
  });

  it('destroys every communicator when the run fails after opening them, even where one destroy fails', async () => {
    const { nccl, rt, calls } = fakes(101n);
    await assert.rejects(
      Cleanup.use(async (cleanup) => {
        await openCommunicatorsOf(nccl, rt, ddp([0, 1]), alone, cleanup);
        throw new Error('a rep failed');
      }),
      /a rep failed/,
    );
    assert.deepEqual(calls.slice(-2), ['release 101 (device 1, rank 1 of 2)', 'release 100 (device 0, rank 0 of 2)']);
  });
});

const out = (name: string, type: ConfigBuffer['type'], values: readonly number[]): ConfigBuffer => {
  const elementBytes = type === 'float64' ? 8 : type === 'uint8' ? 1 : 4;
  return {
    name,
    type,
    elementBytes,
    elements: values.length,
    bytes: values.length * elementBytes,
    itemSize: 1,
    role: 'out',
    init: { kind: 'constant', value: 0 },
    hostMemory: 'pinned',
  };
};
type Head<T extends unknown[]> = T extends [...infer H, unknown] ? H : never;
/** The check with the comparisons the verifier gives it. */
const checkReduction = (...args: Head<Parameters<typeof checkWith>>) =>
  checkWith(...args, { compareOutput, compareWithin });
const f32 = (values: readonly number[]) => new Uint8Array(Float32Array.from(values).buffer);

describe('checking that an all-reduce summed', () => {
  const check = out('check', 'float32', [1.5, 3.25, 1e-3]);
  const reference = new Map([['check', [f32([1.5, 3.25, 1e-3])]]]);

  it('passes two ranks whose reduced outputs are exactly twice the reference', () => {
    const { mismatches, record } = checkReduction(
      [check],
      new Map([['check', [f32([3, 6.5, 2e-3])]]]),
      reference,
      2,
      null,
      POISON.serial,
    );
    assert.deepEqual(mismatches, []);
    assert.deepEqual([record.status, record.exact, record.ranks, record.tolerance], ['passed', true, 2, undefined]);
    assert.equal(
      record.text,
      `all-reduce (sum) over 2 ranks of equal inputs: serial's 3 of "check" equal 2 × those of serial with its collectives left out, exactly`,
    );
  });

  it('fails a no-op all-reduce over two ranks: every value left as the rank computed it', () => {
    const { mismatches, record } = checkReduction([check], reference, reference, 2, null, POISON.serial);
    assert.equal(record.status, 'failed');
    assert.deepEqual(
      mismatches.map((m) => [m.buffer, m.index, m.differing, m.unwritten]),
      [['check', 0, 3, false]],
    );
    assert.match(mismatches[0]?.expected ?? '', /^3\b/);
    assert.match(mismatches[0]?.actual ?? '', /^1\.5\b/);
  });

  it('takes one rank\u2019s unchanged outputs as its sum', () => {
    assert.equal(checkReduction([check], reference, reference, 1, null, POISON.serial).record.status, 'passed');
  });

  it('allows NCCL\u2019s rounding over more than two ranks within the tolerance, and no more', () => {
    const near = new Map([['check', [f32([6 * (1 + 4e-6), 13, 4e-3])]]]);
    const found = checkReduction([check], near, reference, 4, null, POISON.serial);
    assert.equal(found.record.status, 'passed');
    assert.equal(found.record.exact, false);
    assert.deepEqual([found.record.tolerance?.relative, found.record.tolerance?.absolute], [1e-5, 0]);
    assert.ok(Math.abs((found.record.tolerance?.largestError.relative ?? 0) - 4e-6) < 1e-7);
    const far = new Map([['check', [f32([6 * 1.001, 13, 4e-3])]]]);
    assert.equal(checkReduction([check], far, reference, 4, null, POISON.serial).record.status, 'failed');
    assert.equal(
      checkReduction([check], far, reference, 4, { relative: 0.01, absolute: 0 }, POISON.serial).record.status,
      'passed',
      "the config's tolerance where it gives one",
    );
  });

  it('scales as the GPU stores: float32 rounded, integers wrapped', () => {
    assert.deepEqual(
      [...new Float32Array(scaled({ type: 'float32' }, f32([1 + 2 ** -23]), 3).buffer)],
      [Math.fround(3 * (1 + 2 ** -23))],
    );
    assert.deepEqual(
      [...new Int32Array(scaled({ type: 'int32' }, new Uint8Array(Int32Array.from([2 ** 30]).buffer), 4).buffer)],
      [0],
    );
    assert.deepEqual([...scaled({ type: 'uint8' }, Uint8Array.from([200]), 2)], [144]);
  });

  it("checks ddp.yaml's checksums, computed from the reduced gradients, and not the gradients themselves (scratch, never copied back)", () => {
    const plan = ddp([0, 1]);
    assert.deepEqual(
      reducedOutputs(
        byKind(plan, 'serial'),
        plan.buffers.filter((b) => b.role === 'out'),
        outputCheck(byKind(plan, 'serial').body)?.facts ?? assert.fail('no output check'),
      ).map((b) => [b.name, b.elements]),
      [['check', 32]],
    );
  });

  it('makes the reference from serial without its collectives, on the first device alone, outside the measured modes', () => {
    const plan = ddp([0, 1]);
    const serial = ddp(null).schedules[0] as Schedule;
    const ref = plan.reference as Schedule;
    assert.equal(ref.id, 'serial:reference');
    assert.deepEqual(
      ref.body,
      serial.body.filter((op) => op.kind !== 'collective'),
    );
    assert.deepEqual([ref.device, ref.verify, scheduleDevices(ref)], [0, false, [0]]);
    assert.equal(
      plan.schedules.some((s) => s.id === ref.id),
      false,
    );
    assert.ok(serial.body.some((op) => (op as CollectiveOp).kind === 'collective'));
  });
});

describe('verification with the all-reduce check', () => {
  const plan = ddp([0, 1]);
  const check = plan.buffers.find((b) => b.name === 'check') as ConfigBuffer;
  const verified = plan.schedules.filter((s) => s.verify);
  /** Each rep writes its checksums: the reference 1.25 each, the all-reduced modes `reducedTimes` that. */
  const runner = (reducedTimes: number) =>
    new FakeRunner(verified, [check], {
      unmeasured: [plan.reference as Schedule],
      write: (s, bytes) =>
        new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4).fill(
          s.id === 'serial:reference' ? 1.25 : 1.25 * reducedTimes,
        ),
    });

  it('runs the reference after serial and passes when serial is twice it', async () => {
    const fake = runner(2);
    const v = await verifySchedules(fake, true, undefined, null, reductionCheck(plan, { size: null }));
    assert.equal(v.status, 'passed');
    assert.deepEqual(
      [v.reduction?.status, v.reduction?.ranks, v.reduction?.buffers],
      ['passed', 2, [{ name: 'check', elements: 32 }]],
    );
    assert.deepEqual(
      fake.calls.filter((c) => c.call === 'rep').map((c) => (c.call === 'rep' ? c.id : '')),
      [
        'serial',
        'serial:reference',
        'overlapped:8x3:depth-first:stage-per-stream',
        'overlapped:8x3:depth-first:stage-per-stream',
      ],
    );
  });

  it('fails a no-op all-reduce that serial and overlapped agree on, naming the serial mode', async () => {
    const v = await verifySchedules(runner(1), true, undefined, null, reductionCheck(plan, { size: null }));
    assert.equal(v.status, 'failed');
    assert.equal(v.reduction?.status, 'failed');
    assert.deepEqual(
      v.mismatches.map((m) => [m.mode, m.buffer, m.index, m.differing]),
      [['serial', 'check', 0, 32]],
    );
  });

  it('counts the launch\u2019s ranks under a launcher and this process\u2019s devices otherwise', () => {
    assert.equal(reductionCheck(plan, { size: null })?.ranks, 2);
    assert.equal(reductionCheck(ddp(null), { size: 4 })?.ranks, 4);
    assert.equal(reductionCheck(ddp(null), { size: null })?.ranks, 1);
    assert.equal(reductionCheck({ ...plan, reference: undefined } as Plan, { size: null }), null);
  });
});

describe('the all-reduce check in the table', () => {
  const plain = makeStyle({ isTTY: false } as NodeJS.WriteStream, {});
  const base = syntheticRunResult();
  const serial = base.modes.find((m) => m.role.kind === 'serial')?.id as string;
  const reduction = {
    rule: 'allreduce-sum' as const,
    text: 'all-reduce (sum) over 2 ranks of equal inputs: serial\'s 32 of "check" equal 2 × those of serial with its collectives left out, exactly',
    ranks: 2,
    buffers: [{ name: 'check', elements: 32 }],
    exact: true,
  };

  it('says which rule ran on which elements after the comparison with serial', () => {
    const table = renderRunTable(
      { ...base, verification: { status: 'passed', mismatches: [], reduction: { ...reduction, status: 'passed' } } },
      plain,
      everything,
    );
    assert.match(
      table,
      /verification: passed \(overlapped outputs equal serial byte for byte; every element written\)\nall-reduce check: passed \(all-reduce \(sum\) over 2 ranks[^\n]*32 of "check"/,
    );
  });

  it("names a failed check's values as ranks × reference against what was all-reduced", () => {
    const mismatch = {
      buffer: 'check',
      mode: serial,
      index: 0,
      expected: '3',
      actual: '1.5',
      differing: 32,
      unwritten: false,
    };
    const table = renderRunTable(
      {
        ...base,
        verification: { status: 'failed', mismatches: [mismatch], reduction: { ...reduction, status: 'failed' } },
      },
      plain,
      everything,
    );
    assert.match(
      table,
      /output "check" of serial: first difference at element 0: 2 × reference 3, all-reduced 1\.5; 32 elements differ\nall-reduce check: FAILED/,
    );
  });
});
