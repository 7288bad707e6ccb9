import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UsageError } from '../../src/errors.js';
import { checkPriorities, resolvePriority } from '../../src/plan/priority.js';
import type { Plan } from '../../src/plan/types.js';
import type { PriorityLevel } from '../../src/vocabulary.js';

// Stream priorities against a device's range (CUDA's usual one: 0 lowest, -5 highest).

const range = { least: 0, greatest: -5 };
// Only the streams of a plan's schedules are read.
const planAt = (level: PriorityLevel) =>
  ({
    schedules: [
      {
        streams: [
          { id: 's0', kind: 'non-blocking' as const, device: 0 },
          { id: 's1', kind: 'non-blocking' as const, device: 0, priority: { level, where: '/cfg/p.yaml:9:3' } },
        ],
      },
    ],
  }) as unknown as Pick<Plan, 'schedules'>;

describe('stream priorities', () => {
  it("resolves high and low to the ends of the device's range and keeps a number as given", () => {
    assert.deepEqual(
      [
        resolvePriority({ level: 'high', where: '' }, range),
        resolvePriority({ level: 'low', where: '' }, range),
        resolvePriority({ level: -2, where: '' }, range),
      ],
      [-5, 0, -2],
    );
  });

  it('accepts both ends of the range and high or low', () => {
    for (const level of [-5, 0, -3, 'high', 'low'] as const)
      assert.doesNotThrow(() => checkPriorities(planAt(level), range, 1), String(level));
  });

  it("refuses a number past either end, naming the config's place, the device and its range, with what to do", () => {
    for (const level of [-6, 1]) {
      assert.throws(
        () => checkPriorities(planAt(level), range, 1),
        (error: unknown) => {
          assert.ok(error instanceof UsageError);
          assert.equal(
            error.message,
            `/cfg/p.yaml:9:3: stream priority ${level} is outside device 1's range, -5 (highest) to 0 (lowest).`,
          );
          assert.equal(error.hint, 'Use a number in that range, or high or low.');
          return true;
        },
      );
    }
  });
});
