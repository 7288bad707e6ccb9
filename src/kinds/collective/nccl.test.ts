import assert from 'node:assert/strict';
import { collectiveCalls, openCommunicatorsOf } from '../../../test/helpers/collective.js';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadConfigFile, parseConfigText } from '../../config/load.js';
import { withSettings } from '../../config/settings.js';
import { type Nccl, nvlsOff, versionText } from './nccl.js';
import { loadNcclLibrary, ncclCandidates, type SearchFs } from './nccl-locate.js';
import type { CudaRuntime } from '../../cuda/runtime.js';
import { EnvironmentError, UsageError } from '../../errors.js';
import { Cleanup } from '../../exec/cleanup.js';
import { awaitUniqueId, publishUniqueId, uniqueIdPath, withdrawUniqueId } from './unique-id.js';
import { resolveKernels } from '../../kernels/resolve.js';
import { buildLayoutsPlan, buildPlan } from '../../plan/build.js';
import { withCommStreams } from './comm-stream.js';
import { STAGE_KINDS } from '../index.js';
import { happensBefore } from '../../plan/order.js';
import { type Op, type Plan, type Schedule, scheduleOps } from '../../plan/types.js';
import { builtinConfigsDir } from '../../paths.js';
import { RunResultSchema } from '../../result/schema.js';
import { modeId } from '../../vocabulary.js';
import { runCli } from '../../../test/helpers/cli.js';
import { syntheticRunResult } from '../../../test/helpers/synthetic-timeline.js';
import { NOT_LAUNCHED } from '../api/index.js';

const MiB = 2 ** 20;
const ddpPath = join(builtinConfigsDir(), 'ddp.yaml');

function ddpPlan(overrides: { chunks?: number } = {}): Plan {
  const { config, locate } = loadConfigFile(ddpPath, overrides);
  return buildPlan(config, resolveKernels(config, locate));
}

const overlapped = (plan: Plan): Schedule => plan.schedules.find((s) => s.role.kind === 'overlapped') as Schedule;

