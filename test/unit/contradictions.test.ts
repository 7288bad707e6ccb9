import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { packageRoot } from '../../src/paths.js';
import { renderRunMarkdown } from '../../src/report/exporters/markdown.js';
import { renderRunJson } from '../../src/report/exporters/json.js';
import { renderRunTable } from '../../src/report/exporters/table.js';
import { renderHtml } from '../../src/report/html.js';
import { makeStyle } from '../../src/report/style.js';
import { loadResults } from '../../src/result/load.js';

// Issue 26's contradictions: lines of one report, or of two renderers of one Result, that said different things.
// Each is checked on a recorded Result, in every renderer that shows it.

const plain = makeStyle({ isTTY: false } as NodeJS.WriteStream);
const measured = (dir: string, file: string) => join(packageRoot(), 'docs', 'measurements', dir, file);

describe('verification of a config with no output buffer', () => {
  // gemm.yaml's products write scratch buffers only; the H200 file was written when such a run said "passed".
  const [gemm] = loadResults(measured('2026-11-24-h200-gemm-seeded', 'gemm.json'));
  assert.ok(gemm);

  it('says nothing was compared in the table, the Markdown, the HTML and the JSON, and never "passed"', () => {
    assert.equal(gemm.verification.status, 'nothing-compared');
    const table = renderRunTable(gemm, plain);
    assert.match(table, /^verification: nothing compared \(no output buffer; each mode ran once with checked ops, and none faulted\)$/m);
    assert.doesNotMatch(table, /byte for byte|verification: passed/);
    assert.match(renderRunMarkdown(gemm), /; verification \*\*nothing compared \(no output buffer\)\*\*\./);
    assert.match(renderHtml(gemm), /Verification nothing compared \(no output buffer\)\./);
    assert.equal(JSON.parse(renderRunJson([gemm])).verification.status, 'nothing-compared');
  });

  it('keeps "passed" for a recorded run that compared outputs', () => {
    const [balanced] = loadResults(join(packageRoot(), 'test', 'fixtures', 'h200-balanced-16-traced.json'));
    assert.equal(balanced?.verification.status, 'passed');
  });
});
