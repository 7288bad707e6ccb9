import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ANALYSIS_SCHEMA_ID,
  ANALYSIS_VERSION,
  type AnalysisDocument,
  AnalysisDocumentSchema,
  analysisJsonSchema,
  DeviceAnalysisSchema,
  FINDING_CODES,
} from '../../src/analysis/document.js';
import { traceFormats } from '../../src/traces/formats/index.js';

// The analysis document's schema (src/analysis/document.ts): what `analyze --json` may write and what
// `schema --analysis` prints.

const DEADLINE = { timeout: 5_000 };

const share = { h2dWithKernel: null, d2hWithKernel: 0.5, h2dWithD2h: null, copyWithKernel: 0.25 };
const device = (format: string) => ({
  file: 'rank0.json',
  format,
  device: 0,
  rank: 0,
  steps: [],
  stepMs: 10,
  exposedCopyMs: 1,
  exposedCommMs: 2,
  idleMs: 0.5,
  hostWaitMs: 0.1,
  kernelWaitMs: 0.2,
  syncWaitMs: 0.1,
  otherIdleMs: 0.1,
  floorMs: 8,
  efficiency: 0.8,
  overlap: share,
  rates: { h2dGbPerSecond: 50, d2hGbPerSecond: null, source: 'trace' as const, file: null },
});

describe('the analysis document schema', () => {
  it(
    "takes a device whose format is one of the list's, and refuses another, saying where the list is",
    DEADLINE,
    () => {
      for (const { id } of traceFormats()) assert.equal(DeviceAnalysisSchema.safeParse(device(id)).success, true, id);
      const refused = DeviceAnalysisSchema.safeParse(device('perfetto'));
      assert.equal(refused.success, false);
      assert.deepEqual(
        refused.error?.issues.map((i) => [i.path.join('.'), i.message]),
        [['format', 'not a trace format of src/traces/formats/index.ts']],
      );
    },
  );

  it('prints as JSON Schema with its id, its version in the title, and the formats as an enum', DEADLINE, () => {
    const schema = analysisJsonSchema() as {
      $id: string;
      title: string;
      properties: Record<string, { const?: unknown; items?: { properties: Record<string, { enum?: unknown }> } }>;
    };
    assert.equal(schema.$id, 'https://cuda-pipe.dev/analysis.schema.json');
    assert.equal(schema.title, `cuda-pipe analysis, version ${ANALYSIS_VERSION}`);
    assert.equal(schema.properties.schema?.const, ANALYSIS_SCHEMA_ID);
    assert.equal(schema.properties.version?.const, ANALYSIS_VERSION);
    assert.deepEqual(
      schema.properties.devices?.items?.properties.format?.enum,
      traceFormats().map((f) => f.id),
    );
    assert.deepEqual(schema.properties.findings?.items?.properties.code?.enum, [...FINDING_CODES]);
  });

  it('only the format is an enum of the formats: the device number and the file are not', DEADLINE, () => {
    const schema = analysisJsonSchema() as {
      properties: { devices: { items: { properties: Record<string, { enum?: unknown; type?: unknown }> } } };
    };
    const props = schema.properties.devices.items.properties;
    assert.equal(props.file?.enum, undefined);
    assert.equal(props.file?.type, 'string');
    assert.equal(props.device?.enum, undefined);
  });
});

describe('a whole analysis document reads back as written', () => {
  const who = { file: 'rank0.json', rank: 0, device: 0 };
  const doc: AnalysisDocument = {
    schema: ANALYSIS_SCHEMA_ID,
    version: ANALYSIS_VERSION,
    tool: { name: 'cuda-pipe', version: '1.2.3' },
    devices: [
      {
        ...device('kineto'),
        overlap: { ...share, commWithCompute: 0.75 },
        steps: [
          {
            name: 'ProfilerStep#3',
            startMs: 100,
            ms: 10,
            busy: { kernels: 0.8, h2d: 0.2, d2h: 0.1, memsets: 0.01, communication: 0.3 },
            overlap: { ...share, commWithCompute: null },
            copyMs: 3,
            exposedCopyMs: 1,
            commMs: 3,
            exposedCommMs: 2,
            idleMs: 0.5,
            hostWaitMs: 0.1,
            kernelWaitMs: 0.2,
            syncWaitMs: 0.1,
            otherIdleMs: 0.1,
            floor: { ms: 8, bound: 'h2d', kernelMs: 7, h2dMs: 8, d2hMs: null, opCostMs: 0.01 },
            efficiency: 0.8,
          },
        ],
      },
    ],
    findings: [
      {
        code: 'exposed-communication',
        file: 'rank0.json',
        device: 0,
        rank: 0,
        ms: 1.5,
        steps: 1,
        label: 'DistributedDataParallel.forward',
        message: 'start the all-reduces earlier',
      },
    ],
    notes: ['a note'],
    collectives: {
      kind: 'measured',
      participants: [who, { ...who, file: 'rank1.json', rank: 1 }],
      count: 1,
      skewMs: { median: 0.5, max: 0.5 },
      lastArriving: [
        { ...who, count: 0, share: 0, lateMs: { median: 0, max: 0 } },
        { ...who, file: 'rank1.json', rank: 1, count: 1, share: 1, lateMs: { median: 0.5, max: 0.5 } },
      ],
      mostOftenLast: { who: [{ ...who, file: 'rank1.json', rank: 1 }], count: 1, of: 1 },
      calls: [
        { step: 'ProfilerStep#3', name: 'ncclKernel_AllReduce', order: 0, startsMs: [4, 4.5], skewMs: 0.5, last: 1 },
      ],
    },
    verdicts: [
      {
        device: 0,
        rank: 0,
        baselineFile: 'a.json',
        candidateFile: 'b.json',
        baselineMs: 10,
        candidateMs: 9,
        steps: [20, 20],
        change: -0.1,
        interval: { estimate: -0.1, low: -0.12, high: -0.08 },
        verdict: 'faster',
        reason: 'the whole interval is below the band',
      },
    ],
    verdict: 'faster',
    verdictRule: { band: 0.02, confidence: 0.9, interval: 'hodges-lehmann' },
  };

  it('keeps every field of every part', DEADLINE, () => {
    assert.deepEqual(AnalysisDocumentSchema.parse(structuredClone(doc)), doc);
  });

  it('takes collectives that could not be paired, with their reason', DEADLINE, () => {
    const unknown = { ...doc, collectives: { kind: 'unknown' as const, participants: [who], reason: 'do not pair' } };
    assert.deepEqual(AnalysisDocumentSchema.parse(structuredClone(unknown)), unknown);
  });

  it(
    "refuses a floor bound by anything but kernels or a copy direction, and a verdict's steps not a pair",
    DEADLINE,
    () => {
      const step = doc.devices[0]!.steps[0]!;
      const badFloor = {
        ...doc,
        devices: [{ ...doc.devices[0]!, steps: [{ ...step, floor: { ...step.floor, bound: 'memsets' } }] }],
      };
      assert.equal(AnalysisDocumentSchema.safeParse(badFloor).success, false);
      const badSteps = { ...doc, verdicts: [{ ...doc.verdicts![0]!, steps: [20] }] };
      assert.equal(AnalysisDocumentSchema.safeParse(badSteps).success, false);
    },
  );
});
