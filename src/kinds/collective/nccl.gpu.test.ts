import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadNccl, NCCL_IN_PROGRESS, UNIQUE_ID_BYTES } from './nccl.js';
import { openRuntime } from '../../cuda/runtime.js';
import { builtinConfigsDir, packageRoot } from '../../paths.js';
import { RunResultSchema, type RunResult } from '../../result/schema.js';
import { cliEntry } from '../../../test/helpers/cli.js';
import { runCli } from '../../../test/helpers/gpu-cli.js';
import { gpuSkipReason } from '../../../test/helpers/gpu.js';

// The NCCL path on real devices: one process as a one-rank communicator (the path every GPU host can run), the
// unique id handed through ncclCommInitRank, and with two GPUs or more two ranks started as mpirun starts them.

const noGpu = gpuSkipReason();
const gpu = { skip: noGpu ?? false };
const deviceCount = (): number => {
  try {
    return openRuntime().deviceCount();
  } catch {
    return 0;
  }
};
const twoGpus = { skip: noGpu ?? (deviceCount() < 2 ? `needs two GPUs, this machine has ${deviceCount()}` : false) };
const out = mkdtempSync(join(tmpdir(), 'cuda-pipe-nccl-'));
const ddp = join(builtinConfigsDir(), 'ddp.yaml');
// Fewer layers and iterations than the shipped config: the same code path in a fraction of its time.
const small = (mode: 'stream' | 'graph') =>
  readFileSync(ddp, 'utf8')
    .replace('{ int32: 600 }', '{ int32: 50 }')
    .replace('chunks: 8', `chunks: 8\n  mode: ${mode}`)
    .replace(/maxTime: 2/, 'maxTime: 0.3');

function writeConfig(name: string, text: string): string {
  const path = join(out, name);
  writeFileSync(path, text);
  return path;
}

function bucketsOnTheCommStream(result: RunResult, chunks: number): void {
  const overlapped = result.modes.find((m) => m.role.kind === 'overlapped');
  const rep = result.timeline?.reps.find((r) => r.mode === overlapped?.id);
  assert.ok(rep, 'a traced rep of the overlapped mode');
  const collectives = rep.ops.filter((o) => o.kind === 'collective');
  assert.equal(collectives.length, chunks);
  assert.ok(
    collectives.every(
      (o) => o.stream === 'comm' && o.collective === 'allreduce' && o.bytes === (32 / chunks) * 4 * 2 ** 22,
    ),
    JSON.stringify(collectives[0]),
  );
  // Each bucket's all-reduce starts after its gradients were computed, and its D2H after the all-reduce (and the
  // checksum behind it).
  for (let chunk = 0; chunk < chunks; chunk++) {
    const of = (kind: string, kernel?: string) =>
      rep.ops.find((o) => o.chunk === chunk && o.kind === kind && (kernel === undefined || o.kernel === kernel));
    const [backward, reduce, store] = [of('kernel', 'backward'), of('collective'), of('d2h')];
    assert.ok(backward && reduce && store, `chunk ${chunk}'s ops`);
    assert.ok(
      backward.endMs <= reduce.startMs + 1e-3 && reduce.endMs <= store.startMs + 1e-3,
      JSON.stringify([backward, reduce, store]),
    );
  }
}

