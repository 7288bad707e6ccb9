import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadNccl, UNIQUE_ID_BYTES } from '../../src/cuda/nccl.js';
import { openRuntime } from '../../src/cuda/runtime.js';
import { builtinConfigsDir, packageRoot } from '../../src/paths.js';
import { RunResultSchema, type RunResult } from '../../src/result/schema.js';
import { cliEntry, runCli } from '../helpers/cli.js';
import { gpuSkipReason } from '../helpers/gpu.js';

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
    collectives.every((o) => o.stream === 'comm' && o.collective === 'allreduce' && o.bytes === (32 / chunks) * 4 * 2 ** 22),
    JSON.stringify(collectives[0]),
  );
  // Each bucket's all-reduce starts after its gradients were computed, and its D2H after the all-reduce (and the checksum behind it).
  for (let chunk = 0; chunk < chunks; chunk++) {
    const of = (kind: string, kernel?: string) => rep.ops.find((o) => o.chunk === chunk && o.kind === kind && (kernel === undefined || o.kernel === kernel));
    const [backward, reduce, store] = [of('kernel', 'backward'), of('collective'), of('d2h')];
    assert.ok(backward && reduce && store, `chunk ${chunk}'s ops`);
    assert.ok(backward.endMs <= reduce.startMs + 1e-3 && reduce.endMs <= store.startMs + 1e-3, JSON.stringify([backward, reduce, store]));
  }
}

