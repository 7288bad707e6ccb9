import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { gpuSkipReason } from '../helpers/gpu.js';

// Apart from ab.test.ts because the gate script starts bin/cuda-pipe, the bundled CLI, which Stryker's sandbox does
// not build: ab.test.ts's statistics and views stay in the mutation run's test list, these stay out of it.
describe("the perf gate's A/B mode (scripts/perf-regression --ab), without a GPU", () => {
  const noGpu = {
    skip: gpuSkipReason() === null ? 'a GPU is here: these expect cuda-pipe ab to stop at the missing driver' : false,
  };
  const BASE_KERNEL =
    '// the base revision\'s kernel\nextern "C" __global__ void fma_loop(const float *in, float *out, unsigned long long n, int iterations) {}\n';
  const gate = (args: string[]) => spawnSync('bash', ['scripts/perf-regression', ...args], { encoding: 'utf8' });

  it("stages the base revision's configs with its own kernels beside them, so A runs the base kernels", noGpu, () => {
    const base = mkdtempSync(join(tmpdir(), 'cuda-pipe-base-'));
    const out = mkdtempSync(join(tmpdir(), 'cuda-pipe-gate-'));
    mkdirSync(join(base, 'configs'));
    mkdirSync(join(base, 'kernels'));
    writeFileSync(
      join(base, 'configs', 'compute-bound.yaml'),
      readFileSync(join('configs', 'compute-bound.yaml'), 'utf8'),
    );
    writeFileSync(join(base, 'kernels', 'fma_loop.cu'), BASE_KERNEL);
    const run = gate([
      '--ab',
      base,
      '--out',
      out,
      '--md',
      join(out, 'ab.md'),
      'configs/compute-bound.yaml',
      'configs/balanced.yaml',
    ]);
    assert.equal(run.status, 3, run.stderr);
    assert.equal(readFileSync(join(out, 'ab', 'base', 'fma_loop.cu'), 'utf8'), BASE_KERNEL);
    assert.equal(
      readFileSync(join(out, 'ab', 'head', 'fma_loop.cu'), 'utf8'),
      readFileSync(join('kernels', 'fma_loop.cu'), 'utf8'),
    );
    assert.ok(existsSync(join(out, 'ab', 'head', 'compute-bound.yaml')));
    assert.match(run.stderr, /configs\/balanced\.yaml is new since the base revision: nothing to gate it against/);
    assert.match(
      readFileSync(join(out, 'ab.md'), 'utf8'),
      /configs\/balanced\.yaml: new since the base revision, not gated/,
    );
  });

  it('exits 2 when the base checkout is missing', () => {
    const run = gate([
      '--ab',
      join(tmpdir(), 'no-such-base-checkout'),
      '--out',
      mkdtempSync(join(tmpdir(), 'cuda-pipe-gate-')),
    ]);
    assert.equal(run.status, 2);
    assert.match(run.stderr, /--ab .*no-such-base-checkout: no such folder/);
  });
});
