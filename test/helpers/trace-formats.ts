import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { analysisJsonSchema, DeviceAnalysisSchema } from '../../src/analysis/document.js';
import { UsageError } from '../../src/errors.js';
import { traceFormat, traceFormats } from '../../src/traces/formats/index.js';
import { parseTraceDocument, parseTraceFile } from '../../src/traces/parse.js';

// What every trace format of the list must satisfy, read from the list alone: a test file runs it over the product's
// formats, and another over them with a fixture format registered (test/fixtures/formats/), unchanged.

interface SchemaNode {
  readonly properties?: Record<string, SchemaNode>;
  readonly items?: SchemaNode;
  readonly enum?: readonly string[];
}

const device = (format: string) => ({
  file: 'a.json',
  format,
  device: 0,
  rank: null,
  steps: [],
  stepMs: 1,
  exposedCopyMs: 0,
  exposedCommMs: 0,
  idleMs: 0,
  hostWaitMs: 0,
  kernelWaitMs: 0,
  syncWaitMs: 0,
  otherIdleMs: 0,
  floorMs: 1,
  efficiency: 1,
  overlap: { h2dWithKernel: null, d2hWithKernel: null, h2dWithD2h: null, copyWithKernel: null },
  rates: { h2dGbPerSecond: null, d2hGbPerSecond: null, source: 'trace', file: null },
});

export function describeTraceFormats(): void {
  describe('every trace format of the list', () => {
    const formats = traceFormats();

    it('has an id of its own, in lower case, that finds it in the list', { timeout: 5_000 }, () => {
      assert.equal(new Set(formats.map((f) => f.id)).size, formats.length);
      for (const format of formats) {
        assert.match(format.id, /^[a-z][a-z0-9-]*$/);
        assert.equal(traceFormat(format.id), format);
      }
      assert.throws(() => traceFormat('no-such-format'), /no trace format "no-such-format"/);
    });

    it('is an id the analysis document accepts and its JSON Schema lists; no other id is', { timeout: 5_000 }, () => {
      const schema = analysisJsonSchema() as SchemaNode;
      const listed = schema.properties?.devices?.items?.properties?.format?.enum;
      assert.deepEqual(
        listed,
        formats.map((f) => f.id),
      );
      for (const format of formats)
        assert.equal(DeviceAnalysisSchema.safeParse(device(format.id)).success, true, format.id);
      assert.equal(DeviceAnalysisSchema.safeParse(device('no-such-format')).success, false);
    });

    it('has words for messages and findings, and a clock', { timeout: 5_000 }, () => {
      for (const { id, words, clock } of formats) {
        for (const text of [words.name, words.lacks, words.defaultStream]) assert.ok(text.length > 3, `${id}: ${text}`);
        assert.match(words.name, /^an? /, id);
        assert.ok(clock === 'wall' || clock === 'own', id);
      }
    });

    it('names every Chrome format, and what each looks for, where a file is of none', { timeout: 10_000 }, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'cuda-pipe-formats-'));
      const path = join(dir, 'none.json');
      writeFileSync(path, JSON.stringify({ traceEvents: [{ ph: 'X', cat: 'nothing', name: 'n', ts: 1, dur: 1 }] }));
      const error = await parseTraceFile(path).then(
        () => null,
        (e: unknown) => e,
      );
      assert.ok(error instanceof UsageError);
      for (const format of formats.filter((f) => f.container === 'chrome')) {
        assert.ok(error.message.includes(format.words.name), `${format.id}: ${error.message}`);
        assert.ok(error.message.includes(format.words.lacks), `${format.id}: ${error.message}`);
      }
      assert.throws(
        () => parseTraceDocument('none.json', { traceEvents: [] }),
        (e: unknown) => e instanceof UsageError && /it is neither /.test(e.message),
      );
    });

    it('keeps, as a Chrome format, only events that carry a field it reads', { timeout: 5_000 }, () => {
      for (const format of formats) {
        if (format.container !== 'chrome') continue;
        assert.ok(format.reads.event.length > 0, format.id);
        assert.equal(format.keeps({ index: 0, event: {}, args: {} }), false, format.id);
      }
    });
  });
}
