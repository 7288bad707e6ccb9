import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { checkHostMemory } from '../../src/api/run.js';
import { configHash } from '../../src/config/hash.js';
import { loadConfigFile, parseConfigText } from '../../src/config/load.js';
import { fillPattern, windowSeed } from '../../src/data/patterns.js';
import { UsageError } from '../../src/errors.js';
import { loadResults, parseResult } from '../../src/result/load.js';
import type { ModeResult } from '../../src/model/mode.js';
import type { RunResult } from '../../src/result/schema.js';
import { hostMemoryRow } from '../../src/report/host-memory.js';
import { eventCostLines, limitingSide, toolboxLines } from '../../src/report/toolbox.js';
import { renderRunTable } from '../../src/report/exporters/table.js';
import { makeStyle } from '../../src/report/style.js';
import type { OverlapLayout } from '../../src/vocabulary.js';
import { modeId } from '../../src/vocabulary.js';
import { summarize } from '../../src/measure/stats.js';
import { makeResult, samplesAround } from '../helpers/results.js';

const BASE: OverlapLayout = { chunks: 64, streams: 4, order: 'depth-first', topology: 'chunk-per-stream' };

/** An overlapped mode of `result` re-cast with another layout and times. */
function variant(
  result: RunResult,
  layout: OverlapLayout,
  medianMs: number,
  issueMs: number,
  extra: Partial<ModeResult> = {},
): ModeResult {
  const template = result.modes.find((m) => m.role.kind === 'overlapped');
  assert.ok(template);
  const role = { kind: 'overlapped' as const, layout };
  const samplesMs = samplesAround(medianMs, 0);
  return {
    ...template,
    id: modeId(role),
    role,
    samplesMs,
    hostIssueMs: samplesAround(issueMs, 0),
    stats: summarize(samplesMs),
    analysis: template.analysis && { ...template.analysis, speedup: template.analysis.serialMs / medianMs },
    ...extra,
  };
}

describe('version 2 results before and after the toolbox', () => {
  it('the recorded H200 traced result still loads, with its timeline', () => {
    const [result] = loadResults(join('test', 'fixtures', 'h200-balanced-16-traced.json'));
    assert.ok(result?.timeline);
    assert.equal(result.timeline.reps[0]?.ops.length, 48);
    assert.equal(result.deviceMemory, undefined);
    assert.ok(result.modes.every((m) => m.graph === undefined));
  });

  it('a result with graph setup, device memory, host call times and new stream kinds round-trips', () => {
    const base = makeResult();
    const result: RunResult = {
      ...base,
      modes: [
        ...base.modes,
        variant(base, { ...BASE, issue: 'graph', slots: 4 }, 1, 0.01, {
          graph: { captureMs: 2.5, instantiateMs: 5.5 },
        }),
      ],
      deviceMemory: {
        budgetBytes: 2 ** 30,
        askedBytes: 2 ** 30,
        measuredBytes: 2 ** 30 + 2 ** 21,
        ring: { slots: 4, slotElements: 2 ** 25 },
      },
      timeline: {
        reps: [
          {
            mode: 'm',
            device: 0,
            totalMs: 1,
            issueMs: 0.1,
            streams: [{ id: 'legacy', flags: 'legacy-default', priority: null }],
            ops: [
              {
                mode: 'm',
                device: 0,
                stream: 'legacy',
                kind: 'host',
                chunk: 0,
                buffer: null,
                kernel: null,
                bytes: 0,
                startMs: 0.2,
                endMs: 0.5,
                issuedMs: 0.01,
                hostStartedMs: 0.25,
                hostEndedMs: 0.45,
              },
            ],
          },
        ],
      },
    };
    assert.deepEqual(parseResult(JSON.parse(JSON.stringify(result))), result);
  });
});

describe('config hashes', () => {
  it('stay what they were for the shipped configs that use none of the new fields, so baselines still pair', () => {
    const hash = (name: string) => configHash(loadConfigFile(join('configs', `${name}.yaml`)).config);
    assert.equal(hash('balanced'), 'b6038c2e320a4889');
    assert.equal(hash('async-overlap'), 'dcb439c297db0039');
    assert.notEqual(hash('graph-launches'), hash('balanced'));
  });
});

describe('host memory larger than the machine', () => {
  it('is a usage error naming the buffers line and both sizes, before anything is allocated', () => {
    const loaded = parseConfigText(
      'buffers:\n  x: { type: float32, size: 8GiB, role: in }\n  y: { type: float32, size: 8GiB, role: out }\n' +
        'kernels:\n  - { source: scale.cu, entry: scale, args: [{ buffer: x }, { buffer: y }, { chunk: elements }, { float32: 2 }] }\n',
      '/cfg/big.yaml',
    );
    assert.doesNotThrow(() => checkHostMemory(loaded, 32 * 2 ** 30));
    assert.throws(
      () => checkHostMemory(loaded, 12 * 2 ** 30),
      (error: unknown) =>
        error instanceof UsageError &&
        error.message ===
          "/cfg/big.yaml:1:1: the buffers need 16 GiB of host memory (x 8 GiB, y 8 GiB), more than this machine's 12 GiB.",
    );
  });
});