describe('the ddp config planned', () => {
  it('puts every bucket\u2019s all-reduce and the checksum after it on the communication stream, and the compute stream never waits for them', () => {
    const s = overlapped(ddpPlan());
    const ops = scheduleOps(s);
    const collectives = ops.filter((op) => op.kind === 'collective');
    assert.equal(collectives.length, 8);
    assert.ok(collectives.every((op) => op.stream === 'comm'));
    assert.deepEqual(
      s.streams.map((st) => [st.id, st.kind]),
      [
        ['load', 'non-blocking'],
        ['compute', 'non-blocking'],
        ['store', 'non-blocking'],
        ['comm', 'non-blocking'],
      ],
    );
    const computeWaits = ops
      .filter((op) => op.stream === 'compute' && op.kind === 'wait')
      .map((op) => (op as { event: string }).event);
    assert.deepEqual(computeWaits, ['start'], 'the compute stream waits only for the start of the rep');
    assert.deepEqual(
      ops.flatMap((op) => (op.kind === 'kernel' && op.stream === 'comm' ? [op.chunk] : [])),
      [0, 1, 2, 3, 4, 5, 6, 7],
      'each bucket\u2019s checksum runs behind its all-reduce',
    );
  });

  it("orders each bucket: its gradients, then its all-reduce, then its checksum, then its D2H, while the next bucket's gradients need not wait for the all-reduce", () => {
    const s = overlapped(ddpPlan());
    const ops = scheduleOps(s);
    const before = happensBefore(ops);
    const at = (chunk: number, match: (op: Op) => boolean) =>
      ops.findIndex((op) => 'chunk' in op && op.chunk === chunk && match(op));
    for (let chunk = 0; chunk < 8; chunk++) {
      const backward = at(chunk, (op) => op.kind === 'kernel' && op.kernel === 'backward');
      const reduce = at(chunk, (op) => op.kind === 'collective');
      const checksum = at(chunk, (op) => op.kind === 'kernel' && op.kernel === 'checksum');
      const store = at(chunk, (op) => op.kind === 'copy');
      assert.ok(before(backward, reduce) && before(reduce, checksum) && before(checksum, store), `chunk ${chunk}`);
      if (chunk < 7)
        assert.equal(
          before(
            reduce,
            at(chunk + 1, (op) => op.kind === 'kernel' && op.kernel === 'backward'),
          ),
          false,
        );
    }
  });

  it('counts each all-reduce\u2019s per-rank message bytes: the bucket\u2019s gradients, 512 MiB a rep in any bucketing', () => {
    for (const chunks of [1, 8, 32]) {
      const plan = ddpPlan({ chunks });
      const s = overlapped(plan);
      const bytes = scheduleOps(s).flatMap((op) =>
        op.kind === 'collective' ? [op.count * op.spec.itemSize * op.spec.elementBytes] : [],
      );
      assert.deepEqual(
        bytes,
        Array.from({ length: chunks }, () => (512 / chunks) * MiB),
      );
      assert.deepEqual(s.bytes, { h2d: 0, d2h: 128, collective: 512 * MiB });
    }
  });

  it("measures the collective alone at the layout's bucket size, its NCCL calls only, as a stage mode of its own", () => {
    const plan = ddpPlan();
    const alone = plan.schedules.filter((s) => s.role.kind === 'stage' && s.role.stage === 'collective');
    assert.deepEqual(
      alone.map((s) => s.id),
      ['collective:allreduce:8-buckets'],
    );
    assert.equal(
      modeId({ kind: 'stage', stage: 'collective', collective: 'allreduce' }),
      'collective:allreduce',
      'files from before buckets keep their ids',
    );
    const body = (alone[0]?.body ?? []).filter((op) => op.kind === 'collective');
    assert.deepEqual(
      body.map((op) => [op.kind, op.stream, op.chunk]),
      Array.from({ length: 8 }, (_, c) => ['collective', 'comm', c]),
    );
    assert.deepEqual(alone[0]?.bytes, { h2d: 0, d2h: 0, collective: 512 * MiB });
  });

  it('times the collective alone at every bucket count a sweep races', () => {
    const { config, locate } = loadConfigFile(ddpPath);
    const layouts = [2, 8, 32].map((chunks) => ({ chunks, streams: 3 }));
    const plan = buildLayoutsPlan(config, resolveKernels(config, locate), layouts, ['depth-first']);
    assert.deepEqual(
      plan.schedules
        .filter((s) => s.role.kind === 'stage' && s.role.stage === 'collective')
        .map((s) => [s.id, s.body.filter((op) => op.kind === 'collective').length]),
      [
        ['collective:allreduce:2-buckets', 2],
        ['collective:allreduce:8-buckets', 8],
        ['collective:allreduce:32-buckets', 32],
      ],
    );
  });

  it("gives each mode's Result its collectives a rep (calls and per-rank bytes), from which the report's bandwidths come", () => {
    const plan = ddpPlan({ chunks: 8 });
    const alone = plan.schedules.find((s) => s.role.kind === 'stage' && s.role.stage === 'collective');
    assert.ok(alone);
    assert.deepEqual(collectiveCalls(overlapped(plan)), {
      collective: { collective: 'allreduce', calls: 8, bytes: 512 * MiB },
    });
    assert.deepEqual(collectiveCalls(alone), { collective: { collective: 'allreduce', calls: 8, bytes: 512 * MiB } });
    const kernelAlone = plan.schedules.find((s) => s.role.kind === 'stage' && s.role.stage === 'kernel');
    assert.ok(kernelAlone);
    assert.deepEqual(collectiveCalls(kernelAlone), {});
  });

  it('runs the serial baseline\u2019s all-reduce on the communication stream too, its D2H waiting for it', () => {
    const serial = ddpPlan().schedules.find((s) => s.role.kind === 'serial') as Schedule;
    const ops = scheduleOps(serial);
    const before = happensBefore(ops);
    const reduce = ops.findIndex((op) => op.kind === 'collective');
    const store = ops.findIndex((op) => op.kind === 'copy');
    assert.equal(ops[reduce]?.stream, 'comm');
    assert.ok(before(reduce, store));
  });

  it('moves a collective to the communication stream of its own device in a chunk-per-stream layout, the D2H of its chunk waiting there', () => {
    const body: Op[] = [
      { kind: 'kernel', stream: 's0', kernel: 'k', chunk: 0, first: 0, count: 1, deviceFirst: 0 },
      {
        kind: 'collective',
        stream: 's0',
        label: 'ar',
        chunk: 0,
        first: 0,
        count: 1,
        deviceFirst: 0,
        spec: { collective: 'allreduce', buffer: 'g', type: 'float32', itemSize: 4, elementBytes: 4 },
      },
      {
        kind: 'copy',
        stream: 's0',
        direction: 'd2h',
        buffer: 'g',
        hostOffset: 0,
        deviceOffset: 0,
        bytes: 16,
        chunk: 0,
      },
      { kind: 'kernel', stream: 's1', kernel: 'k', chunk: 1, first: 1, count: 1, deviceFirst: 1 },
    ];
    const facts = { computeKinds: new Set<string>(STAGE_KINDS.filter((k) => k.phase === 'compute').map((k) => k.id)) };
    const streams = [
      { id: 's0', kind: 'non-blocking', device: 0 },
      { id: 's1', kind: 'non-blocking', device: 0 },
    ] as const;
    const moved = withCommStreams({ body, streams, device: 0 }, facts);
    assert.deepEqual(
      moved.body.map((op) => `${op.stream} ${op.kind}${'event' in op ? ` ${op.event}` : ''}`),
      [
        's0 kernel',
        's0 record bucket:0',
        'comm wait bucket:0',
        'comm collective',
        'comm record reduced:0',
        's0 wait reduced:0',
        's0 copy',
        's1 kernel',
      ],
    );
    assert.deepEqual(
      moved.events.map((e) => e.id),
      ['bucket:0', 'reduced:0'],
    );
    assert.deepEqual(
      withCommStreams({ body: body.slice(0, 1), streams: [], device: 0 }, facts).body,
      body.slice(0, 1),
      'a body without collectives is left as it is',
    );
  });
});

