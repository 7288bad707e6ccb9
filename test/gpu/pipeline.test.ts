import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { RunResultSchema } from '../../src/result/schema.js';
import { runCli } from '../helpers/gpu-cli.js';
import { gpuSkipReason } from '../helpers/gpu.js';

// Each test skips on its own, with the reason, so a machine without a GPU still counts them.
const gpu = { skip: gpuSkipReason() ?? false };
const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
const out = mkdtempSync(join(tmpdir(), 'cuda-pipe-gpu-'));

describe('cuda-pipe run on a real device', () => {
  it('runs the balanced pipeline small, verifies it, and writes a valid Result', gpu, () => {
    const json = join(out, 'balanced.json');
    const { code, stdout, stderr } = runCli(['run', '--reps', '3', '--warmup', '1', '--json', json]);
    assert.equal(code, 0, stderr);
    assert.match(stdout, /verification: passed/);
    assert.match(stdout, /speedup over serial: \d+\.\d\d×/);
    assert.match(
      stdout,
      /events cost the host \(median µs per op, 200 a batch\): record with timing \d+\.\d\d µs, record without timing \d+\.\d\d µs, cross-stream wait \d+\.\d\d µs/,
    );
    const result = RunResultSchema.parse(JSON.parse(readFileSync(json, 'utf8')));
    assert.equal(result.verification.status, 'passed');
    // Issuing an event costs the host a fraction of a µs to a few µs (GPU-FACTS.md); 50 µs would mean a broken count.
    const eventCosts = result.modes.flatMap((m) => (m.issueCost ? [m.issueCost] : []));
    assert.equal(eventCosts.length, 3);
    assert.ok(
      eventCosts.every((c) => c.opsPerRep === 200 && c.hostUsPerOp > 0 && c.hostUsPerOp < 50),
      JSON.stringify(eventCosts),
    );
    assert.deepEqual(
      result.modes.map((m) => m.role.kind),
      [
        'serial',
        'overlapped',
        'stage',
        'stage',
        'stage',
        'kernels-chunked',
        'link',
        'op-cost',
        'op-cost',
        'op-cost',
        'issue-cost',
        'issue-cost',
        'issue-cost',
      ],
    );
    assert.deepEqual(result.modes[1]?.role, {
      kind: 'overlapped',
      layout: { chunks: 16, streams: 4, order: 'depth-first', topology: 'chunk-per-stream' },
    });
    for (const mode of result.modes) {
      assert.equal(mode.samplesMs.length, 3);
      assert.ok(mode.samplesMs.every((ms) => ms > 0));
    }
    assert.ok(result.summary.speedup > 1, `overlap should beat serial: ${result.summary.speedup}`);
    const analysis = result.modes[1]?.analysis;
    // Small ops on the device cost a few µs each (GPU-FACTS.md: 1.8 to 2.6 µs a copy on an H200).
    const parts = analysis?.model?.parts;
    assert.ok(
      parts && parts.h2dOpMs > 0.0005 && parts.h2dOpMs < 0.02 && parts.launchOpMs > 0 && parts.launchOpMs < 0.02,
      JSON.stringify(parts),
    );
    assert.ok(analysis && analysis.efficiency <= 1.03, `efficiency ${analysis?.efficiency}`);
    assert.ok(analysis && analysis.bound.ms > 0 && analysis.bound.ms <= result.summary.serialMs);
    // The traced rep: every H2D, kernel and D2H of the 16 chunks, each inside the rep and after it was issued.
    const rep = result.timeline?.reps[0];
    assert.ok(rep, 'a traced rep of the overlapped mode');
    assert.equal(rep.ops.length, 48);
    assert.deepEqual([...new Set(rep.ops.map((o) => o.stream))].sort(), ['s0', 's1', 's2', 's3']);
    for (const op of rep.ops)
      assert.ok(op.startMs >= 0 && op.endMs > op.startMs && op.endMs <= rep.totalMs + 1e-3, JSON.stringify(op));
    const chunk0 = rep.ops.filter((o) => o.chunk === 0);
    assert.deepEqual(
      chunk0.map((o) => o.kind),
      ['h2d', 'kernel', 'd2h'],
    );
    assert.ok(
      (chunk0[0]?.endMs ?? 0) <= (chunk0[1]?.startMs ?? 0) && (chunk0[1]?.endMs ?? 0) <= (chunk0[2]?.startMs ?? 0),
      'one stream runs its chunk in order',
    );
    assert.ok(
      result.clocks.checked ? (result.clocks.maxMHz ?? 0) > 100 : result.clocks.note.startsWith('not checked:'),
      result.clocks.note,
    );
  });

  it('sweeps pipeline.connections 1 and 8, each value in a process of its own: CUDA took each value', gpu, () => {
    const json = join(out, 'connections.json');
    const { code, stdout, stderr } = runCli(
      [
        'sweep',
        '--chunks',
        '8',
        '--streams',
        '4',
        '--set',
        'pipeline.connections=1,8',
        '--max-time',
        '5',
        '--json',
        json,
      ],
      {},
      { timeoutMs: 200_000 },
    );
    assert.equal(code, 0, stderr);
    assert.match(stderr, /pipeline\.connections takes 2 values, and CUDA reads CUDA_DEVICE_MAX_CONNECTIONS once/);
    const results = RunResultSchema.array().parse(JSON.parse(readFileSync(json, 'utf8')));
    assert.deepEqual(
      results.map((r) => [r.sweep?.settings, r.pipeline.connections, r.verification.status]),
      [
        [{ 'pipeline.connections': 1 }, 1, 'passed'],
        [{ 'pipeline.connections': 8 }, 8, 'passed'],
      ],
    );
    for (const result of results) {
      assert.deepEqual(result.sweep?.axes.at(-1), { name: 'pipeline.connections', values: [1, 8] });
      assert.match(result.notes.join('\n'), /this setting ran in a cuda-pipe process of its own/);
    }
    assert.match(stdout, /fastest of 2 settings: pipeline\.connections = (1|8)/);
  });

  it('--gate holds the streams until each rep is issued, and never times out on a normal config', gpu, () => {
    const json = join(out, 'gated.json');
    const { code, stdout, stderr } = runCli(['run', '--gate', '--reps', '5', '--warmup', '1', '--json', json]);
    assert.equal(code, 0, stderr);
    assert.match(stdout, /GPU time only \(--gate held the streams until each rep was issued\)/);
    const result = RunResultSchema.parse(JSON.parse(readFileSync(json, 'utf8')));
    assert.equal(result.policy.gate, true);
    assert.deepEqual(
      result.modes.map((m) => m.gateTimeouts),
      result.modes.map(() => 0),
    );
    assert.equal(result.verification.status, 'passed');
  });

  it('stops by the noise rule and says why, and writes Markdown', gpu, () => {
    const { code, stdout, stderr } = runCli([
      'run',
      join('configs', 'async-overlap.yaml'),
      '--max-time',
      '1',
      '--md',
      '-',
    ]);
    assert.equal(code, 0, stderr);
    assert.match(stdout, /^### cuda-pipe · async-overlap on /);
    assert.match(stdout, /\| overlapped \(breadth-first\) \|/);
    assert.match(
      stderr,
      /stopped because (the noise fell under the target|the noise stopped changing|the time budget ran out)/,
    );
  });

  it(
    'verifies three shipped configs: async-overlap (inout, two orders), multi-kernel (scratch) and copy-bound',
    gpu,
    () => {
      for (const name of ['async-overlap', 'multi-kernel', 'copy-bound']) {
        const { code, stdout, stderr } = runCli([
          'run',
          join('configs', `${name}.yaml`),
          '--reps',
          '2',
          '--warmup',
          '1',
        ]);
        assert.equal(code, 0, `${name}: ${stderr}`);
        assert.match(stdout, /verification: passed/, name);
      }
    },
  );

  it('fails with exit 1 when a racy kernel makes overlapped and serial outputs differ', gpu, () => {
    const { code, stdout } = runCli(['run', join(fixtures, 'racy.yaml')]);
    assert.equal(code, 1, stdout);
    assert.match(
      stdout,
      /verification: FAILED\n {2}output "y" of overlapped: first difference at element \d+: serial \S+, overlapped \S+/,
    );
  });

  it('names the kernel and chunk of an illegal address and exits 4', gpu, () => {
    const { code, stderr } = runCli(['run', join(fixtures, 'fault.yaml')]);
    assert.equal(code, 4, stderr);
    assert.match(stderr, /cudaErrorIllegalAddress \(700\).* kernel faulty \(fault_after_first_chunk\), chunk 1 of 4/);
    assert.doesNotMatch(stderr, /\n\s+at /);
  });

  it(
    "says how much memory was asked for and how much there is: the host's first (exit 2), then the device's (exit 4)",
    gpu,
    () => {
      // 1 TiB of buffers: more than the host holds on the GPU hosts here, so the config is refused before any
      // allocation; where the host could hold them, the device's free memory is what refuses them.
      const { code, stderr } = runCli(['run', join(fixtures, 'huge.yaml')]);
      if (totalmem() < 2 ** 40) {
        assert.equal(code, 2, stderr);
        assert.match(
          stderr,
          /the buffers need 1 TiB of host memory \(x 512 GiB, y 512 GiB\), more than this machine's [\d.]+ GiB/,
        );
      } else {
        assert.equal(code, 4, stderr);
        assert.match(stderr, /The buffers need 1 TiB of device memory, but device 0 has [\d.]+ GiB free/);
      }
    },
  );

  it('runs and verifies with either way of waiting for a rep, the thread wait and polling', gpu, () => {
    for (const wait of ['thread', 'poll']) {
      const { code, stdout, stderr } = runCli(['run', '--reps', '3', '--warmup', '1', '--wait', wait, '--no-tracing']);
      assert.equal(code, 0, `${wait}: ${stderr}`);
      assert.match(stdout, /verification: passed/, wait);
    }
  });

  it('probe --bandwidth measures pinned and pageable copies and the bidirectional rate', gpu, () => {
    const { code, stdout, stderr } = runCli([
      'probe',
      '--device',
      '0',
      '--bandwidth',
      '--size',
      '64MiB',
      '--reps',
      '5',
      '--json',
      '-',
    ]);
    assert.equal(code, 0, stderr);
    const doc = JSON.parse(stdout);
    const bw = doc.devices[0].bandwidth as Array<{ direction: string; hostMemory: string; gbPerSecond: number }>;
    assert.deepEqual(
      bw.map((b) => `${b.hostMemory} ${b.direction}`),
      ['pinned h2d', 'pinned d2h', 'pinned bidirectional', 'pageable h2d', 'pageable d2h'],
    );
    for (const b of bw) assert.ok(b.gbPerSecond > 1 && b.gbPerSecond < 1000, `${b.direction}: ${b.gbPerSecond}`);
  });
});
