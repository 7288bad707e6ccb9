import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadConfigFile } from '../../config/load.js';
import { resolveKernels } from '../../kernels/resolve.js';
import { buildLayoutsPlan } from '../../plan/build.js';
import { builtinConfigsDir } from '../../paths.js';

// The collective's own plan pass (passes.alone): the planner times the step alone through it, at each distinct
// bucket count of the layouts, and never as a compute step alone on whole buffers.

const ddpPath = join(builtinConfigsDir(), 'ddp.yaml');

function plan(layouts: readonly { chunks: number; streams: number }[]) {
  const { config, locate } = loadConfigFile(ddpPath);
  return buildLayoutsPlan(config, resolveKernels(config, locate), layouts, ['depth-first']);
}

describe("the collective alone, the kind's own plan pass", { timeout: 60_000 }, () => {
  it('makes one schedule per distinct bucket count, in the order the layouts ask for them, each bucket one call', () => {
    const schedules = plan([
      { chunks: 8, streams: 3 },
      { chunks: 2, streams: 3 },
      { chunks: 8, streams: 2 },
    ]).schedules.filter((s) => s.role.kind === 'stage' && s.role.stage === 'collective');
    assert.deepEqual(
      schedules.map((s) => [
        s.id,
        s.description,
        s.verify,
        s.body.filter((op) => op.kind === 'collective').map((op) => ('chunk' in op ? op.chunk : null)),
      ]),
      [
        [
          'collective:allreduce:8-buckets',
          'collective allreduce alone in 8 buckets (its NCCL calls only)',
          false,
          [0, 1, 2, 3, 4, 5, 6, 7],
        ],
        [
          'collective:allreduce:2-buckets',
          'collective allreduce alone in 2 buckets (its NCCL calls only)',
          false,
          [0, 1],
        ],
      ],
    );
    assert.deepEqual(
      schedules.map((s) => s.ranges.length),
      [8, 2],
    );
  });

  it('says "1 bucket" for one, and leaves the step out of the compute steps timed alone on whole buffers', () => {
    const { schedules } = plan([{ chunks: 1, streams: 1 }]);
    const alone = schedules.filter((s) => s.role.kind === 'stage');
    assert.ok(alone.some((s) => s.description === 'collective allreduce alone in 1 bucket (its NCCL calls only)'));
    assert.equal(
      alone.some((s) => s.role.kind === 'stage' && s.role.stage === 'kernel' && s.role.kernel === 'allreduce'),
      false,
    );
    assert.ok(
      alone.some((s) => s.role.kind === 'stage' && s.role.stage === 'kernel'),
      'the kernels are still timed alone',
    );
  });
});
