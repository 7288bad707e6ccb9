import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { modelSnapshot } from '../helpers/model-snapshot.js';

/** The snapshot as the golden file holds it: a line per key, so that a diff names the layouts whose numbers moved. */
const snapshotText = (doc: Record<string, Record<string, unknown>>) =>
  `{${Object.entries(doc)
    .map(
      ([section, keys]) =>
        `"${section}": {\n${Object.entries(keys)
          .map(([key, value]) => `  ${JSON.stringify(key)}: ${JSON.stringify(value)}`)
          .join(',\n')}\n }`,
    )
    .join(',\n')}}\n`;

describe('the overlap model against its recorded numbers', () => {
  it('gives every recorded Result and every corner of the parts the bound, ideal, floor and gap it gave before', () => {
    const now = modelSnapshot() as { recorded: Record<string, unknown>; grid: Record<string, unknown> };
    // To accept a deliberate change of the model: UPDATE_GOLDEN=1 on this test, then review the diff, key by key.
    if (process.env.UPDATE_GOLDEN) writeFileSync('test/golden/model-bounds.json', snapshotText(now));
    const golden = JSON.parse(readFileSync('test/golden/model-bounds.json', 'utf8')) as typeof now;
    assert.ok(Object.keys(golden.recorded).length >= 20, 'the recorded Results have overlapped modes');
    assert.deepEqual(Object.keys(now.recorded), Object.keys(golden.recorded));
    for (const [key, value] of Object.entries(golden.recorded)) assert.deepEqual(now.recorded[key], value, key);
    for (const [key, value] of Object.entries(golden.grid)) assert.deepEqual(now.grid[key], value, key);
  });
});
