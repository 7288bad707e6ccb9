import assert from 'node:assert/strict';
import { UsageError } from '../../src/errors.js';

/** The UsageError (exit 2) that `load` throws; fails the test when it throws anything else, or nothing. */
export function usageRejection(load: () => unknown): UsageError {
  try {
    load();
  } catch (error) {
    assert.ok(
      error instanceof UsageError,
      `expected a UsageError, got ${error instanceof Error ? error.stack : String(error)}`,
    );
    assert.equal(error.exitCode, 2);
    return error;
  }
  assert.fail('expected the input to be rejected');
}
