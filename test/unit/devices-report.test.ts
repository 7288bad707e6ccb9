import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { join } from 'node:path';
import { compareResults } from '../../src/compare/verdict.js';
import { renderRunTable } from '../../src/report/exporters/table.js';
import { markdownExporter } from '../../src/report/exporters/markdown.js';
import { renderHtml } from '../../src/report/html.js';
import { makeStyle } from '../../src/report/style.js';
import { loadResults } from '../../src/result/load.js';
import { runCli } from '../helpers/cli.js';

// The facts, each on one line: --verbose's report, too wide to wrap (the width is tested in render-width-run).
const everything = { columns: 10_000, verbose: true };

// Results recorded on the 2-GPU H200 host (2026-11-23, docs/measurements/2026-11-23-h200x2/): balanced split across
// both GPUs with --gate, and the cross-device config.
const fixtures = join(import.meta.dirname, '..', '..', '..', 'test', 'fixtures');
const recorded = (name: string) => {
  const [result] = loadResults(join(fixtures, name));
  assert.ok(result, name);
  return result;
};
const split = recorded('h200x2-balanced-split.json');
const cross = recorded('h200x2-cross-device.json');
const plain = makeStyle({ isTTY: false } as NodeJS.WriteStream, {});

describe('reports of runs over two GPUs, from recorded results', () => {
  it('loads both, with the scaling and cross-device sections the run derived', () => {
    assert.equal(split.scaling?.limit, 'memory system');
    assert.equal(split.scaling?.speedup.toFixed(2), '1.62');
    assert.deepEqual(
      split.scaling?.perDevice.map((d) => d.device),
      [0, 1],
    );
    assert.equal(cross.crossDevice?.path, 'peer');
    assert.deepEqual(cross.peers, [{ from: 0, to: 1, path: 'peer' }]);
  });

  it('names each GPU in the table, labels the modes that span them, and prints the figures and the limit', () => {
    const table = renderRunTable(split, plain, everything);
    assert.match(table, /GPU 0 NVIDIA H200 \(sm_90.*\); GPU 1 NVIDIA H200/);
    assert.match(table, /│ split over GPUs 0, 1 at once, 16×4 each +│ 3\.630 ms/);
    assert.match(table, /│ GPU 1's share alone, 16×4 +│ 2\.998 ms/);
    assert.match(table, /│ H2D \+ D2H at once on GPUs 0, 1 together +│/);
    assert.match(
      table,
      /^ {2}all 2 at once: 3\.630 ms, 147\.9 GB\/s together: 1\.62× one device, 81% scaling efficiency$/m,
    );
    assert.match(
      table,
      /^ {2}links, each share both ways at once: alone GPU 0 98\.5 GB\/s, GPU 1 98\.5 GB\/s; all at once 151\.7 GB\/s, 1\.67× one device's pipeline rate/m,
    );
    assert.match(
      table,
      /^ {2}limit: memory system: each device's share took up to 20% longer with all 2 at once than alone/m,
    );
    assert.match(table, /verification: passed/);
  });

  it('puts the same lines in the Markdown and the HTML report', () => {
    const md = markdownExporter.render([split], plain);
    assert.match(md, /^- several GPUs \(0, 1\), the input split across them, 16 chunks × 4 streams on each:$/m);
    assert.match(md, /^ {2}- all 2 at once: 3\.630 ms/m);
    const html = renderHtml(cross);
    assert.match(
      html,
      /<section id="devices">[\s\S]*across GPUs 0 → 1, each chunk handed over by a peer copy \(peer access, device to device\)/,
    );
    assert.match(html, /peer copy GPU 0 → 1 alone/);
  });

  it("prints the cross-device pipeline against serial and against one GPU, with the peer copy's rate", () => {
    const table = renderRunTable(cross, plain, everything);
    assert.match(
      table,
      /^ {2}3\.004 ms: 1\.70× serial \(5\.109 ms\), 0\.99× the same layout on GPU 0 alone \(2\.986 ms\)$/m,
    );
    assert.match(table, /^ {2}the handed-over buffers copied whole, alone: 128 MiB in 0\.346 ms, 387\.6 GB\/s$/m);
  });

  it('gates on the split together and the cross-device pipeline, not on each share alone', () => {
    const comparison = compareResults([split], [split]);
    const gating = (id: string) => comparison.pairs.find((p) => p.mode === id)?.gating;
    assert.equal(gating('split:16x4:depth-first:d0+d1'), true);
    assert.equal(gating('split:16x4:depth-first:d0+d1:alone-d1'), false);
    assert.equal(compareResults([cross], [cross]).pairs.find((p) => p.role.kind === 'cross-device')?.gating, true);
  });

  it('redraws a recorded run with `report`', () => {
    const { code, stdout } = runCli(['report', join(fixtures, 'h200x2-cross-device.json')]);
    assert.equal(code, 0);
    assert.match(stdout, /across GPUs 0 → 1/);
  });
});
