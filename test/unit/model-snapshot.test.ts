import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { modelSnapshot } from '../helpers/model-snapshot.js';

describe('the overlap model against its recorded numbers', () => {
  it('gives every recorded Result and every corner of the parts the bound, ideal, floor and gap it gave before', () => {
    const golden = JSON.parse(readFileSync('test/golden/model-bounds.json', 'utf8')) as { recorded: Record<string, unknown>; grid: Record<string, unknown> };
    const now = modelSnapshot() as typeof golden;
    assert.ok(Object.keys(golden.recorded).length >= 20, 'the recorded Results have overlapped modes');
    assert.deepEqual(Object.keys(now.recorded), Object.keys(golden.recorded));
    for (const [key, value] of Object.entries(golden.recorded)) assert.deepEqual(now.recorded[key], value, key);
    for (const [key, value] of Object.entries(golden.grid)) assert.deepEqual(now.grid[key], value, key);
  });
});