describe('a collective entry in kernels:', () => {
  const config = (
    entry: string,
    buffers = '  g: { type: float32, itemSize: 4, role: out }\n  r: { type: float32, count: 4, role: resident }',
  ) => `name: c\nbuffers:\n${buffers}\nkernels:\n${entry}\npipeline: { items: 8, chunks: 4 }\n`;
  const refused = (text: string): string => {
    try {
      parseConfigText(text, '/cfg/c.yaml');
    } catch (error) {
      assert.ok(error instanceof UsageError, String(error));
      return error.message;
    }
    assert.fail('the config should have been refused');
  };

  it('resolves to a collective step labelled by its op, with the buffer\u2019s shape', () => {
    const { config: c } = parseConfigText(config('  - collective: { op: reducescatter, buffer: g }'), '/cfg/c.yaml');
    assert.deepEqual(c.steps, [
      {
        stage: 'collective',
        label: 'reducescatter',
        spec: { collective: 'reducescatter', buffer: 'g', type: 'float32', itemSize: 4, elementBytes: 4 },
      },
    ]);
  });

  it('refuses a buffer that does not exist or is resident, naming the field', () => {
    assert.match(
      refused(config('  - collective: { op: allreduce, buffer: grads }')),
      /kernels\[0\]: collective\.buffer names no buffer "grads" \(buffers: g, r\)/,
    );
    assert.match(
      refused(config('  - collective: { op: allreduce, buffer: r }')),
      /collective\.buffer: "r" is resident, but a collective reduces each chunk's bucket/,
    );
  });

  it('pins its CTAs with ctas, a whole number from 1 to 64, and refuses others naming the field', () => {
    const { config: c } = parseConfigText(
      config('  - collective: { op: allreduce, buffer: g, ctas: 8 }'),
      '/cfg/c.yaml',
    );
    assert.deepEqual(c.steps?.[0]?.spec, {
      collective: 'allreduce',
      buffer: 'g',
      type: 'float32',
      itemSize: 4,
      elementBytes: 4,
      ctas: 8,
    });
    for (const bad of ['0', '65', '2.5'])
      assert.match(
        refused(config(`  - collective: { op: allreduce, buffer: g, ctas: ${bad} }`)),
        /kernels\[0\]\.collective\.ctas/,
        bad,
      );
  });

  it('refuses two collectives that ask for different CTAs, as the plan is built: their communicators are one', () => {
    const two = config(
      '  - collective: { op: allreduce, buffer: g, ctas: 8 }\n  - name: second\n    collective: { op: allreduce, buffer: g, ctas: 16 }',
    );
    const { config: c, locate } = parseConfigText(two, '/cfg/c.yaml');
    assert.throws(
      () => buildPlan(c, resolveKernels(c, locate)),
      (error: unknown) =>
        error instanceof UsageError &&
        /the collectives ask for different collective\.ctas \(allreduce 8, second 16\)/.test(error.message),
    );
    const agreeing = parseConfigText(two.replace('ctas: 16', 'ctas: 8'), '/cfg/c.yaml').config;
    assert.ok(buildPlan(agreeing, resolveKernels(agreeing, locate)).schedules.length > 0);
  });

  it('refuses an unknown op and an unknown field, naming where', () => {
    assert.match(refused(config('  - collective: { op: broadcast, buffer: g }')), /kernels\[0\]\.collective\.op/);
    assert.match(refused(config('  - collective: { op: allreduce, buffer: g, root: 0 }')), /root/);
  });
});

