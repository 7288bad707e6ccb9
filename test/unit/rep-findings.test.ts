import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { CONFIG_CHANGE, repFindings } from '../../src/analysis/rep-findings.js';
import { packageRoot } from '../../src/paths.js';
import { type RunResult, RunResultSchema } from '../../src/result/schema.js';

// `run`'s findings on a recorded H200 Result's traced rep (balanced, 16 chunks on 4 streams, each stream copying in,
// computing and copying out). Its copies share streams with its kernels; whether that costs anything depends on
// whether the link's rates are known, which come from the device's pinned copies only.

const path = join(packageRoot(), 'test', 'fixtures', 'h200-balanced-16-traced.json');
const recorded: RunResult = RunResultSchema.parse(JSON.parse(readFileSync(path, 'utf8')));
const rep = recorded.timeline?.reps[0];
assert.ok(rep, 'the fixture has a traced rep');
const traced = rep;

type HostMemory = RunResult['buffers'][number]['hostMemory'];
const withMemory = (input: HostMemory, output: HostMemory): RunResult => ({
  ...recorded,
  buffers: recorded.buffers.map((b) => ({ ...b, hostMemory: b.name === 'input' ? input : output })),
});
/** The cost the rep's copies on its compute streams are credited with where the link's rates are unknown, ms. */
const COPY_ON_COMPUTE_MS = 1.4476;

type Traced = Pick<RunResult, 'buffers' | 'timeline'>;
/** The recorded Result without its timeline: no traced copies to read the link's rates from. */
const untraced: Traced = { buffers: recorded.buffers, timeline: null };
/** Each finding's code and what it saves, ms to 4 places. */
function summary(result: Traced, floorMs?: number | null): [string, number][] {
  return repFindings(result, traced, floorMs).map((f) => [f.code, Number(f.ms.toFixed(4))]);
}

describe("run's findings of a traced rep (analysis/rep-findings.ts)", { timeout: 60_000 }, () => {
  it('finds nothing against a link whose rates the pinned copies give', () => {
    assert.equal(recorded.buffers.length, 2);
    assert.deepEqual(summary(withMemory('pinned', 'pinned')), []);
    assert.deepEqual(summary(withMemory('pageable', 'pinned')), [], "the output's pinned copies give the rates");
  });

  it('credits the copies on compute streams where no copy is pinned, naming the rep, its device and no rank', () => {
    assert.deepEqual(summary(withMemory('pageable', 'pageable')), [['copy-on-compute-stream', COPY_ON_COMPUTE_MS]]);
    const mixed = withMemory('pageable', 'device-only');
    assert.deepEqual(summary(mixed), [], "each buffer's own memory: output's not pinned");
    const [finding] = repFindings(withMemory('pageable', 'pageable'), traced);
    assert.ok(finding);
    assert.deepEqual([finding.file, finding.device, finding.rank], [traced.mode, traced.device, null]);
  });

  it("reads the rates from the traced reps of the rep's own device only, and none without a timeline", () => {
    assert.deepEqual(summary(untraced), [['copy-on-compute-stream', COPY_ON_COMPUTE_MS]]);
    const onOtherDevice = { buffers: recorded.buffers, timeline: { reps: [{ ...traced, device: traced.device + 1 }] } };
    assert.deepEqual(summary(onOtherDevice), [['copy-on-compute-stream', COPY_ON_COMPUTE_MS]]);
    assert.deepEqual(summary({ ...recorded, timeline: { reps: [traced] } }), []);
  });

  it("credits no more than the rep takes above the mode's bound, and ignores a bound under the rep's own floor", () => {
    assert.deepEqual(summary(untraced, traced.totalMs - 0.5), [['copy-on-compute-stream', 0.5]]);
    assert.deepEqual(summary(untraced, traced.totalMs - 1), [['copy-on-compute-stream', 1]]);
    assert.deepEqual(summary(untraced, 1), [['copy-on-compute-stream', COPY_ON_COMPUTE_MS]]);
    assert.deepEqual(summary(untraced, null), [['copy-on-compute-stream', COPY_ON_COMPUTE_MS]]);
  });

  it('finds nothing in a rep without ops', () => {
    assert.deepEqual(repFindings(untraced, { ...traced, ops: [] }), []);
  });

  it("reads each copy's memory from its own buffer: another listed first, or none listed, does not stand in", () => {
    const scratch = { ...recorded.buffers[0], name: 'scratch', hostMemory: 'pageable' } as RunResult['buffers'][number];
    assert.deepEqual(summary({ ...recorded, buffers: [scratch, ...recorded.buffers] }), []);
    assert.deepEqual(
      summary({ buffers: [], timeline: recorded.timeline }),
      [],
      'unknown memory is not read as pageable',
    );
    assert.deepEqual(summary({ buffers: [], timeline: null }), [['copy-on-compute-stream', COPY_ON_COMPUTE_MS]]);
  });

  it("names for every finding the config change that removes its cause, in the config reference's words", () => {
    assert.deepEqual(Object.keys(CONFIG_CHANGE).sort(), [
      'copy-on-compute-stream',
      'default-stream',
      'exposed-communication',
      'host-bound',
      'host-sync',
      'pageable-copy',
      'serialised-copies',
    ]);
    assert.match(CONFIG_CHANGE['pageable-copy'], /hostMemory: pinned/);
    assert.match(CONFIG_CHANGE['default-stream'], /streamKind: non-blocking/);
    assert.match(CONFIG_CHANGE['copy-on-compute-stream'], /topology: stage-per-stream/);
    assert.match(CONFIG_CHANGE['exposed-communication'], /pipeline\.chunks/);
    assert.match(CONFIG_CHANGE['host-bound'], /--mode graph/);
  });
});
