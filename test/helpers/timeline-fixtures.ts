import type { RunResult } from '../../src/result/schema.js';
import { join } from 'node:path';
import { loadResults } from '../../src/result/load.js';
import { syntheticRunResult } from './synthetic-timeline.js';

/** A Result with a timeline that every renderer test runs on. */
export interface TimelineFixture {
  readonly name: string;
  readonly result: RunResult;
}

// Renderer tests loop over these and assert what must hold for any traced Result. A recorded GPU result joins the
// list by loading it here (loadResults + the v2 migration), with no change to the tests.
let cached: TimelineFixture[] | undefined;

export function timelineFixtures(): TimelineFixture[] {
  cached ??= [
    { name: 'synthetic H200, 16 chunks over 4 streams', result: syntheticRunResult() },
    { name: 'synthetic pair of H200s', result: syntheticRunResult({ devices: 2 }) },
    { name: 'recorded H200, balanced, 16 chunks over 4 streams', result: recorded('h200-balanced-16-traced.json') },
    { name: "recorded H200, balanced with the model's parts", result: recorded('h200-balanced-16-model.json') },
    { name: 'recorded H200 sweep of balanced', result: recorded('h200-sweep-balanced.json') },
  ];
  return cached;
}

function recorded(file: string): RunResult {
  const [result] = loadResults(join('test', 'fixtures', file));
  if (!result) throw new Error(`${file} holds no result`);
  return result;
}