describe('NCCL collectives on a real device', () => {
  it('runs the ddp config on one GPU as a one-rank communicator: verifies, and every bucket is all-reduced on the communication stream', gpu, () => {
    const json = join(out, 'ddp.json');
    const { code, stdout, stderr } = runCli(['run', writeConfig('ddp.yaml', small('stream')), '--json', json], {}, { timeoutMs: 240_000 });
    assert.equal(code, 0, stderr);
    assert.match(stdout, /verification: passed/);
    const result = RunResultSchema.parse(JSON.parse(readFileSync(json, 'utf8')));
    assert.deepEqual(result.communicator, { library: 'nccl', version: result.communicator?.version, ranks: 1, localDevices: [0], nvls: 'off' });
    assert.match(result.communicator?.version ?? '', /^2\.\d+\.\d+$/);
    assert.ok(result.notes.some((n) => n.includes('NCCL_NVLS_ENABLE=0')));
    assert.ok(result.modes.some((m) => m.role.kind === 'stage' && m.role.stage === 'collective'));
    // One rank: the all-reduce is the identity, so serial's checksums equal the reference's exactly.
    assert.deepEqual(
      [result.verification.reduction?.status, result.verification.reduction?.ranks, result.verification.reduction?.exact, result.verification.reduction?.buffers],
      ['passed', 1, true, [{ name: 'check', elements: 32 }]],
    );
    bucketsOnTheCommStream(result, 8);
  });

  it('drives two GPUs from one process (--devices 0,1): every bucket all-reduced on both in one group, checksums twice the reference', twoGpus, () => {
    const json = join(out, 'ddp-devices.json');
    const { code, stderr } = runCli(['run', writeConfig('ddp-devices.yaml', small('stream')), '--devices', '0,1', '--json', json], {}, { timeoutMs: 300_000 });
    assert.equal(code, 0, stderr);
    const result = RunResultSchema.parse(JSON.parse(readFileSync(json, 'utf8')));
    assert.deepEqual([result.communicator?.ranks, result.communicator?.localDevices], [2, [0, 1]]);
    assert.equal(result.verification.status, 'passed');
    assert.deepEqual([result.verification.reduction?.status, result.verification.reduction?.ranks, result.verification.reduction?.exact], ['passed', 2, true]);
    const overlapped = result.modes.find((m) => m.role.kind === 'overlapped');
    assert.deepEqual(
      overlapped?.perDevice?.map((d) => d.device),
      [0, 1],
    );
    const reps = result.timeline?.reps.filter((r) => r.mode === overlapped?.id) ?? [];
    assert.deepEqual(
      reps.map((r) => [r.device, r.ops.filter((o) => o.kind === 'collective' && o.stream === `d${r.device}:comm`).length]),
      [
        [0, 8],
        [1, 8],
      ],
    );
  });

  it('captures the buckets and their all-reduces into a CUDA graph and replays it', gpu, () => {
    const json = join(out, 'ddp-graph.json');
    const { code, stderr } = runCli(['run', writeConfig('ddp-graph.yaml', small('graph')), '--json', json], {}, { timeoutMs: 240_000 });
    assert.equal(code, 0, stderr);
    const result = RunResultSchema.parse(JSON.parse(readFileSync(json, 'utf8')));
    assert.equal(result.verification.status, 'passed');
    assert.ok(result.modes.some((m) => m.role.kind === 'overlapped' && m.role.layout.issue === 'graph'));
  });

  it('joins a one-rank communicator through ncclCommInitRank with a unique id of 128 bytes', gpu, () => {
    const nccl = loadNccl();
    const id = nccl.uniqueId();
    assert.equal(id.length, UNIQUE_ID_BYTES);
    openRuntime().setDevice(0);
    const comm = nccl.initRank(1, id, 0);
    assert.equal(nccl.count(comm, 'test'), 1);
    assert.equal(nccl.asyncError(comm), 0);
    nccl.release(comm, 'test');
  });

  it('runs two ranks, one per GPU, as mpirun starts them: the unique id shared through a file', twoGpus, async () => {
    const run = (rank: number) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [...cliEntry(), 'run', writeConfig('ddp-ranks.yaml', small('stream')), '--json', join(out, `rank${rank}.json`), '--nccl-dir', out], {
          cwd: packageRoot(),
          env: {
            ...process.env,
            NO_COLOR: '1',
            OMPI_COMM_WORLD_RANK: `${rank}`,
            OMPI_COMM_WORLD_LOCAL_RANK: `${rank}`,
            OMPI_COMM_WORLD_SIZE: '2',
            OMPI_MCA_ess_base_jobid: `t${process.pid}`,
          },
        });
        let stderr = '';
        child.stderr.on('data', (d) => {
          stderr += d;
        });
        child.on('close', (code) => resolve({ code, stderr }));
      });
    const done = await Promise.all([run(0), run(1)]);
    for (const [rank, { code, stderr }] of done.entries()) {
      assert.equal(code, 0, `rank ${rank}: ${stderr}`);
      const result = RunResultSchema.parse(JSON.parse(readFileSync(join(out, `rank${rank}.json`), 'utf8')));
      assert.equal(result.communicator?.ranks, 2);
      assert.equal(result.verification.status, 'passed');
      assert.deepEqual([result.verification.reduction?.status, result.verification.reduction?.ranks], ['passed', 2]);
      bucketsOnTheCommStream(result, 8);
    }
  });

  it('sweeps the bucket count over two GPUs from one process (--devices 0,1): a best among the layouts raced, data-parallel, with a communicator of 2 ranks', {
    ...twoGpus,
    timeout: 240_000,
  }, () => {
    const json = join(out, 'ddp-sweep.json');
    const config = writeConfig('ddp-sweep.yaml', small('stream').replace('chunks: [1, 2, 4, 8, 16, 32]', 'chunks: [2, 4, 8]\n  maxTime: 0.3'));
    const { code, stdout, stderr } = runCli(['sweep', config, '--devices', '0,1', '--json', json], {}, { timeoutMs: 230_000 });
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
      reps.map((r) => [r.device, r.ops.filter((o) => o.kind === 'collective' && o.stream === `d${r.device}:comm`).length]),
      [
        [0, best.role.layout.chunks],
        [1, best.role.layout.chunks],
      ],
    );
    assert.match(stdout, /communication: NCCL [\d.]+, 2 ranks, this process drives GPUs 0, 1/);
  });
});
