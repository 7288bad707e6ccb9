import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { applyConnections, checkOneConnections, planConfig } from '../../src/api/run.js';
import { configHash } from '../../src/config/hash.js';
import { loadConfigFile } from '../../src/config/load.js';
import { packageRoot } from '../../src/paths.js';
import { renderRunTable } from '../../src/report/exporters/table.js';
import { makeStyle } from '../../src/report/style.js';
import { loadResults } from '../../src/result/load.js';
import { runCli } from '../helpers/cli.js';
import { usageRejection } from '../helpers/rejection.js';

// pipeline.connections is CUDA_DEVICE_MAX_CONNECTIONS, which the driver reads once: it measured 16 batches over 4
// streams of inference-matmul.yaml at 1.360 ms with one hardware queue and 1.448 ms with CUDA's 8
// (docs/measurements/2026-11-26-h100-matmul-3/connections/).
const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-connections-'));
// inference-matmul.yaml gives pipeline.connections; each test writes its own value there.
const matmul = readFileSync(join(packageRoot(), 'configs', 'inference-matmul.yaml'), 'utf8');
const withConnections = (value: string) => {
  const path = join(dir, `connections-${value}.yaml`);
  writeFileSync(path, matmul.replace(/^ {2}connections: \d+$/m, `  connections: ${value}`));
  return path;
};
const balanced = () => loadConfigFile(join(packageRoot(), 'configs', 'balanced.yaml'));

