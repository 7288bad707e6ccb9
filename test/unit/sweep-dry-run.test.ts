import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runCli } from '../helpers/cli.js';

// No GPU here: a dry run must plan every setting without one, as `run --dry-run` does.
describe('sweep --dry-run', () => {
  it("previews balanced's layouts by stream count (a layout with more streams than chunks is not raced) and the budget", () => {
    const run = runCli(['sweep', '--dry-run']);
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.split('\n');
    assert.equal(lines[0], 'Sweep of balanced on device 0: 22 layouts');
    assert.equal(lines[1], '  1 stream, depth-first: 1, 2, 4, 8, 16, 32, 64 chunks');
    assert.equal(lines[4], '  8 streams, depth-first: 8, 16, 32, 64 chunks');
    assert.match(run.stdout, /the\s+kernels chunked as each layout \(22\)/);
    assert.match(run.stdout, /raced for at most 40 s a setting \(--max-time\), 40 s for 1 setting/);
    assert.ok(
      lines.every((line) => line.length <= 100),
      'every line fits 100 columns',
    );
  });

  it('plans each setting of --set apart and multiplies the budget by the settings', () => {
    const run = runCli([
      'sweep',
      '--dry-run',
      '--streams',
      '2,4',
      '--chunks',
      '8,16',
      '--order',
      'depth-first,breadth-first',
      '--set',
      'kernels[0].args[3].int32=530,1060',
      '--max-time',
      '5',
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^Setting 1 of 2: kernels\[0\]\.args\[3\]\.int32=530 on device 0: 8 layouts$/m);
    assert.match(run.stdout, /^Setting 2 of 2: kernels\[0\]\.args\[3\]\.int32=1060 on device 0: 8 layouts$/m);
    assert.match(run.stdout, /^ {2}4 streams, breadth-first: 8, 16 chunks$/m);
    assert.match(run.stdout, /16 layouts in all, raced for at most 5 s a setting \(--max-time\), 10 s for 2 settings/);
  });

  it("names a graph config's replayed layouts apart from those issued op by op", () => {
    const run = runCli(['sweep', 'configs/graph-launches.yaml', '--dry-run', '--streams', '2', '--chunks', '4,8']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^ {2}2 streams, depth-first: 4, 8 chunks$/m);
    assert.match(run.stdout, /^ {2}2 streams, depth-first, replayed as a CUDA graph: 4, 8 chunks$/m);
  });

  it('checks every setting as the sweep would: a path outside the config is exit 2', () => {
    const run = runCli(['sweep', '--dry-run', '--set', 'pipeline.nonsense=1,2']);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /pipeline\.nonsense/);
  });

  it('refuses output flags, since a dry run writes no Result', () => {
    const run = runCli(['sweep', '--dry-run', '--json', '-', '--gab', 'x.json']);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /--json, --gab cannot go with --dry-run/);
    assert.equal(run.stdout, '');
  });
});
