import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ANALYSIS_SCHEMA_ID,
  ANALYSIS_VERSION,
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
  rates: { h2dGbPerSecond: 50, d2hGbPerSecond: null, source: 'trace', file: null },
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
