import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderSvg, SVG_LAYOUT, svgLayout, xOf } from '../../src/report/svg.js';
import { stage as kindStage } from '../../src/kinds/index.js';
import { STAGE_COLOURS, STAGES } from '../../src/report/timeline-common.js';
import { syntheticRunResult } from '../helpers/synthetic-timeline.js';
import { timelineFixtures } from '../helpers/timeline-fixtures.js';

interface Bar {
  kind: string;
  device: number;
  stream: string;
  x: number;
  y: number;
  width: number;
  fill: string;
  tip: string;
}

function bars(svg: string): Bar[] {
  const pattern =
    /<rect class="op (\w+)" data-device="(\d+)" data-stream="([^"]+)" x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="\d+" fill="(#[0-9a-f]{6})"[^>]*><title>([^<]*)<\/title>/g;
  return [...svg.matchAll(pattern)].map((m) => ({
    kind: m[1]!,
    device: Number(m[2]),
    stream: m[3]!,
    x: Number(m[4]),
    y: Number(m[5]),
    width: Number(m[6]),
    fill: m[7]!,
    tip: m[8]!,
  }));
}

for (const { name, result } of timelineFixtures()) {
  describe(`SVG timeline of ${name}`, () => {
    const svg = renderSvg(result);
    const layout = svgLayout(result);
    const reps = result.timeline!.reps;

    it('renders the same bytes every time', () => {
      assert.equal(renderSvg(result), svg);
    });

    it('draws one bar per op in its stage’s colour', () => {
      const drawn = bars(svg);
      assert.equal(
        drawn.length,
        reps.reduce((n, r) => n + r.ops.length, 0),
      );
      for (const bar of drawn) assert.equal(bar.fill, STAGE_COLOURS[bar.kind as keyof typeof STAGE_COLOURS]);
    });

    it('puts each bar in the band of its own stream’s row', () => {
      const drawn = bars(svg);
      let i = 0;
      for (const panel of layout.panels) {
        for (const row of panel.rows) {
          for (const op of row.ops) {
            const bar = drawn[i++]!;
            assert.deepEqual([bar.device, bar.stream, bar.kind], [row.device, row.stream, op.kind]);
            assert.equal(bar.y, row.top);
            assert.ok(Math.abs(bar.x - xOf(panel, op.startMs)) < 0.01);
          }
        }
      }
      assert.equal(i, drawn.length);
    });

    it('gives every traced mode a panel with a labelled row per stream', () => {
      const modes = new Set(reps.map((r) => r.mode));
      assert.equal(svg.match(/<g class="panel"/g)?.length, modes.size);
      assert.equal(
        layout.panels.reduce((n, p) => n + p.rows.length, 0),
        reps.reduce((n, r) => n + r.streams.length, 0),
      );
      for (const row of layout.panels.flatMap((p) => p.rows))
        assert.ok(svg.includes(`>${row.label}</text>`), row.label);
    });

    it('has a title with config and devices, a ms axis and a legend of every stage its reps ran (peer copies, GEMMs and collectives only where there are any)', () => {
      assert.ok(
        svg.includes(
          `<text x="16" y="32" font-size="16" font-weight="bold" fill="#222222">cuda-pipe timeline: ${result.config.name}</text>`,
        ),
      );
      for (const d of result.devices) assert.ok(svg.includes(`${d.name} (GPU ${d.index})`));
      assert.equal(svg.match(/>0 ms<\/text>/g)?.length, layout.panels.length);
      const ran = new Set(result.timeline?.reps.flatMap((r) => r.ops.map((op) => op.kind)));
      for (const stage of STAGES)
        assert.equal(
          svg.includes(`<rect class="legend ${stage}"`),
          kindStage(stage).look.always || ran.has(stage),
          stage,
        );
      assert.equal(layout.height, Number(/height="([\d.]+)"/.exec(svg)![1]));
    });
  });
}

describe('SVG timeline', () => {
  const result = syntheticRunResult();

  it('lays the synthetic run out as a serial row and four overlapped rows on their own scales', () => {
    const layout = svgLayout(result);
    assert.deepEqual(
      layout.panels.map((p) => p.rows.map((r) => r.label)),
      [['s0'], ['s0', 's1', 's2', 's3']],
    );
    const [serial, overlapped] = layout.panels;
    assert.equal(serial!.group.spanMs, 12.4916);
    assert.equal(xOf(overlapped!, overlapped!.group.spanMs), SVG_LAYOUT.width - SVG_LAYOUT.padding);
    const rows = overlapped!.rows;
    assert.equal(rows[1]!.top - rows[0]!.top, SVG_LAYOUT.rowHeight + SVG_LAYOUT.rowGap);
  });

  it('writes an op’s name on a bar wide enough for it, its letter on a narrower one', () => {
    const svg = renderSvg(result);
    for (const label of ['H2D input', 'kernel fma', 'D2H output'])
      assert.ok(svg.includes(`fill="#ffffff">${label}</text>`), label);
    assert.ok((svg.match(/fill="#ffffff">H<\/text>/g)?.length ?? 0) >= 16);
  });

  it('puts the op’s timing, size and rate in its tooltip', () => {
    const tip = bars(renderSvg(result)).find((b) => b.tip.startsWith('H2D input #0'))!.tip;
    assert.equal(tip, 'H2D input #0 · stream s0 · 0.006–0.306 ms (0.300 ms) · 8 MiB · 27.96 GB/s');
  });

  it('escapes text taken from the Result', () => {
    const svg = renderSvg({ ...result, config: { ...result.config, name: 'a<b & "c"' } });
    assert.ok(svg.includes('cuda-pipe timeline: a&lt;b &amp; &quot;c&quot;'));
    assert.ok(!svg.includes('a<b'));
  });

  it('widens to the width asked for', () => {
    const layout = svgLayout(result, { width: 1400 });
    assert.equal(layout.panels[0]!.plotRight, 1400 - SVG_LAYOUT.padding);
    assert.match(renderSvg(result, { width: 1400 }), /^<svg [^>]*width="1400"/);
  });
});