describe('libnccl', () => {
  const fakeFs = (files: readonly string[]): SearchFs => ({
    exists: (path) => files.includes(path),
    list: (dir) => [
      ...new Set(
        files.filter((f) => f.startsWith(`${dir}/`)).map((f) => f.slice(dir.length + 1).split('/')[0] as string),
      ),
    ],
  });

  it("is looked for through the loader, CUDA_PATH, CUDA_HOME, /usr/local/cuda, the system folders, then PyTorch's install", () => {
    const torch = '/usr/local/lib/python3.12/dist-packages/nvidia/nccl/lib/libnccl.so.2';
    const venv = '/venv/lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2';
    const found = ncclCandidates(
      { CUDA_PATH: '/opt/cuda', CUDA_HOME: '/opt/home', VIRTUAL_ENV: '/venv' },
      fakeFs([torch, venv]),
    ).map((c) => `${c.origin}: ${c.path}`);
    assert.deepEqual(found, [
      'dynamic loader search: libnccl.so.2',
      'CUDA_PATH: /opt/cuda/lib64/libnccl.so.2',
      'CUDA_HOME: /opt/home/lib64/libnccl.so.2',
      'default location: /usr/local/cuda/lib64/libnccl.so.2',
      'system library folder: /lib/x86_64-linux-gnu/libnccl.so.2',
      'system library folder: /usr/lib/x86_64-linux-gnu/libnccl.so.2',
      'system library folder: /lib64/libnccl.so.2',
      'system library folder: /usr/lib64/libnccl.so.2',
      'system library folder: /usr/lib/libnccl.so.2',
      `PyTorch's install: ${venv}`,
      `PyTorch's install: ${torch}`,
    ]);
  });

  it('takes CUDA_PIPE_NCCL alone when it is set, and refuses it when it does not load', () => {
    assert.deepEqual(ncclCandidates({ CUDA_PIPE_NCCL: '/x/libnccl.so.2', CUDA_PATH: '/opt/cuda' }), [
      { path: '/x/libnccl.so.2', origin: 'CUDA_PIPE_NCCL' },
    ]);
    assert.throws(
      () => loadNcclLibrary({ CUDA_PIPE_NCCL: '/nowhere/libnccl.so.2' }),
      (error: unknown) =>
        error instanceof EnvironmentError && /CUDA_PIPE_NCCL=\/nowhere\/libnccl\.so\.2/.test(error.message),
    );
  });

  const here = (() => {
    try {
      return loadNcclLibrary({}, fakeFs([])).path;
    } catch {
      return null;
    }
  })();

  it('missing everywhere is exit 3 naming every place it looked', {
    skip: here ? `libnccl is here (${here})` : false,
  }, () => {
    try {
      loadNcclLibrary({ CUDA_PATH: '/nowhere/cuda' }, fakeFs([]));
      assert.fail('libnccl should not load');
    } catch (error) {
      assert.ok(error instanceof EnvironmentError);
      assert.equal(error.exitCode, 3);
      for (const place of [
        'libnccl.so.2 (dynamic loader search)',
        '/nowhere/cuda/lib64/libnccl.so.2 (CUDA_PATH)',
        '/usr/local/cuda/lib64/libnccl.so.2 (default location)',
        '/usr/lib/x86_64-linux-gnu/libnccl.so.2 (system library folder)',
      ]) {
        assert.ok(error.message.includes(place), `${place} in ${error.message}`);
      }
      assert.match(error.hint ?? '', /CUDA_PIPE_NCCL/);
    }
  });

  it('is loaded for a config with a collective, and a missing one is exit 3 before any GPU work', () => {
    const run = runCli(['run', ddpPath], { CUDA_PIPE_NCCL: '/nowhere/libnccl.so.2' });
    assert.equal(run.code, 3, run.stderr);
    assert.match(run.stderr, /CUDA_PIPE_NCCL=\/nowhere\/libnccl\.so\.2/);
  });

  it('is never loaded for a config without a collective', () => {
    const run = runCli(['run', join(builtinConfigsDir(), 'small.yaml')], { CUDA_PIPE_NCCL: '/nowhere/libnccl.so.2' });
    assert.doesNotMatch(run.stderr, /nccl/i);
  });

  it('reads NCCL_VERSION_CODE in both of its encodings', () => {
    assert.equal(versionText(22803), '2.28.3');
    assert.equal(versionText(21903), '2.19.3');
    assert.equal(versionText(2804), '2.8.4');
  });
});

