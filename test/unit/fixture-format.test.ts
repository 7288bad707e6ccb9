import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { analyzeTraces } from '../../src/analysis/analyze.js';
import { AnalysisDocumentSchema } from '../../src/analysis/document.js';
import { packageRoot } from '../../src/paths.js';
import { registerTraceFormat, traceFormats } from '../../src/traces/formats/index.js';
import { parseTraceFile } from '../../src/traces/parse.js';
import { fixtureFormat } from '../fixtures/formats/fixture/index.js';
import { describeTraceFormats } from '../helpers/trace-formats.js';

// A trace format is one folder and one row: a format that exists only here, registered by this test, is read,
// analysed and named by the product without a line of it changed, and passes the list's contract unchanged.

registerTraceFormat(fixtureFormat);
const sample = join(packageRoot(), 'test', 'fixtures', 'formats', 'fixture', 'sample.json');

describe('a trace format added by a test', () => {
  it('is one row more of the list, after the product’s own', { timeout: 5_000 }, () => {
    assert.equal(traceFormats().at(-1), fixtureFormat);
    assert.throws(() => registerTraceFormat(fixtureFormat), /already in the list/);
  });

  it('reads its own file through the one Chrome reader, which keeps the fields it declares', {
    timeout: 10_000,
  }, async () => {
    const trace = await parseTraceFile(sample);
    assert.equal(trace.format, 'fixture');
    assert.equal(trace.gpu.length, 8);
    assert.deepEqual(
      trace.gpu.slice(1, 4).map((e) => [e.name, e.stream, e.start, e.end, e.defaultStream]),
      [
        ['gemm', '5', 0, 0.6, false],
        ['fill', '0', 0.6, 1, true],
        ['gemm', '3', 1, 1.6, false],
      ],
    );
  });

  it('is analysed by the core into a document its schema accepts', { timeout: 10_000 }, async () => {
    const document = analyzeTraces([await parseTraceFile(sample)], { rates: null, toolVersion: 'test' });
    AnalysisDocumentSchema.parse(document);
    assert.equal(document.devices[0]?.format, 'fixture');
    assert.equal(document.devices[0]?.stepMs, 2.6);
    assert.ok(document.notes.includes(`${sample}: a fixture trace has no host calls`));
  });
});

describeTraceFormats();
