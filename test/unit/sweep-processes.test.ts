import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Command } from 'commander';
import { settingCombinations, type SweepAxes } from '../../src/api/sweep.js';
import { loadConfigFile } from '../../src/config/load.js';
import { withSettings } from '../../src/config/settings.js';
import { addSweep } from '../../src/cli/device-commands.js';
import { OUTPUT_FLAGS } from '../../src/cli/outputs.js';
import { parseSetFlag } from '../../src/cli/sweep.js';
import type { SweepFlags } from '../../src/cli/sweep-flags.js';
import { asPartOf, connectionsParts, narrowedSets, partFailure, sweepArgs } from '../../src/cli/sweep-processes.js';
import { DeviceFailure, EnvironmentError, Interrupted, UsageError } from '../../src/errors.js';
import { packageRoot } from '../../src/paths.js';
import { loadResults } from '../../src/result/load.js';
import { runCli } from '../helpers/cli.js';

// CUDA reads CUDA_DEVICE_MAX_CONNECTIONS once a process, so a sweep whose settings ask for several values of
// pipeline.connections runs each value's settings in a cuda-pipe process of its own (src/cli/sweep-processes.ts).

const DEADLINE = { timeout: 60_000 };
const balanced = join(packageRoot(), 'configs', 'balanced.yaml');
const axes: SweepAxes = {
  streams: [2, 4],
  chunks: [8],
  orders: ['depth-first'],
  sets: [
    { path: 'hostMemory', values: ['pinned', 'pageable'] },
    { path: 'pipeline.connections', values: [1, 8] },
  ],
};
const combos = settingCombinations(axes.sets);
const configs = combos.map((combo) => withSettings(loadConfigFile(balanced), combo));
const flags: SweepFlags = { set: [], verify: true, wait: 'poll' };