describe('NVLink multicast', () => {
  it('is switched off (NCCL_NVLS_ENABLE=0) where the user has not set it, and the Result says so', () => {
    const env: NodeJS.ProcessEnv = {};
    const off = nvlsOff(env);
    assert.equal(env.NCCL_NVLS_ENABLE, '0');
    assert.deepEqual(off, {
      set: true,
      note: 'cuda-pipe set NCCL_NVLS_ENABLE=0 (NVLink multicast off), as nothing had set it.',
    });
  });

  it("is left as the user set it, and the note says it was the user's", () => {
    const env: NodeJS.ProcessEnv = { NCCL_NVLS_ENABLE: '1' };
    assert.equal(nvlsOff(env).set, false);
    assert.equal(env.NCCL_NVLS_ENABLE, '1');
    assert.match(nvlsOff(env).note, /NCCL_NVLS_ENABLE=1 was set by the user/);
  });
});

describe("the ranks' unique id through a file", () => {
  const dir = () => mkdtempSync(join(tmpdir(), 'nccl-id-'));
  const id = Uint8Array.from({ length: 128 }, (_, i) => (i * 7 + 3) % 256);

  it("names the file by CUDA_PIPE_JOB_ID, the launcher's job id or PMIx's namespace (and Slurm's step), or asks for one", () => {
    assert.equal(uniqueIdPath('/shared', '4242', {}), '/shared/cuda-pipe-nccl-4242.id');
    assert.equal(uniqueIdPath('/shared', '4242', { SLURM_STEP_ID: '3' }), '/shared/cuda-pipe-nccl-4242.3.id');
    assert.equal(uniqueIdPath('/shared', 'a/b c', {}), '/shared/cuda-pipe-nccl-a_b_c.id');
    assert.equal(uniqueIdPath('/shared', '4242', { CUDA_PIPE_JOB_ID: '7' }), '/shared/cuda-pipe-nccl-7.id');
    assert.equal(
      uniqueIdPath('/shared', null, { PMIX_NAMESPACE: 'prterun-host-123@1' }),
      '/shared/cuda-pipe-nccl-prterun-host-123_1.id',
    );
    assert.throws(
      () => uniqueIdPath('/shared', null, {}),
      (error: unknown) => error instanceof UsageError && /CUDA_PIPE_JOB_ID/.test(error.hint ?? ''),
    );
  });

  it('hands rank 0\u2019s 128 bytes to a rank that started waiting first, and rank 0 removes the file after', async () => {
    const path = uniqueIdPath(dir(), 'job1', {});
    const waiting = awaitUniqueId(path, 128, { timeoutMs: 5000, pollMs: 5, rank: 1 });
    await new Promise((resolve) => setTimeout(resolve, 30));
    publishUniqueId(path, id);
    assert.deepEqual(await waiting, id);
    withdrawUniqueId(path);
    await assert.rejects(awaitUniqueId(path, 128, { timeoutMs: 20, pollMs: 5, rank: 1 }), EnvironmentError);
  });

  it('gives up after its timeout with a message that names the rank, the file and what to check', async () => {
    const path = uniqueIdPath(dir(), 'job2', {});
    await assert.rejects(awaitUniqueId(path, 128, { timeoutMs: 50, pollMs: 10, rank: 3 }), (error: unknown) => {
      assert.ok(error instanceof EnvironmentError);
      assert.match(
        error.message,
        /^Rank 3 waited 0\.1 s for rank 0 to write the NCCL unique id to .*cuda-pipe-nccl-job2\.id/,
      );
      assert.match(error.hint ?? '', /--nccl-dir/);
      return true;
    });
  });

  it('refuses a file of another size under its name', async () => {
    const path = uniqueIdPath(dir(), 'job3', {});
    writeFileSync(path, 'not an id');
    await assert.rejects(
      awaitUniqueId(path, 128, { timeoutMs: 50, rank: 1 }),
      /holds 9 bytes, not an NCCL unique id of 128/,
    );
  });

  it('writes through a temp file renamed into place, so the folder never holds a partial id', () => {
    const folder = dir();
    const path = uniqueIdPath(folder, 'job4', {});
    publishUniqueId(path, id);
    assert.deepEqual(new Uint8Array(readFileSync(path)), id);
  });
});