describe('pipeline.connections', () => {
  it('sets CUDA_DEVICE_MAX_CONNECTIONS before CUDA starts, and leaves the environment alone when the config gives none', () => {
    const env: NodeJS.ProcessEnv = { CUDA_DEVICE_MAX_CONNECTIONS: '8' };
    applyConnections(loadConfigFile(withConnections('1')), env, false);
    assert.equal(env.CUDA_DEVICE_MAX_CONNECTIONS, '1');
    const untouched: NodeJS.ProcessEnv = { CUDA_DEVICE_MAX_CONNECTIONS: '4' };
    applyConnections(balanced(), untouched, false);
    applyConnections(balanced(), untouched, true);
    assert.deepEqual(untouched, { CUDA_DEVICE_MAX_CONNECTIONS: '4' });
  });

  it('refuses a value CUDA would not see, once libcudart is loaded with another, and accepts the one it has', () => {
    const env: NodeJS.ProcessEnv = { CUDA_DEVICE_MAX_CONNECTIONS: '8' };
    const error = usageRejection(() => applyConnections(loadConfigFile(withConnections('2')), env, true));
    assert.match(
      error.message,
      /connections 2 cannot take effect: CUDA already started in this process with CUDA_DEVICE_MAX_CONNECTIONS=8, and reads it once\.$/,
    );
    assert.equal(env.CUDA_DEVICE_MAX_CONNECTIONS, '8');
    applyConnections(loadConfigFile(withConnections('8')), env, true);
    const unset: NodeJS.ProcessEnv = {};
    assert.match(
      usageRejection(() => applyConnections(loadConfigFile(withConnections('1')), unset, true)).message,
      /CUDA_DEVICE_MAX_CONNECTIONS=unset \(8\)/,
    );
  });

  it('refuses configs measured in one process that ask for different values', () => {
    const error = usageRejection(() =>
      checkOneConnections([loadConfigFile(withConnections('1')), balanced()], 'A and B', {}),
    );
    assert.match(
      error.message,
      /^A and B ask for pipeline\.connections 1 and unset \(CUDA's 8\), but one process has one CUDA_DEVICE_MAX_CONNECTIONS/,
    );
    const inherited = usageRejection(() =>
      checkOneConnections([loadConfigFile(withConnections('1')), balanced()], 'A and B', {
        CUDA_DEVICE_MAX_CONNECTIONS: '4',
      }),
    );
    assert.match(
      inherited.message,
      /^A and B ask for pipeline\.connections 1 and unset \(CUDA_DEVICE_MAX_CONNECTIONS=4\)/,
    );
    checkOneConnections([loadConfigFile(withConnections('2')), loadConfigFile(withConnections('2'))], 'A and B', {});
  });

  it("takes a config that leaves it unset as the environment's value, which agrees with a config that sets the same", () => {
    checkOneConnections([loadConfigFile(withConnections('1')), balanced()], 'A and B', {
      CUDA_DEVICE_MAX_CONNECTIONS: '1',
    });
    checkOneConnections([loadConfigFile(withConnections('8')), balanced()], 'A and B', {});
    // `ab` got as far as looking for a GPU, where it had refused the pair before it.
    const run = runCli(
      [
        'ab',
        withConnections('1'),
        join(packageRoot(), 'configs', 'inference-matmul.yaml').replace('inference-matmul', 'balanced'),
      ],
      {
        CUDA_DEVICE_MAX_CONNECTIONS: '1',
      },
    );
    assert.doesNotMatch(run.stderr, /ask for pipeline\.connections/);
    assert.notEqual(run.code, 2, run.stderr);
  });

  it('is recorded in the plan, which the Result copies, and named by the dry run', () => {
    const { plan } = planConfig(loadConfigFile(withConnections('1')), { gate: false, devices: null });
    assert.equal(plan.pipeline.connections, 1);
    assert.equal(planConfig(balanced(), { gate: false, devices: null }).plan.pipeline.connections, undefined);
    const run = runCli(['run', withConnections('1'), '--dry-run']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(
      run.stdout,
      /^ {2}hardware queues: 1 \(pipeline\.connections: CUDA_DEVICE_MAX_CONNECTIONS=1 for this process\)$/m,
    );
  });

  // A config without it keeps the hash it had: toolbox-results.test.ts pins balanced.yaml's and async-overlap.yaml's.
  it('tells configs apart in their hash, which results are paired by', () => {
    const hash = (path: string) => configHash(loadConfigFile(path).config);
    const without = join(dir, 'without.yaml');
    writeFileSync(without, matmul.replace(/^ {2}connections: \d+\n/m, ''));
    assert.doesNotMatch(readFileSync(without, 'utf8'), /connections:/);
    const hashes = [hash(without), hash(withConnections('1')), hash(withConnections('8'))];
    assert.equal(new Set(hashes).size, 3, hashes.join(' '));
  });

  it('accepts 1 to 32 queues, as CUDA does', () => {
    for (const value of ['0', '33', '1.5']) {
      const run = runCli(['run', withConnections(value), '--dry-run']);
      assert.equal(run.code, 2, `${value}: ${run.stdout}`);
      assert.match(run.stderr, /pipeline\.connections/, value);
    }
  });

  it('is a sweep axis whose values each run in a cuda-pipe process of their own: the dry run plans every setting', () => {
    const run = runCli([
      'sweep',
      join(packageRoot(), 'configs', 'balanced.yaml'),
      '--dry-run',
      '--chunks',
      '4',
      '--set',
      'pipeline.connections=1,8',
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^Setting 1 of 2: pipeline\.connections=1 on device 0/m);
    assert.match(run.stdout, /^Setting 2 of 2: pipeline\.connections=8 on device 0/m);
    // The line as written, its wrapped lines joined again.
    assert.match(
      run.stdout.replace(/\n {2}/g, ' '),
      /^pipeline\.connections takes 2 values, and CUDA reads CUDA_DEVICE_MAX_CONNECTIONS once a process: each runs in a cuda-pipe process of its own, one after another: 1 \(1 setting\), 8 \(1 setting\)\.$/m,
    );
  });

  it("is in the report's layout line of a Result that gives it, and absent from one that does not", () => {
    const [result] = loadResults(join(packageRoot(), 'test', 'fixtures', 'h100-balanced-1.json'));
    assert.ok(result);
    const plain = makeStyle({ isTTY: false } as NodeJS.WriteStream);
    const options = { columns: 10_000, verbose: false };
    assert.doesNotMatch(renderRunTable(result, plain, options), /hardware queue/);
    const one = renderRunTable({ ...result, pipeline: { ...result.pipeline, connections: 1 } }, plain, options);
    assert.match(one, /^layout: .*; 1 hardware queue \(pipeline\.connections\)$/m);
  });
});