describe('NCCL collectives on a real device', () => {
  it(
    'runs the ddp config on one GPU as a one-rank communicator: verifies, and every bucket is all-reduced on the communication stream',
    gpu,
    () => {
      const json = join(out, 'ddp.json');
      const { code, stdout, stderr } = runCli(
        ['run', writeConfig('ddp.yaml', small('stream')), '--json', json],
        {},
        { timeoutMs: 240_000 },
      );
      assert.equal(code, 0, stderr);
      assert.match(stdout, /verification: passed/);
      const result = RunResultSchema.parse(JSON.parse(readFileSync(json, 'utf8')));
      assert.deepEqual(result.communicator, {
        library: 'nccl',
        version: result.communicator?.version,
        ranks: 1,
        localDevices: [0],
        nvls: 'off',
      });
      assert.match(result.communicator?.version ?? '', /^2\.\d+\.\d+$/);
      assert.ok(result.notes.some((n) => n.includes('NCCL_NVLS_ENABLE=0')));
      assert.ok(result.modes.some((m) => m.role.kind === 'stage' && m.role.stage === 'collective'));
      // One rank: the all-reduce is the identity, so serial's checksums equal the reference's exactly.
      assert.deepEqual(
        [
          result.verification.reduction?.status,
          result.verification.reduction?.ranks,
          result.verification.reduction?.exact,
          result.verification.reduction?.buffers,
        ],
        ['passed', 1, true, [{ name: 'check', elements: 32 }]],
      );
      bucketsOnTheCommStream(result, 8);
    },
  );

  it(
    'races collective.ctas in a sweep over every GPU: each setting makes its communicators with its CTAs, and verifies',
    gpu,
    () => {
      const json = join(out, 'ddp-ctas.json');
      const { code, stdout, stderr } = runCli(
        [
          'sweep',
          writeConfig('ddp-ctas.yaml', small('stream')),
          '--set',
          'kernels[1].collective.ctas=2,16',
          '--chunks',
          '4,8',
          '--devices',
          'all',
          '--max-time',
          '10',
          '--json',
          json,
        ],
        {},
        { timeoutMs: 280_000 },
      );
      assert.equal(code, 0, stderr);
      const results = RunResultSchema.array().parse(JSON.parse(readFileSync(json, 'utf8')));
      const ranks = deviceCount();
      assert.deepEqual(
        results.map((r) => [r.sweep?.settings, r.communicator?.ctas, r.communicator?.ranks, r.verification.status]),
        [
          [{ 'kernels[1].collective.ctas': 2 }, 2, ranks, 'passed'],
          [{ 'kernels[1].collective.ctas': 16 }, 16, ranks, 'passed'],
        ],
      );
      assert.ok(
        results.every((r) => r.notes.some((n) => /ncclCommInitRankConfig in one group/.test(n))),
        results[0]?.notes.join('\n'),
      );
      assert.match(stdout, /fastest of 2 settings: kernels\[1\]\.collective\.ctas = (2|16)/);
    },
  );

  it(
    'drives two GPUs from one process (--devices 0,1): every bucket all-reduced on both in one group, checksums twice the reference',
    twoGpus,
    () => {
      const json = join(out, 'ddp-devices.json');
      const { code, stderr } = runCli(
        ['run', writeConfig('ddp-devices.yaml', small('stream')), '--devices', '0,1', '--json', json],
        {},
        { timeoutMs: 300_000 },
      );
      assert.equal(code, 0, stderr);
      const result = RunResultSchema.parse(JSON.parse(readFileSync(json, 'utf8')));
      assert.deepEqual([result.communicator?.ranks, result.communicator?.localDevices], [2, [0, 1]]);
      assert.equal(result.verification.status, 'passed');
      assert.deepEqual(
        [
          result.verification.reduction?.status,
          result.verification.reduction?.ranks,
          result.verification.reduction?.exact,
        ],
        ['passed', 2, true],
      );
      const overlapped = result.modes.find((m) => m.role.kind === 'overlapped');
      assert.deepEqual(
        overlapped?.perDevice?.map((d) => d.device),
        [0, 1],
      );
      const reps = result.timeline?.reps.filter((r) => r.mode === overlapped?.id) ?? [];
      assert.deepEqual(
        reps.map((r) => [
          r.device,
          r.ops.filter((o) => o.kind === 'collective' && o.stream === `d${r.device}:comm`).length,
        ]),
        [
          [0, 8],
          [1, 8],
        ],
      );
    },
  );

  it('captures the buckets and their all-reduces into a CUDA graph and replays it', gpu, () => {
    const json = join(out, 'ddp-graph.json');
    const { code, stderr } = runCli(
      ['run', writeConfig('ddp-graph.yaml', small('graph')), '--json', json],
      {},
      { timeoutMs: 240_000 },
    );
    assert.equal(code, 0, stderr);
    const result = RunResultSchema.parse(JSON.parse(readFileSync(json, 'utf8')));
    assert.equal(result.verification.status, 'passed');
    assert.ok(result.modes.some((m) => m.role.kind === 'overlapped' && m.role.layout.issue === 'graph'));
  });

  it('joins a one-rank nonblocking communicator with a unique id of 128 bytes, polled until NCCL made it', {
    ...gpu,
    timeout: 60_000,
  }, async () => {
    const nccl = loadNccl();
    const id = nccl.uniqueId();
    assert.equal(id.length, UNIQUE_ID_BYTES);
    assert.equal(nccl.configurable, true, 'NCCL 2.14 or newer on the GPU hosts');
    openRuntime().setDevice(0);
    const comm = nccl.initRank(1, id, 0, 'test');
    const until = performance.now() + 30_000;
    while (nccl.asyncError(comm) === NCCL_IN_PROGRESS && performance.now() < until)
      await new Promise((resolve) => setTimeout(resolve, 1));
    assert.equal(nccl.asyncError(comm), 0);
    assert.equal(nccl.count(comm, 'test'), 1);
    nccl.release(comm, 'test');
  });

  it('runs two ranks, one per GPU, as mpirun starts them, with the defaults (tracing, adaptive reps): the same rep counts on both', {
    ...twoGpus,
    timeout: 300_000,
  }, async () => {
    const config = writeConfig('ddp-ranks.yaml', small('stream'));
    const done = await Promise.all(
      [0, 1].map((rank) =>
        runRank(rank, 2, ['run', config, '--json', join(out, `rank${rank}.json`), '--nccl-dir', out], 240_000),
      ),
    );
    const counts = done.map((_, rank) => {
      const result = RunResultSchema.parse(JSON.parse(readFileSync(join(out, `rank${rank}.json`), 'utf8')));
      return result.modes.map((m) => `${m.id} ${m.samplesMs.length}`);
    });
    assert.deepEqual(counts[0], counts[1], 'every mode took the same reps on both ranks');
    for (const [rank, { code, stderr }] of done.entries()) {
      assert.equal(code, 0, `rank ${rank}: ${stderr}`);
      const result = RunResultSchema.parse(JSON.parse(readFileSync(join(out, `rank${rank}.json`), 'utf8')));
      assert.equal(result.communicator?.ranks, 2);
      assert.equal(result.verification.status, 'passed');
      assert.deepEqual([result.verification.reduction?.status, result.verification.reduction?.ranks], ['passed', 2]);
      bucketsOnTheCommStream(result, 8);
    }
  });

  it('ends a rank whose peer never comes at its deadline with exit 4, saying what it waited for', {
    ...gpu,
    timeout: 120_000,
  }, async () => {
    const started = performance.now();
    const { code, stderr } = await runRank(
      0,
      2,
      ['run', writeConfig('ddp-alone.yaml', small('stream')), '--timeout', '5', '--nccl-dir', out],
      60_000,
      'alone',
    );
    assert.equal(code, 4, stderr);
    assert.match(stderr, /Rank 0 of 2 \(device 0\) joining the NCCL communicator .* waited for the other ranks/);
    assert.ok(performance.now() - started < 30_000, `${((performance.now() - started) / 1000).toFixed(1)} s`);
  });

  it('ends a rank waiting for its peer within 2 s of SIGTERM (exit 130)', { ...gpu, timeout: 120_000 }, async () => {
    let signalledAt = 0;
    const { code, stderr } = await runRank(
      0,
      2,
      ['run', writeConfig('ddp-term.yaml', small('stream')), '--nccl-dir', out],
      60_000,
      'term',
      (child) => {
        setTimeout(() => {
          signalledAt = performance.now();
          child.kill('SIGTERM');
        }, 8_000);
      },
    );
    const after = performance.now() - signalledAt;
    assert.equal(code, 130, stderr);
    assert.ok(signalledAt > 0 && after < 2_000, `ended ${(after / 1000).toFixed(2)} s after SIGTERM`);
  });

  for (const [op, name] of [
    ['reducescatter', 'reduce-scatter'],
    ['allgather', 'all-gather'],
  ] as const) {
    it(`runs a ${name} over two GPUs from one process: verifies, and reports its bus bandwidth`, {
      ...twoGpus,
      timeout: 300_000,
    }, () => {
      const json = join(out, `${op}.json`);
      const text = small('stream').replace(
        'collective: { op: allreduce, buffer: grads }',
        `collective: { op: ${op}, buffer: grads }`,
      );
      const { code, stdout, stderr } = runCli(
        ['run', writeConfig(`${op}.yaml`, text), '--devices', '0,1', '--json', json],
        {},
        { timeoutMs: 240_000 },
      );
      assert.equal(code, 0, `${stderr}\n${stdout}`);
      const result = RunResultSchema.parse(JSON.parse(readFileSync(json, 'utf8')));
      assert.equal(result.verification.status, 'passed');
      const alone = result.modes.find((m) => m.collective?.collective === op && m.role.kind === 'stage');
      assert.deepEqual([alone?.collective?.calls, alone?.collective?.bytes], [8, 2 ** 29]);
      assert.match(stdout, new RegExp(`${name} alone: 8 calls of 64 MiB per rank, .* busbw [0-9.]+ GB/s`));
    });
  }

  it('sweeps the bucket count over two GPUs from one process (--devices 0,1): a best among the layouts raced, data-parallel, with a communicator of 2 ranks', {
    ...twoGpus,
    timeout: 240_000,
  }, () => {
    const json = join(out, 'ddp-sweep.json');
    const config = writeConfig(
      'ddp-sweep.yaml',
      small('stream').replace('chunks: [1, 2, 4, 8, 16, 32]', 'chunks: [2, 4, 8]\n  maxTime: 0.3'),
    );
    const { code, stdout, stderr } = runCli(
      ['sweep', config, '--devices', '0,1', '--json', json],
      {},
      { timeoutMs: 230_000 },
    );
    assert.equal(code, 0, stderr);
    const result = RunResultSchema.parse(JSON.parse(readFileSync(json, 'utf8')));
    assert.deepEqual(
      result.sweep?.points.map((p) => p.chunks),
      [2, 4, 8],
    );
    const best = result.modes.find((m) => m.id === result.sweep?.best.mode);
    assert.ok(best?.role.kind === 'overlapped' && [2, 4, 8].includes(best.role.layout.chunks), result.sweep?.best.mode);
    assert.deepEqual([result.communicator?.ranks, result.communicator?.localDevices], [2, [0, 1]]);
    assert.deepEqual([result.verification.status, result.verification.reduction?.ranks], ['passed', 2]);
    assert.deepEqual(
      best.perDevice?.map((d) => d.device),
      [0, 1],
    );
    // The traced rep of the best layout is data-parallel too: each device's buckets all-reduced on its own comm stream.
    const reps = result.timeline?.reps.filter((r) => r.mode === best.id) ?? [];
    assert.deepEqual(
      reps.map((r) => [
        r.device,
        r.ops.filter((o) => o.kind === 'collective' && o.stream === `d${r.device}:comm`).length,
      ]),
      [
        [0, best.role.layout.chunks],
        [1, best.role.layout.chunks],
      ],
    );
    assert.match(stdout, /communication: NCCL [\d.]+, 2 ranks, this process drives GPUs 0, 1/);
  });
});

/**
 * One rank of a launch as mpirun starts it (OpenMPI's variables), killed with SIGKILL after `deadlineMs` so that a
 * rank that hangs fails the test, saying so, instead of stalling the suite. `job` names the launch's id file.
 */
function runRank(
  rank: number,
  ranks: number,
  args: readonly string[],
  deadlineMs: number,
  job = `t${process.pid}`,
  started?: (child: ReturnType<typeof spawn>) => void,
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...cliEntry(), ...args], {
      cwd: packageRoot(),
      env: {
        ...process.env,
        NO_COLOR: '1',
        OMPI_COMM_WORLD_RANK: `${rank}`,
        OMPI_COMM_WORLD_LOCAL_RANK: `${rank}`,
        OMPI_COMM_WORLD_SIZE: `${ranks}`,
        OMPI_MCA_ess_base_jobid: `${job}-${process.pid}`,
      },
    });
    let stderr = '';
    child.stderr?.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => {
      stderr += `\n[test] rank ${rank} had not ended after ${deadlineMs / 1000} s and was killed`;
      child.kill('SIGKILL');
    }, deadlineMs);
    started?.(child);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}