describe('the Result of a run with collectives', () => {
  it('carries the communicator and collective ops with their call and per-rank bytes', () => {
    const base = syntheticRunResult();
    const [rep] = base.timeline?.reps ?? [];
    assert.ok(rep);
    const op = {
      ...(rep.ops[0] as (typeof rep.ops)[number]),
      kind: 'collective' as const,
      stream: 'comm',
      buffer: 'grads',
      kernel: 'allreduce',
      bytes: 64 * MiB,
      collective: 'allreduce' as const,
    };
    const result = {
      ...base,
      communicator: { library: 'nccl', version: '2.28.3', ranks: 2, localDevices: [0], nvls: 'off' },
      timeline: { reps: [{ ...rep, ops: [...rep.ops, op] }] },
    };
    const parsed = RunResultSchema.parse(JSON.parse(JSON.stringify(result)));
    assert.deepEqual(parsed.communicator, {
      library: 'nccl',
      version: '2.28.3',
      ranks: 2,
      localDevices: [0],
      nvls: 'off',
    });
    assert.equal(parsed.timeline?.reps[0]?.ops.at(-1)?.collective, 'allreduce');
    assert.throws(() => RunResultSchema.parse({ ...result, communicator: { ...result.communicator, nvls: 'maybe' } }));
  });
});

