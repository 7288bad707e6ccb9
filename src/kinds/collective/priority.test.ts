import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseConfigText } from '../../config/load.js';
import { parseSettingPath } from '../../config/settings.js';
import { UsageError } from '../../errors.js';
import { resolveKernels } from '../../kernels/resolve.js';
import { buildPlan } from '../../plan/build.js';
import { checkPriorities } from '../../plan/priority.js';
import type { Plan } from '../../plan/types.js';
import { builtinConfigsDir } from '../../paths.js';

// The communication stream's priority is one of the knobs a data-parallel sweep races (PyTorch gives NCCL a stream of
// its own whose priority it can raise): the collective's entry sets it, the plan states it on the comm stream of
// every schedule, and a number outside the device's range is refused naming the entry.

const ddp = readFileSync(join(builtinConfigsDir(), 'ddp.yaml'), 'utf8');

function plan(priority: string | null): Plan {
  const text =
    priority === null
      ? ddp
      : ddp.replace(
          'collective: { op: allreduce, buffer: grads }',
          `collective: { op: allreduce, buffer: grads, priority: ${priority} }`,
        );
  if (priority !== null) assert.notEqual(text, ddp, 'the collective entry was found');
  const { config, locate } = parseConfigText(text, join(builtinConfigsDir(), 'ddp.yaml'));
  return buildPlan(config, resolveKernels(config, locate));
}

const commStreams = (p: Plan) =>
  p.schedules.flatMap((s) =>
    s.streams.filter((st) => st.id.startsWith('comm')).map((st) => [s.role.kind, st.priority?.level ?? null]),
  );

describe("the communication stream's priority", () => {
  it('is the entry’s on the comm stream of every schedule that has one, and the device’s default where the entry gives none', () => {
    const high = commStreams(plan('high'));
    assert.ok(high.length >= 2, `comm streams: ${JSON.stringify(high)}`);
    assert.ok(high.every(([, level]) => level === 'high'));
    assert.ok(commStreams(plan(null)).every(([, level]) => level === null));
  });

  it('refuses a number outside the device’s range, naming the collective’s entry and the range', () => {
    const p = plan('3');
    assert.throws(
      () => checkPriorities(p, { least: 0, greatest: -5 }, 1),
      (error: unknown) =>
        error instanceof UsageError &&
        /kernels: allreduce collective\.priority: stream priority 3 is outside device 1's range, -5 \(highest\) to 0/.test(
          error.message,
        ),
    );
    assert.doesNotThrow(() => checkPriorities(plan('-2'), { least: 0, greatest: -5 }, 1));
  });

  it('is a config path a sweep can race with --set', () => {
    assert.deepEqual(parseSettingPath('kernels[1].collective.priority'), ['kernels', 1, 'collective', 'priority']);
  });
});