describe('the toolbox report lines', () => {
  it('says a graph replay won because host issue limited the stream-issued layout, and when the setup is repaid', () => {
    const base = makeResult();
    const result = {
      ...base,
      modes: [
        ...base.modes,
        variant(base, BASE, 4.1, 4.0),
        variant(base, { ...BASE, issue: 'graph' }, 0.4, 0.01, { graph: { captureMs: 2.5, instantiateMs: 5.5 } }),
      ],
    };
    assert.deepEqual(toolboxLines(result), [
      'graph replay: 0.400 ms vs 4.100 ms stream-issued (10.25×); capture 2.500 ms and instantiate 5.500 ms, once (repaid after 3 reps); ' +
        'stream-issued, the host took 4.000 ms to issue a rep of 4.100 ms: host issue limited it, and the graph removes that',
    ]);
  });

  it('says the GPU side limited a copy-bound layout that a graph cannot speed up', () => {
    const base = makeResult();
    const stream = variant(base, BASE, 3.0, 0.5);
    assert.deepEqual(limitingSide(stream), { side: 'GPU', issueMs: 0.5 });
  });

  it('names the op on the legacy default stream and the overlap it cost', () => {
    const base = makeResult();
    const serialMs = base.modes.find((m) => m.role.kind === 'serial')?.stats.median ?? 0;
    const timed = (layout: OverlapLayout, ms: number) => {
      const mode = variant(base, layout, ms, 0.3);
      return mode.analysis ? { ...mode, analysis: { ...mode.analysis, speedup: serialMs / ms } } : mode;
    };
    const result = {
      ...base,
      modes: [...base.modes, timed(BASE, 6), timed({ ...BASE, legacyOp: { chunk: 3, op: 'kernel' } }, 9)],
    };
    assert.deepEqual(toolboxLines(result), [
      `legacy default stream: chunk 3's kernel on cudaStreamLegacy made the depth-first layout 6.000 ms → 9.000 ms: 3.000 ms of overlap lost (${(300 / (serialMs - 6)).toFixed(0)}% of what overlap saved); ` +
        `speedup over serial ${(serialMs / 6).toFixed(2)}× → ${(serialMs / 9).toFixed(2)}×`,
    ]);
  });

  it('reads copy rates, speedup and the share of the possible saving for the host memory table', () => {
    const result = makeResult();
    const row = hostMemoryRow(result);
    assert.equal(row.hostMemory, 'pinned');
    const h2d = result.modes.find((m) => m.role.kind === 'stage' && m.role.stage === 'h2d');
    assert.ok(Math.abs((row.h2dGbPerSecond ?? 0) - 268435456 / ((h2d?.stats.median ?? 0) * 1e6)) < 1e-9);
    assert.ok(
      row.overlapAchieved !== null && row.overlapAchieved > 0 && row.overlapAchieved <= 1.2,
      String(row.overlapAchieved),
    );
  });
});

describe('filling buffers window by window', () => {
  it('fills the first window exactly as a whole-buffer fill, and continues a ramp across windows', () => {
    const whole = new Uint8Array(64);
    fillPattern(whole, 'float32', { kind: 'random', seed: 9 });
    const first = new Uint8Array(64);
    fillPattern(first, 'float32', windowSeed({ kind: 'random', seed: 9 }, 0, 16));
    assert.deepEqual(first, whole);
    assert.deepEqual(windowSeed({ kind: 'ramp', start: 1, step: 2 }, 3, 16), { kind: 'ramp', start: 97, step: 2 });
    assert.notDeepEqual(windowSeed({ kind: 'random', seed: 9 }, 1, 16), windowSeed({ kind: 'random', seed: 9 }, 2, 16));
  });
});

describe('event costs measured in every run', () => {
  it('reports the host µs per record and per wait from the issue-cost modes, counting only ops of that kind', () => {
    const result = makeResult({ hostIssueMs: [0.4, 0.5, 0.6] });
    const costs = result.modes.flatMap((m) =>
      m.role.kind === 'issue-cost' && m.issueCost ? [[m.role.op, m.issueCost.opsPerRep, m.issueCost.hostUsPerOp]] : [],
    );
    assert.deepEqual(costs, [
      ['record-timing', 200, 2.5],
      ['record-untimed', 200, 2.5],
      ['wait', 200, 2.5],
    ]);
    assert.deepEqual(eventCostLines(result), [
      'events cost the host (median µs per op, 200 a batch): record with timing 2.50 µs, record without timing 2.50 µs, cross-stream wait 2.50 µs',
    ]);
  });

  it('keeps the issue-cost modes out of the mode table and puts their line in the report', () => {
    const table = renderRunTable(
      makeResult({ hostIssueMs: [0.4, 0.5, 0.6] }),
      makeStyle({ isTTY: false } as NodeJS.WriteStream),
    );
    assert.doesNotMatch(table, /(record-timing|record-untimed|wait) issue cost/);
    assert.match(table, /events cost the host \(median µs per op, 200 a batch\): record with timing 2\.50 µs/);
  });

  it('says nothing about events for results recorded before runs measured them', () => {
    const result = makeResult();
    assert.deepEqual(
      eventCostLines({ ...result, modes: result.modes.filter((m) => m.role.kind !== 'issue-cost') }),
      [],
    );
  });
});