describe('a sweep over several values of pipeline.connections', () => {
  it('splits its settings by value, each value in the order it first comes, and keeps one value in one process', () => {
    assert.deepEqual(connectionsParts(configs), [
      { connections: 1, settings: [0, 2] },
      { connections: 8, settings: [1, 3] },
    ]);
    assert.equal(connectionsParts(configs.filter((c) => c.config.pipeline.connections === 8)), null);
    assert.equal(connectionsParts([loadConfigFile(balanced)]), null);
  });

  it('gives each process the same sweep with pipeline.connections narrowed to its value, its Results to a file', () => {
    const given = {
      ...flags,
      streams: [2, 4],
      chunks: [8, 16],
      order: ['depth-first', 'breadth-first'],
      maxTime: 12,
      exhaustive: true,
      devices: [0, 1],
      gate: true,
      verify: false,
      wait: 'thread',
      ncclDir: '/shared',
      json: 'ignored.json',
      md: 'ignored.md',
    } as SweepFlags;
    assert.deepEqual(sweepArgs('/cfg/ddp.yaml', given, narrowedSets(axes.sets, 8), '/tmp/p/results.json'), [
      'sweep',
      '/cfg/ddp.yaml',
      '--streams',
      '2,4',
      '--chunks',
      '8,16',
      '--order',
      'depth-first,breadth-first',
      '--set',
      'hostMemory=pinned,pageable',
      '--set',
      'pipeline.connections=8',
      '--max-time',
      '12',
      '--exhaustive',
      '--devices',
      '0,1',
      '--gate',
      '--no-verify',
      '--wait',
      'thread',
      '--nccl-dir',
      '/shared',
      '--json',
      '/tmp/p/results.json',
    ]);
    assert.deepEqual(sweepArgs('/c.yaml', { ...flags, device: 3, devices: 'all' }, [], '/r.json'), [
      'sweep',
      '/c.yaml',
      '--device',
      '3',
      '--devices',
      'all',
      '--wait',
      'poll',
      '--json',
      '/r.json',
    ]);
  });

  it("gives each process every flag of sweep that changes what is measured: its command line parses back to the user's", () => {
    const program = new Command();
    addSweep(program);
    const sweep = program.commands.find((c) => c.name() === 'sweep');
    assert.ok(sweep);
    const given = [
      ...['--streams', '2,4', '--chunks', '8,16', '--order', 'depth-first,breadth-first'],
      ...['--set', 'hostMemory=pinned,pageable', '--max-time', '12', '--exhaustive', '--device', '1'],
      ...['--devices', '0,1', '--gate', '--no-verify', '--wait', 'thread', '--nccl-dir', '/shared'],
      ...OUTPUT_FLAGS.flatMap((flag) => [`--${flag}`, `user.${flag}`]),
    ];
    // Every option sweep has is given above but the dry run: one added to sweep must be added here, and to sweepArgs.
    assert.deepEqual(
      sweep.options.map((o) => o.long).filter((long) => long !== '--dry-run' && !given.includes(long ?? '')),
      [],
    );
    sweep.parseOptions(given);
    const user = sweep.opts() as SweepFlags;
    const part = new Command();
    addSweep(part);
    const child = part.commands.find((c) => c.name() === 'sweep');
    assert.ok(child);
    const results = join(mkdtempSync(join(tmpdir(), 'sweep-part-')), 'results.json');
    const args = sweepArgs('/cfg/c.yaml', user, user.set.map(parseSetFlag), results);
    assert.deepEqual(args.slice(0, 2), ['sweep', '/cfg/c.yaml']);
    child.parseOptions(args.slice(2));
    const outputsAside = (flags: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(flags).filter(([key]) => !(OUTPUT_FLAGS as string[]).includes(key)));
    assert.deepEqual(outputsAside(child.opts()), outputsAside(user as unknown as Record<string, unknown>));
    // Its Results go to the file this process reads, and no other output is written.
    assert.deepEqual(
      OUTPUT_FLAGS.filter((flag) => child.opts()[flag] !== undefined),
      ['json'],
    );
    assert.equal(child.opts().json, results);
  });

  it("hands a process's Results back as the whole sweep's: every axis with all its values, and a note of its process", () => {
    const [recorded] = loadResults(join(packageRoot(), 'test', 'fixtures', 'h200-sweep-balanced.json'));
    assert.ok(recorded?.sweep);
    const part = {
      ...recorded,
      sweep: {
        ...recorded.sweep,
        axes: [...recorded.sweep.axes, { name: 'pipeline.connections', values: [8] }],
        settings: { 'pipeline.connections': 8 },
      },
    };
    const [whole] = asPartOf(
      [part],
      { connections: 8, settings: [1] },
      {
        ...axes,
        sets: [{ path: 'pipeline.connections', values: [1, 8] }],
      },
    );
    assert.deepEqual(whole?.sweep?.axes.at(-1), { name: 'pipeline.connections', values: [1, 8] });
    assert.deepEqual(whole?.sweep?.axes.slice(0, -1), recorded.sweep.axes, 'the layout axes as the process swept them');
    assert.equal(
      whole?.notes.at(-1),
      'pipeline.connections takes 2 values in this sweep, and CUDA reads CUDA_DEVICE_MAX_CONNECTIONS once a process: this setting ran in a cuda-pipe process of its own, with pipeline.connections 8.',
    );
  });

  it("ends as a failed process did: its exit code's class, its own message above", () => {
    const part = { connections: 1, settings: [0] };
    assert.ok(partFailure(part, 130, null) instanceof Interrupted);
    assert.ok(partFailure(part, 2, null) instanceof UsageError);
    assert.ok(partFailure(part, 3, null) instanceof EnvironmentError);
    assert.ok(partFailure(part, 4, null) instanceof DeviceFailure);
    const crashed = partFailure(part, null, 'SIGKILL');
    assert.equal(crashed.constructor, Error);
    assert.equal(
      crashed.message,
      'The settings with pipeline.connections 1 ran in a cuda-pipe process of their own, which was ended by SIGKILL: its message is above.',
    );
  });

  it(
    'starts the first process, which here finds no GPU: exit 3, with its own message and the one naming it',
    DEADLINE,
    () => {
      const run = runCli(
        ['sweep', balanced, '--chunks', '4', '--streams', '2', '--set', 'pipeline.connections=1,8'],
        {},
        { timeoutMs: 50_000 },
      );
      assert.equal(run.code, 3, run.stderr);
      assert.match(run.stderr, /pipeline\.connections takes 2 values, and CUDA reads CUDA_DEVICE_MAX_CONNECTIONS once/);
      assert.match(
        run.stderr,
        /The settings with pipeline\.connections 1 ran in a cuda-pipe process of their own, which exited 3/,
      );
      // The process's own message: commander took the arguments given to it, and the sweep looked for a GPU.
      assert.match(run.stderr, /^cuda-pipe: No CUDA driver/m);
      assert.doesNotMatch(run.stderr, /pipeline\.connections 8 ran/, 'the second value never started');
    },
  );
});
