import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { AbResultSchema } from '../../src/result/ab.js';
import { runCli } from '../helpers/gpu-cli.js';
import { gpuSkipReason } from '../helpers/gpu.js';

// Each test skips on its own, with the reason, so a machine without a GPU still counts them.
const gpu = { skip: gpuSkipReason() ?? false };
const out = mkdtempSync(join(tmpdir(), 'cuda-pipe-gpu-ab-'));

/** configs/compute-bound.yaml at 16 MiB: the kernel still dominates the copies, and a rep takes a few ms. */
function computeBound(name: string, iterations: number): string {
  const path = join(out, `${name}.yaml`);
  writeFileSync(
    path,
    `name: compute-bound
hostMemory: pinned
buffers:
  input: { type: float32, size: 16MiB, role: in, init: { kind: random, seed: 1 } }
  output: { type: float32, size: 16MiB, role: out }
kernels:
  - { name: fma, source: fma_loop.cu, entry: fma_loop, args: [{ buffer: input }, { buffer: output }, { chunk: elements }, { int32: ${iterations} }] }
pipeline: { chunks: 16, streams: 4 }
`,
  );
  return path;
}

const verdicts = (json: string) =>
  Object.fromEntries(AbResultSchema.parse(JSON.parse(readFileSync(json, 'utf8'))).modes.map((m) => [m.id, m.verdict]));

describe('cuda-pipe ab on a real device', () => {
  it('calls a config against itself the same in every mode it interleaves, and exits 0', gpu, () => {
    const json = join(out, 'same.json');
    const config = computeBound('a', 12000);
    const { code, stdout, stderr } = runCli(['ab', config, config, '--json', json]);
    assert.equal(code, 0, stdout + stderr);
    const result = AbResultSchema.parse(JSON.parse(readFileSync(json, 'utf8')));
    assert.deepEqual(
      result.modes.map((m) => m.role.kind),
      ['serial', 'overlapped', 'stage', 'stage', 'stage', 'link'],
    );
    assert.ok(
      result.modes.every((m) => m.verdict === 'same' && m.aMs.length >= 10 && m.aMs.length === m.bMs.length),
      JSON.stringify(result.modes.map((m) => [m.id, m.verdict, m.change])),
    );
    assert.deepEqual([result.a.verification.status, result.b.verification.status], ['passed', 'passed']);
    assert.deepEqual([result.version, result.verdict, 'band' in result.rule && result.rule.band], [2, 'same', 0.005]);
    assert.match(stdout, /^same \(no regression\): 0 slower, 0 faster, 6 same, 0 noisy/);
  });

  it('calls a 10% heavier kernel slower where the kernel runs, the copies alone the same, and exits 1', gpu, () => {
    const json = join(out, 'heavier.json');
    const { code, stdout, stderr } = runCli([
      'ab',
      computeBound('base', 12000),
      computeBound('heavier', 13200),
      '--json',
      json,
      '--md',
      join(out, 'heavier.md'),
    ]);
    assert.equal(code, 1, stdout + stderr);
    const byKind = verdicts(json);
    const result = AbResultSchema.parse(JSON.parse(readFileSync(json, 'utf8')));
    const of = (kind: string, stage?: string) =>
      result.modes.find(
        (m) => m.role.kind === kind && (stage === undefined || (m.role.kind === 'stage' && m.role.stage === stage)),
      );
    assert.deepEqual(
      [of('serial')?.verdict, of('overlapped')?.verdict, of('stage', 'kernel')?.verdict],
      ['slower', 'slower', 'slower'],
      JSON.stringify(byKind),
    );
    assert.deepEqual(
      [of('stage', 'h2d')?.verdict, of('stage', 'd2h')?.verdict],
      ['same', 'same'],
      JSON.stringify(byKind),
    );
    assert.equal(result.verdict, 'slower');
    const kernel = of('stage', 'kernel');
    assert.ok(
      kernel && kernel.change > 0.07 && kernel.change < 0.13,
      `the kernel alone should be about 10% slower: ${kernel?.change}`,
    );
  });
});