describe('opening the communicators', () => {
  const ddp = ddpPlan();
  /** NCCL and the runtime as far as openCommunicators uses them, recording what it was asked. */
  function fakes(code = 22803) {
    const calls: string[] = [];
    const nccl = {
      libraryPath: '/lib/x86_64-linux-gnu/libnccl.so.2',
      version: () => code,
      uniqueId: () => Uint8Array.from({ length: 128 }, (_, i) => i),
      initAll: (devices: readonly number[]) => {
        calls.push(`initAll ${devices.join(',')}`);
        return devices.map((d) => BigInt(100 + d));
      },
      initRank: (
        ranks: number,
        id: Uint8Array,
        rank: number,
        _context: string,
        options: { blocking?: boolean; ctas?: number } = {},
      ) => {
        const asked = `${options.blocking ? ' blocking' : ''}${options.ctas === undefined ? '' : ` ctas ${options.ctas}`}`;
        calls.push(`initRank ${rank}/${ranks} id[5]=${id[5]}${asked}`);
        return BigInt(200 + rank);
      },
      configurable: code >= 21400,
      groupStart: () => calls.push('groupStart') && 0,
      groupEnd: () => calls.push('groupEnd') && 0,
      check: (status: number, api: string) => assert.equal(status, 0, api),
      release: (comm: bigint, context: string) => calls.push(`release ${comm} (${context})`),
      asyncError: () => 0,
      abort: (comm: bigint) => calls.push(`abort ${comm}`),
    } as unknown as Nccl;
    const rt = { setDevice: (d: number) => calls.push(`setDevice ${d}`) } as unknown as CudaRuntime;
    return { nccl, rt, calls };
  }
  const alone = NOT_LAUNCHED;

  it('drives the plan\u2019s device as a one-rank communicator through ncclCommInitAll, and destroys it with the cleanup', async () => {
    const { nccl, rt, calls } = fakes();
    const cleanup = new Cleanup();
    const opened = await openCommunicatorsOf(nccl, rt, ddp, alone, cleanup);
    assert.deepEqual(opened.record, { library: 'nccl', version: '2.28.3', ranks: 1, localDevices: [0], nvls: 'off' });
    assert.deepEqual([...opened.byDevice], [[0, { comm: 100n, rank: 0, ranks: 1 }]]);
    assert.match(opened.notes.join('\n'), /NCCL 2\.28\.3: one process drives device 0 \(ncclCommInitAll, 1 rank\)/);
    cleanup.run();
    assert.deepEqual(calls, ['initAll 0', 'setDevice 0', 'release 100 (device 0, rank 0 of 1)']);
  });

  const withCtas = (ctas: number): Plan => {
    const loaded = withSettings(loadConfigFile(ddpPath), [{ path: 'kernels[1].collective.ctas', value: ctas }]);
    return buildPlan(loaded.config, resolveKernels(loaded.config, loaded.locate));
  };

  it('pins every collective to collective.ctas: each device\u2019s rank made by ncclCommInitRankConfig in one group, blocking, and the Result says so', async () => {
    const { nccl, rt, calls } = fakes();
    const plan = withCtas(8);
    const opened = await openCommunicatorsOf(nccl, rt, { ...plan, devices: [0, 1] }, alone, new Cleanup());
    assert.deepEqual(calls, [
      'groupStart',
      'setDevice 0',
      'initRank 0/2 id[5]=5 blocking ctas 8',
      'setDevice 1',
      'initRank 1/2 id[5]=5 blocking ctas 8',
      'groupEnd',
      'setDevice 0',
    ]);
    assert.deepEqual(opened.record, {
      library: 'nccl',
      version: '2.28.3',
      ranks: 2,
      localDevices: [0, 1],
      nvls: 'off',
      ctas: 8,
    });
    assert.deepEqual(
      [...opened.byDevice.values()].map((d) => d.comm),
      [200n, 201n],
    );
    const notes = opened.notes.join('\n');
    assert.match(notes, /NCCL's collectives run on 8 CTAs \(channels\) each: the communicators' minCTAs and maxCTAs/);
    assert.match(notes, /drives devices 0, 1 \(ncclCommInitRankConfig in one group, 2 ranks\)/);
  });

  it('hands a launched rank\u2019s communicator collective.ctas too, and refuses it with an NCCL that takes no config (before 2.14)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nccl-ranks-'));
    const zero = fakes();
    await openCommunicatorsOf(
      zero.nccl,
      zero.rt,
      withCtas(4),
      { identity: { rank: 0, size: 2, jobId: 'j10' }, dir },
      new Cleanup(),
    );
    assert.deepEqual(zero.calls, ['setDevice 0', 'initRank 0/2 id[5]=5 ctas 4']);
    const old = fakes(21303);
    await assert.rejects(
      openCommunicatorsOf(old.nccl, old.rt, withCtas(4), alone, new Cleanup()),
      (error: unknown) =>
        error instanceof UsageError &&
        /collective\.ctas 4: NCCL 2\.13\.3 .* makes communicators without a config/.test(error.message),
    );
    assert.deepEqual(old.calls, []);
  });

  it('closes the group and tells the failed call when a rank cannot be made', async () => {
    const { nccl, rt, calls } = fakes();
    const failing = Object.assign(Object.create(null), nccl, {
      initRank: (_r: number, _id: Uint8Array, rank: number) => {
        if (rank === 1) throw new Error('ncclCommInitRankConfig failed (device 1, rank 1 of 2)');
        return 200n;
      },
    }) as Nccl;
    await assert.rejects(
      openCommunicatorsOf(failing, rt, { ...withCtas(8), devices: [0, 1] }, alone, new Cleanup()),
      /ncclCommInitRankConfig failed \(device 1, rank 1 of 2\)/,
    );
    assert.deepEqual(calls, ['groupStart', 'setDevice 0', 'setDevice 1', 'groupEnd']);
  });

  it('joins rank 1 of a launch with the id rank 0 writes to the file while it waits', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nccl-ranks-'));
    const one = fakes();
    const joining = openCommunicatorsOf(
      one.nccl,
      one.rt,
      ddp,
      { identity: { rank: 1, size: 2, jobId: 'j8' }, dir, timeoutMs: 5000 },
      new Cleanup(),
    );
    await new Promise((resolve) => setTimeout(resolve, 60));
    assert.deepEqual(one.calls, [], 'rank 1 waits for the id');
    publishUniqueId(
      join(dir, 'cuda-pipe-nccl-j8.id'),
      Uint8Array.from({ length: 128 }, () => 42),
    );
    const opened = await joining;
    assert.deepEqual(one.calls, ['setDevice 0', 'initRank 1/2 id[5]=42']);
    assert.deepEqual([opened.record.ranks, opened.byDevice.get(0)?.rank], [2, 1]);
  });

  it('has rank 0 write its id before joining, and remove the file once joined (every rank has read it then)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nccl-ranks-'));
    const path = join(dir, 'cuda-pipe-nccl-j9.id');
    const zero = fakes();
    const seen: number[] = [];
    const nccl = Object.assign(Object.create(null), zero.nccl, {
      initRank: (ranks: number, id: Uint8Array, rank: number) => {
        seen.push(...readFileSync(path).subarray(0, 3), id[5] as number);
        return BigInt(ranks + rank);
      },
    }) as Nccl;
    const opened = await openCommunicatorsOf(
      nccl,
      zero.rt,
      ddp,
      { identity: { rank: 0, size: 2, jobId: 'j9' }, dir },
      new Cleanup(),
    );
    assert.deepEqual(seen, [0, 1, 2, 5]);
    assert.equal(existsSync(path), false);
    assert.match(
      opened.notes.join('\n'),
      /rank 0 of 2 on device 0, the unique id shared through .*cuda-pipe-nccl-j9\.id/,
    );
  });

  it('refuses graph capture with an NCCL older than 2.9, a ring of device slots, and a launched rank whose plan spans several devices (exit 2)', async () => {
    const graphed = ddpPlan();
    const asGraph = {
      ...graphed,
      schedules: graphed.schedules.map((s) => (s.role.kind === 'overlapped' ? { ...s, issue: 'graph' as const } : s)),
    };
    await assert.rejects(
      openCommunicatorsOf(fakes(2804).nccl, fakes().rt, asGraph, alone, new Cleanup()),
      /NCCL 2\.8\.4 .* cannot be captured into a CUDA graph/,
    );
    const ring = { ...ddp, device: { ...ddp.device, ring: { slots: 2, slotElements: 4 } } };
    await assert.rejects(openCommunicatorsOf(fakes().nccl, fakes().rt, ring, alone, new Cleanup()), UsageError);
    await assert.rejects(
      openCommunicatorsOf(
        fakes().nccl,
        fakes().rt,
        { ...ddp, devices: [0, 1] },
        { identity: { rank: 0, size: 2, jobId: 'j7' } },
        new Cleanup(),
      ),
      (error: unknown) =>
        error instanceof UsageError &&
        /rank 0 of 2 under a launcher, and its plan spans devices 0, 1: a launched rank drives one GPU/.test(
          error.message,
        ),
    );
  });
});
