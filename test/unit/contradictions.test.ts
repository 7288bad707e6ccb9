import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { configDevices, planConfig } from '../../src/api/run.js';
import { loadConfigFile } from '../../src/config/load.js';
import { EnvironmentError } from '../../src/errors.js';
import { concludeResult } from '../../src/measure/conclusions.js';
import { packageRoot } from '../../src/paths.js';
import { renderPlan } from '../../src/report/plan.js';
import { renderRunMarkdown } from '../../src/report/exporters/markdown.js';
import { renderRunJson } from '../../src/report/exporters/json.js';
import { renderRunTable } from '../../src/report/exporters/table.js';
import { renderHtml } from '../../src/report/html.js';
import { makeStyle } from '../../src/report/style.js';
import { loadResults } from '../../src/result/load.js';

// The facts, each on one line: --verbose's report, too wide to wrap (the width is tested in render-width-run).
const everything = { columns: 10_000, verbose: true };

// Issue 26's contradictions: lines of one report, or of two renderers of one Result, that said different things.
// Each is checked on a recorded Result, in every renderer that shows it.

const plain = makeStyle({ isTTY: false } as NodeJS.WriteStream);
const measured = (dir: string, file: string) => join(packageRoot(), 'docs', 'measurements', dir, file);

describe('verification of a config with no output buffer', () => {
  // gemm.yaml's products write scratch buffers only; the H200 file was written when such a run said "passed".
  const [gemm] = loadResults(measured('2026-11-24-h200-gemm-seeded', 'gemm.json')).map(concludeResult);
  assert.ok(gemm);

  it('says nothing was compared in the table, the Markdown, the HTML and the JSON, and never "passed"', () => {
    assert.equal(gemm.verification.status, 'nothing-compared');
    const table = renderRunTable(gemm, plain, everything);
    assert.match(
      table,
      /^verification: nothing compared \(no output buffer; each mode ran once with checked ops, and none faulted\)$/m,
    );
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

describe('a host stage on workers', () => {
  // host-stage.yaml on the H200: checksum after each D2H on 8 workers, with the layout without the stage beside it.
  // As `report` prints it: its conclusions drawn again from its modes.
  const [hostStage] = loadResults(measured('2026-11-24-h200-final/workers', 'host-stage.json')).map(concludeResult);
  assert.ok(hostStage);
  const table = renderRunTable(hostStage, plain, everything);

  it('says its modes are timed to the last CPU task as well as by CUDA events', () => {
    const timing = /^timing: .*$/m.exec(table)?.[0] ?? '';
    assert.match(
      timing,
      /^timing: CUDA events, and for a mode with a host stage the later of its end event and its last CPU task's end \(host clock\), /,
    );
    assert.match(
      renderRunMarkdown(hostStage),
      /CUDA events, and for a mode with a host stage the later of its end event/,
    );
  });

  it('says the CPU-stage term of the bound comes from the layout itself, and only for the layout with the stage', () => {
    const floors = table.match(/^ *floor: .*$/gm) ?? [];
    assert.equal(floors.length, 2);
    assert.match(
      floors[0] ?? '',
      /its floor 2\.534 ms \(every GPU part at its fastest rep, measured apart; the CPU stage from this layout's own tasks\)/,
    );
    assert.match(floors[1] ?? '', /its floor 1\.459 ms \(every part at its fastest rep, none from this layout\)/);
  });

  it('never says the model leaves out a host stage whose CPU term it has', () => {
    assert.doesNotMatch(table, /host stage checksum, which the model leaves out/);
    assert.match(
      table,
      /the host stage checksum's hand-overs and contention, which the CPU-stage term leaves out \(it counts the tasks' own time\)/,
    );
  });

  it('leads the HTML page with the stage against no stage, as the terminal and the Markdown lead', () => {
    const lead = 'with the host stage checksum against without it, 16×4 depth-first: 0.28× (1.513 ms → 5.436 ms)';
    assert.ok(table.indexOf(lead) < table.indexOf('speedup over serial'));
    const html = renderHtml(hostStage);
    const headlines = [...html.matchAll(/<p class="headline">(.*?)<\/p>/g)].map((m) => m[1]);
    assert.equal(headlines[0], lead);
    assert.match(headlines[1] ?? '', /speedup 4\.20×/);
  });

  it('leaves the timing line of a run without a host stage as it was', () => {
    const [balanced] = loadResults(join(packageRoot(), 'test', 'fixtures', 'h200-balanced-16-traced.json'));
    assert.ok(balanced);
    assert.match(renderRunTable(balanced, plain), /^timing: CUDA events, GPU time/m);
  });
});

describe('the dry-run plan of every shipped config', () => {
  const configs = join(packageRoot(), 'configs');
  const files = readdirSync(configs).filter((f) => f.endsWith('.yaml'));
  const noDriver = () => {
    throw new EnvironmentError('no driver');
  };

  it("gives each mode as many kernel launches as its streams' lines add up to (op-cost had 201 against 200)", () => {
    const disagreements: string[] = [];
    for (const file of files) {
      const loaded = loadConfigFile(join(configs, file));
      const { plan } = planConfig(loaded, { gate: false, devices: configDevices(loaded, noDriver) });
      for (const block of renderPlan(plan)
        .split('\n\n')
        .filter((b) => b.startsWith('mode '))) {
        const [head = '', ...streams] = block.split('\n').filter((l) => !l.startsWith('Every op'));
        const mode = Number(/(\d+) kernel launch/.exec(head)?.[1]);
        const summed = streams.reduce((sum, line) => sum + Number(/(\d+) kernel launch/.exec(line)?.[1] ?? 0), 0);
        if (mode !== summed) disagreements.push(`${file} ${head.split(':')[0]}: ${mode} against ${summed}`);
      }
    }
    assert.ok(files.length >= 20, `found ${files.length} configs`);
    assert.deepEqual(disagreements, []);
  });
});
